"""Session checkpoints (Memzoi's ``session`` destination): explicit task continuity in the runtime plane.

A checkpoint is a row of ``checkpoint`` in the ledger database, never a file and never a git record (Memzoi's
lifecycle document: "Runtime local/session writers … Session candidates become checkpoints and require ``type:
episode`` plus ``lane: session``; neither route writes a Git record"). It stores only what the caller gave: the
``--note`` text or the ``--from-file`` content (Memzoi "does not ingest raw transcripts"). A note or task in which a
credential or personal-identifier detector fires is refused with nothing stored, as for ``memzoi local``.

Creating one is a ledgered change without files (``checkpoint_add``, or part of a ``session_end`` change): it is
visible exactly while that change is ``applied``, so ``memzoi undo`` hides it again. ``continue`` and ``close``
(:mod:`.checkpoint_transitions`) update the row in one database transaction.

Rules (Memzoi's lifecycle document, "Runtime local and session continuity"; retention, reference §6):

* retention facts are the session lane's: ``started_at`` (creation), ``last_continued_at``, ``closed_at``; the
  boundary is :func:`memzoi.judge.retention.retention_boundary` (24 h after the last continuation or the start, 7 days
  after the start, or the close);
* **continue** is accepted only while the checkpoint is open and ``now`` is before the boundary: at the boundary
  itself it is ``query_only`` and refused (``checkpoint_expired``); a closed one is ``checkpoint_closed``;
* **close** is terminal and idempotent: closing a closed checkpoint returns it unchanged;
* ``--successor-of`` names a closed or expired checkpoint (an open, current one is ``predecessor_open``) and the
  new checkpoint records its lineage: ``predecessor_id``, ``generation`` (predecessor's + 1), ``root_id``.

**Versions** (Memzoi's exact semantics are not in the reference; this is this project's definition): a checkpoint's
``version`` is 1 when created and grows by one with each accepted continuation and with its close (an idempotent
repeated close does not change it). The **checkpoint set version** of a project is the number of checkpoints ever
created in it (it never decreases, also not by undo). ``--expected-version`` is the checkpoint's version for
``continue``/``close`` and the set version for ``add``; a mismatch is ``version_conflict``. Operation ids:
:mod:`.operations`.
"""

from __future__ import annotations

import json
import os
import sqlite3
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

import blake3

from ..base.clock import utc_now
from ..judge.retention import evaluate_retention, format_instant, retention_boundary
from ..ledger import ChangePlan, Ledger, Refusal, run_change
from ..ledger.reading import read_ledger
from . import operations as ops
from .local import CREDENTIAL_CODES, content_codes
from .propose import check_scannable
from .readiness import never_stored

OPERATION = "checkpoint_add"
#: Checkpoints whose creating change is applied (undoing or failing the change hides them).
_VISIBLE = "SELECT k.* FROM checkpoint k JOIN change c ON c.id = k.change_id WHERE c.status = 'applied'"


@dataclass
class Checkpoint:
    """A session checkpoint (runtime plane only). Timestamps are UTC RFC 3339 with ``Z``."""

    id: str
    task: str
    title: str
    body: str
    source_kind: str
    status: str
    version: int
    started_at: str
    last_continued_at: str | None
    closed_at: str | None
    predecessor_id: str | None
    generation: int
    root_id: str
    created_at: str
    updated_at: str
    change_id: str

    def facts(self) -> dict[str, str]:
        """The session lane's retention facts (reference §6), omitted when unset."""
        out = {"started_at": self.started_at, "last_continued_at": self.last_continued_at, "closed_at": self.closed_at}
        return {k: v for k, v in out.items() if v}

    def boundary(self) -> datetime:
        """The effective retention boundary (the session lane always has one)."""
        found = retention_boundary("session", self.facts())
        assert found is not None
        return found[0]

    def is_current(self, now: datetime) -> bool:
        """Open and before its boundary: the only state in which it may be continued."""
        return self.status == "open" and now < self.boundary()

    def to_json(self, now: datetime | None = None) -> dict[str, Any]:
        """Memzoi's runtime record keys where they apply (``type: episode``, ``lane: session``, ``destination:
        session``, ``retention``, ``lineage``, ``origin``), plus ``status``, ``version``, ``provenance: runtime``
        and the retention decision at ``now``."""
        at = now or utc_now()
        decision = evaluate_retention("session", self.facts(), at)
        route = (
            "checkpoint_successor"
            if self.predecessor_id
            else ("session_end" if self.source_kind == "session_end" else "checkpoint_create")
        )
        return {
            "id": self.id,
            "type": "episode",
            "lane": "session",
            "destination": "session",
            "provenance": "runtime",
            "status": self.status,
            "version": self.version,
            "task": self.task,
            "title": self.title,
            "body": self.body,
            "source_kind": self.source_kind,
            "retention": self.facts(),
            "retention_decision": {
                "state": decision.state,
                "effective_boundary": decision.boundary,
                "reason": decision.reason,
                "evaluated_at": format_instant(at),
            },
            "current": self.is_current(at),
            "lineage": {"predecessor_id": self.predecessor_id, "generation": self.generation, "root_id": self.root_id},
            "origin": {"origin_key": f"checkpoint:{self.id}", "route": route},
            "created_at": self.created_at,
            "updated_at": self.updated_at,
            "change_id": self.change_id,
        }


def _row(r: sqlite3.Row) -> Checkpoint:
    lineage = json.loads(r["lineage_json"])
    return Checkpoint(
        id=r["id"],
        task=r["task"],
        title=r["title"],
        body=r["body"],
        source_kind=r["source_kind"],
        status=r["status"],
        version=r["version"],
        started_at=r["started_at"],
        last_continued_at=r["last_continued_at"],
        closed_at=r["closed_at"],
        predecessor_id=r["predecessor_id"],
        generation=r["generation"],
        root_id=lineage.get("root_id") or r["id"],
        created_at=r["created_at"],
        updated_at=r["updated_at"],
        change_id=r["change_id"],
    )


def set_version(conn: sqlite3.Connection) -> int:
    """The checkpoint set version: how many checkpoints were ever created in the project (module docstring)."""
    return int(conn.execute("SELECT coalesce(max(seq), 0) FROM checkpoint").fetchone()[0])


def visible(conn: sqlite3.Connection, checkpoint_id: str) -> Checkpoint | None:
    """The visible checkpoint ``checkpoint_id``, or ``None``."""
    r = conn.execute(_VISIBLE + " AND k.id = ?", (checkpoint_id,)).fetchone()
    return None if r is None else _row(r)


def check_content(task: str, body: str) -> None:
    """Refuse an empty task or body, text the detectors cannot check whole, or a credential/personal-data finding
    (codes only, never the text). Raises :class:`Refusal`."""
    if not task.strip():
        raise Refusal("invalid_value", "--task must not be empty")
    if not body.strip():
        raise Refusal("empty_body", "the checkpoint note is empty: give --note TEXT or --from-file FILE with text")
    from .session_input import encodable  # noqa: PLC0415 lazy: start-up

    if not (encodable(task) and encodable(body)):
        raise Refusal(
            "invalid_encoding",
            "the task or note holds text that is not valid UTF-8 (a lone surrogate); "
            "re-save the file as UTF-8 or fix the argument",
        )
    check_scannable(task + "\n" + body, "the checkpoint")
    codes = content_codes(task, body, among=CREDENTIAL_CODES)
    if codes:
        raise Refusal(
            codes[0],
            never_stored("the checkpoint", codes, "remove it and retry"),
        )


def new_values(
    task: str,
    title: str,
    body: str,
    source_kind: str,
    now: datetime,
    predecessor: Checkpoint | None = None,
    salt: str = "",
) -> dict[str, Any]:
    """The row values of a new checkpoint (id ``ckpt-<12 hex of BLAKE3 over task, body, time and salt>``)."""
    stamp = format_instant(now)
    h = blake3.blake3(f"{task}\x00{body}\x00{stamp}\x00{salt}".encode("utf-8", "surrogatepass")).hexdigest()
    cid = f"ckpt-{h[:12]}"
    lineage = {"predecessor_id": None, "generation": 1, "root_id": cid}
    if predecessor is not None:
        lineage = {
            "predecessor_id": predecessor.id,
            "generation": predecessor.generation + 1,
            "root_id": predecessor.root_id,
        }
    return {
        "id": cid,
        "task": task.strip(),
        "title": title.strip(),
        "body": body.strip(),
        "source_kind": source_kind,
        "started_at": stamp,
        "lineage": lineage,
    }


def insert(conn: sqlite3.Connection, change_id: str, values: dict[str, Any]) -> None:
    """Insert the checkpoint ``values`` (from :func:`new_values`) created by change ``change_id``."""
    lin = values["lineage"]
    conn.execute(
        "INSERT INTO checkpoint (id, change_id, task, title, body, source_kind, status, version, started_at,"
        " predecessor_id, generation, lineage_json, created_at, updated_at) VALUES (?,?,?,?,?,?,'open',1,?,?,?,?,?,?)",
        (
            values["id"],
            change_id,
            values["task"],
            values["title"],
            values["body"],
            values["source_kind"],
            values["started_at"],
            lin["predecessor_id"],
            lin["generation"],
            json.dumps(lin, sort_keys=True),
            values["started_at"],
            values["started_at"],
        ),
    )


def _predecessor(conn: sqlite3.Connection, pid: str, now: datetime) -> Checkpoint:
    pred = visible(conn, pid)
    if pred is None:
        raise Refusal("checkpoint_not_found", f"no checkpoint `{pid}` to succeed; see `memzoi checkpoint list`")
    if pred.is_current(now):
        raise Refusal(
            "predecessor_open",
            f"checkpoint `{pid}` is still open and current: continue it "
            f"(`memzoi checkpoint continue {pid}`) or close it before naming it as --successor-of",
        )
    return pred


def add_checkpoint(
    project_root: str | os.PathLike[str],
    *,
    task: str,
    body: str,
    source_kind: str = "note",
    successor_of: str | None = None,
    operation_id: str | None = None,
    expected_version: int | None = None,
    actor: str,
    source: str = "cli",
    now: datetime | None = None,
) -> dict[str, Any]:
    """Create a checkpoint from the explicit ``body`` (``source_kind`` ``note`` or ``file``) as one ledgered
    change. Returns ``{"operation", "operation_id", "replayed", "change_id", "checkpoint_set_version",
    "checkpoint"}``. Raises :class:`Refusal` (content, ``checkpoint_not_found``, ``predecessor_open``,
    ``version_conflict``, ``operation_id_conflict``) with nothing stored."""
    ops.check_operation_id(operation_id)
    check_content(task, body)
    at = now or utc_now()
    fp = ops.fingerprint(
        OPERATION,
        {
            "task": task,
            "body": body,
            "source_kind": source_kind,
            "successor_of": successor_of,
            "expected_version": expected_version,
        },
    )
    captured: dict[str, Any] = {}

    def plan(root: Path) -> ChangePlan:
        with Ledger.for_project(root).connect() as conn:
            replay = ops.recorded(conn, operation_id, OPERATION, fp)
            if replay is not None:
                raise ops.Replay(replay)
            version = set_version(conn)
            ops.check_version(expected_version, version, "the checkpoint set")
            pred = _predecessor(conn, successor_of, at) if successor_of else None
        values = new_values(task, task, body, source_kind, at, pred, salt=str(version))

        def effects(conn: sqlite3.Connection, change_id: str) -> None:
            insert(conn, change_id, values)
            cp = visible_any(conn, values["id"])
            out = {
                "operation": OPERATION,
                "operation_id": operation_id,
                "replayed": False,
                "change_id": change_id,
                "checkpoint_set_version": set_version(conn),
                "checkpoint": cp.to_json(at),
            }
            ops.record(conn, operation_id, OPERATION, fp, out, change_id)
            captured.update(out)

        return ChangePlan(
            OPERATION,
            [],
            summary=f"add checkpoint {values['id']}",
            details={"checkpoint_id": values["id"], "predecessor_id": successor_of},
            db_effects=effects,
        )

    try:
        run_change(project_root, plan, actor=actor, source=source)
    except ops.Replay as replay:
        return replay.outcome
    return captured


def visible_any(conn: sqlite3.Connection, checkpoint_id: str) -> Checkpoint:
    """The checkpoint row ``checkpoint_id`` whatever its change's status (inside the creating transaction)."""
    return _row(conn.execute("SELECT * FROM checkpoint WHERE id = ?", (checkpoint_id,)).fetchone())


def _ledger(project_root: str | os.PathLike[str]) -> Ledger | None:
    ledger = Ledger.for_project(Path(project_root).resolve(), create=False)
    return ledger if ledger.exists else None


def current_version(project_root: str | os.PathLike[str]) -> int:
    """The checkpoint set version of the project (:func:`set_version`), read-only: ``0`` while it has no ledger, which
    is never created here (a preview plans the version an apply would check, and writes nothing)."""
    ledger = _ledger(project_root)
    if ledger is None:
        return 0
    return read_ledger(ledger, set_version)


def list_checkpoints(project_root: str | os.PathLike[str]) -> tuple[int, list[Checkpoint]]:
    """The checkpoint set version and the visible checkpoints, newest first (never creates a ledger)."""
    ledger = _ledger(project_root)
    if ledger is None:
        return 0, []
    return read_ledger(
        ledger, lambda conn: (set_version(conn), [_row(r) for r in conn.execute(_VISIBLE + " ORDER BY k.seq DESC")])
    )


def get_checkpoint(project_root: str | os.PathLike[str], checkpoint_id: str) -> Checkpoint | None:
    """One visible checkpoint by id, or ``None``."""
    ledger = _ledger(project_root)
    if ledger is None:
        return None
    return read_ledger(ledger, lambda conn: visible(conn, checkpoint_id))
