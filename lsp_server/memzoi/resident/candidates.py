"""Durable resident-memory candidates: the ``memory_candidate`` table (reference ``zuno-memory.md`` §1, §8).

A candidate is a proposed ``add``/``replace``/``remove`` of one entry of a resident file. Its row is also the
write-ahead intent of the change: ``applying``/``undoing`` and both entry snapshots are committed before the file
is replaced. Rows live in ``memzoi-lsp-resident.db`` under ``${MEMZOI_HOME:-~/.memzoi}`` (directory 0700, database
0600), never in a repository; one database for every project, because the global file is shared by every
checkout (Zuno keeps one database too and lists candidates by ``target_path``).

Columns follow Zuno's, with our names for the source kinds (``foreground_tool`` is Zuno's ``tool``) and a few
additions: ``actor`` (who proposed), ``decided_by``/``decision_reason`` (approval or rejection), ``undone_by``,
and ``recovers``/``recovery_mode`` for an explicit recovery of an ``uncertain`` candidate (action ``recover``),
which settles that candidate when it is applied, like the git-plane ledger's recoveries; ``layout`` (schema
version 2) is the :class:`~.encoding.Layout` of the file the candidate wrote (line ending, byte order mark,
surrounding whitespace), recorded with the snapshots so that an undo, or a later write, puts back the file's own
layout where its bytes no longer show it (a CR file emptied to one line, say); ``original_content`` (schema
version 3) keeps the proposed content when a reviewer edited it before approving (Zuno ``service.edit``). Writes are ``BEGIN
IMMEDIATE`` transactions; transitions are guarded by the status they start from (§1 state machine). The table
and its migrations: :mod:`.candidate_schema`.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, TypeVar

from ..base.dbread import read_database
from ..base.runtime import RESIDENT_DB, memzoi_home, private_file
from ..base.runtime_errors import guard, runtime_error
from ..base.vocabulary import RESIDENT_SOURCES
from ..ledger import Refusal
from ..ledger.store import immediate as transaction
from .candidate_schema import USER_VERSION, ensure_schema
from .store import runtime_root

T = TypeVar("T")
DB_NAME = RESIDENT_DB
#: Where a candidate comes from (read as ``candidates.SOURCES``).
SOURCES = RESIDENT_SOURCES
STATUSES = ("pending", "applying", "undoing", "applied", "rejected", "undone", "failed", "uncertain")
#: Statuses a candidate can be applied, edited or rejected from (Zuno ``begin_apply`` guard).
OPEN = ("pending", "failed")
_ORDER = (
    "CASE status WHEN 'pending' THEN 0 WHEN 'applying' THEN 1 WHEN 'undoing' THEN 2 WHEN 'uncertain' THEN 3 ELSE 4 END"
)


def now_ms() -> int:
    """Milliseconds since the epoch (Zuno's timestamps)."""
    return time.time_ns() // 1_000_000


def new_id() -> str:
    """``mem_`` plus a hyphen-less UUIDv4 (Zuno ``service.rs`` ``propose``)."""
    return "mem_" + uuid.uuid4().hex


@dataclass
class Candidate:
    """One row (see the module docstring); ``before``/``after`` are entry lists, ``None`` until applying starts;
    times are milliseconds since the epoch."""

    id: str
    scope: str
    target_path: str
    action: str
    content: str | None
    old_text: str | None
    reason: str
    confidence: int
    source: str
    source_session_id: str | None
    source_message_id: str | None
    fingerprint: str | None
    actor: str
    status: str
    time_created: int
    time_updated: int
    decided_by: str | None = None
    decision_reason: str | None = None
    undone_by: str | None = None
    recovers: str | None = None
    recovery_mode: str | None = None
    before: list[str] | None = None
    after: list[str] | None = None
    error: str | None = None
    time_applied: int | None = None
    layout: dict[str, Any] | None = None
    #: the content as proposed, when a reviewer edited it before approving (``content`` is then the edited one)
    original_content: str | None = None

    def to_json(self) -> dict[str, Any]:
        """Every field; ``locator`` is ``old_text``, ``diagnostic`` is ``error`` (Zuno's UI names)."""
        out = asdict(self)
        out["locator"] = out.pop("old_text")
        out["diagnostic"] = out.pop("error")
        out["before_entries"] = out.pop("before")
        out["after_entries"] = out.pop("after")
        del out["layout"]  # how the file's bytes were laid out: memzoi's own bookkeeping, not a candidate field
        return out


def _from_row(row: sqlite3.Row) -> Candidate:
    data = dict(row)
    before, after = data.pop("before_entries"), data.pop("after_entries")
    layout = data.pop("layout", None)
    return Candidate(
        **data,
        before=None if before is None else json.loads(before),
        after=None if after is None else json.loads(after),
        layout=None if layout is None else json.loads(layout),
    )


def db_path() -> Path:
    """``${MEMZOI_HOME:-~/.memzoi}/memzoi-lsp-resident.db``."""
    return runtime_root() / DB_NAME


@contextmanager
def connect(path: Path | None = None) -> Iterator[sqlite3.Connection]:
    """A connection (autocommit; WAL, synchronous FULL, busy timeout 5 s) to the candidate database, created
    with mode 0600 on first use. A database that cannot be opened or used (full disk, read-only mount,
    permissions, damaged file) raises :class:`~memzoi.base.runtime_errors.RuntimeStateError` naming it."""
    try:
        path = private_file(path or db_path())
        conn = sqlite3.connect(path, isolation_level=None, timeout=5)
    except (OSError, sqlite3.Error) as err:
        raise runtime_error(err, path or memzoi_home() / DB_NAME, "resident") from err
    try:
        with guard(path, "resident"):
            conn.row_factory = sqlite3.Row
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute("PRAGMA synchronous=FULL")
            ensure_schema(conn, path)
        try:
            private_file(path)  # the -wal and -shm files SQLite just created
        except OSError as err:
            raise runtime_error(err, path, "resident") from err
        with guard(path, "resident"):
            yield conn
    finally:
        conn.close()


def read(fn: Callable[[sqlite3.Connection], T], default: T, path: Path | None = None) -> T:
    """``fn(conn)`` on a read-only connection to the candidate database (``path``, else :func:`db_path`), or
    ``default`` when there is no database or no candidate table yet: every listing reads through here, so a
    read-only memzoi home still lists (:func:`memzoi.base.dbread.read_database`: nothing is written, created or
    migrated; an older schema's rows read with the newer columns at their defaults). ``fn`` must only read (it may
    run twice). Raises :class:`~memzoi.ledger.Refusal` ``resident_schema`` for a newer schema, and
    :class:`~memzoi.base.runtime_errors.RuntimeStateError` naming the database when it cannot be read."""
    path = path or db_path()
    if not path.exists():
        return default

    def reading(conn: sqlite3.Connection) -> T:
        version = conn.execute("PRAGMA user_version").fetchone()[0]
        if version > USER_VERSION:
            raise Refusal(
                "resident_schema", f"{path}: unsupported candidate schema version {version}; upgrade memzoi-lsp"
            )
        if not has_table(conn, "memory_candidate"):
            return default
        return fn(conn)

    return read_database(path, reading, "resident")


def has_table(conn: sqlite3.Connection, name: str) -> bool:
    """Whether the database of ``conn`` holds the table ``name`` (a reader creates none)."""
    return conn.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", (name,)).fetchone() is not None


def insert(conn: sqlite3.Connection, cand: Candidate) -> tuple[Candidate, bool]:
    """Insert ``cand`` (status ``pending``); returns ``(row, inserted)``. A reflection candidate whose session,
    message and fingerprint are already recorded returns the existing row with ``inserted=False`` (Zuno
    ``create_or_get``)."""
    cols = [
        "id",
        "scope",
        "target_path",
        "action",
        "content",
        "old_text",
        "reason",
        "confidence",
        "source",
        "source_session_id",
        "source_message_id",
        "fingerprint",
        "actor",
        "status",
        "recovers",
        "recovery_mode",
        "time_created",
        "time_updated",
    ]
    values = [getattr(cand, c) for c in cols]
    with transaction(conn):
        cur = conn.execute(
            f"INSERT INTO memory_candidate ({', '.join(cols)}) VALUES ({', '.join('?' * len(cols))}) "
            "ON CONFLICT DO NOTHING",
            values,
        )
        if cur.rowcount == 1:
            return cand, True
        existing = conn.execute(
            "SELECT * FROM memory_candidate WHERE source = 'reflection' AND source_session_id = ? AND "
            "source_message_id = ? AND fingerprint = ?",
            (cand.source_session_id, cand.source_message_id, cand.fingerprint),
        ).fetchone()
    if existing is None:
        raise Refusal("candidate_conflict", f"candidate {cand.id} could not be recorded; retry")
    return _from_row(existing), False


def pending_same(
    conn: sqlite3.Connection, target_path: str, action: str, content: str | None, old_text: str | None
) -> Candidate | None:
    """The oldest ``pending`` candidate for the same file with the same action, content and locator, else ``None``:
    the same change proposed twice (by two clients, say) is one candidate for a reviewer."""
    row = conn.execute(
        "SELECT * FROM memory_candidate WHERE status = 'pending' AND target_path = ? AND action = ? AND "
        "content IS ? AND old_text IS ? ORDER BY time_created, id LIMIT 1",
        (target_path, action, content, old_text),
    ).fetchone()
    return _from_row(row) if row is not None else None


def get(conn: sqlite3.Connection, candidate_id: str) -> Candidate | None:
    """The candidate ``candidate_id`` (a unique prefix is accepted), or ``None``."""
    row = conn.execute("SELECT * FROM memory_candidate WHERE id = ?", (candidate_id,)).fetchone()
    if row is None and candidate_id:
        rows = conn.execute(
            "SELECT * FROM memory_candidate WHERE substr(id, 1, ?) = ? LIMIT 2", (len(candidate_id), candidate_id)
        ).fetchall()
        row = rows[0] if len(rows) == 1 else None
    return None if row is None else _from_row(row)


def list_for_paths(conn: sqlite3.Connection, paths: list[str]) -> list[Candidate]:
    """Candidates of the given resident files: pending first, then applying, undoing, uncertain, then the rest;
    newest first within each group (Zuno ``list_for_paths``)."""
    marks = ",".join("?" * len(paths))
    rows = conn.execute(
        f"SELECT * FROM memory_candidate WHERE target_path IN ({marks}) ORDER BY {_ORDER}, time_created DESC, id DESC",
        paths,
    ).fetchall()
    return [_from_row(r) for r in rows]


def inflight(conn: sqlite3.Connection, paths: list[str]) -> list[Candidate]:
    """``applying``/``undoing`` candidates of the given files, oldest first (what reconciliation examines)."""
    marks = ",".join("?" * len(paths))
    rows = conn.execute(
        f"SELECT * FROM memory_candidate WHERE target_path IN ({marks}) AND status IN ('applying', 'undoing') "
        "ORDER BY time_created, id",
        paths,
    ).fetchall()
    return [_from_row(r) for r in rows]


def begin_apply(
    conn: sqlite3.Connection,
    candidate_id: str,
    before: list[str],
    after: list[str],
    decided_by: str,
    layout: dict[str, Any] | None = None,
) -> bool:
    """Durable write 1 of apply: ``applying`` with both snapshots and the file's ``layout``
    (:meth:`.encoding.Layout.to_json`), only from ``pending``/``failed``; clears the diagnostic. Returns whether
    the row moved."""
    with transaction(conn):
        cur = conn.execute(
            "UPDATE memory_candidate SET status = 'applying', before_entries = ?, after_entries = ?, error = NULL, "
            "decided_by = ?, time_updated = ?, layout = ? WHERE id = ? AND status IN ('pending', 'failed')",
            (
                json.dumps(before, ensure_ascii=False),
                json.dumps(after, ensure_ascii=False),
                decided_by,
                now_ms(),
                None if layout is None else json.dumps(layout, ensure_ascii=False),
                candidate_id,
            ),
        )
        return cur.rowcount == 1


def begin_undo(conn: sqlite3.Connection, candidate_id: str, undone_by: str) -> bool:
    """Durable write 1 of undo: ``undoing``, only from ``applied``; clears the diagnostic."""
    with transaction(conn):
        cur = conn.execute(
            "UPDATE memory_candidate SET status = 'undoing', error = NULL, undone_by = ?, time_updated = ? "
            "WHERE id = ? AND status = 'applied'",
            (undone_by, now_ms(), candidate_id),
        )
        return cur.rowcount == 1


def reject(conn: sqlite3.Connection, candidate_id: str, decided_by: str, reason: str) -> bool:
    """``pending``/``failed`` → ``rejected`` with who and why; returns whether the row moved."""
    with transaction(conn):
        cur = conn.execute(
            "UPDATE memory_candidate SET status = 'rejected', decided_by = ?, decision_reason = ?, time_updated = ? "
            "WHERE id = ? AND status IN ('pending', 'failed')",
            (decided_by, reason, now_ms(), candidate_id),
        )
        return cur.rowcount == 1


def set_status(conn: sqlite3.Connection, candidate_id: str, status: str, error: str | None = None) -> None:
    """Durable write 2: move the row to ``status`` with ``error`` as its diagnostic (``time_applied`` is set once,
    on the first ``applied``). A recovery candidate settles (``applied``) or re-opens (``undone``) the candidate
    it recovers in the same transaction."""
    ts = now_ms()
    with transaction(conn):
        conn.execute(
            "UPDATE memory_candidate SET status = ?, error = ?, time_updated = ?, time_applied = CASE WHEN ? = "
            "'applied' THEN COALESCE(time_applied, ?) ELSE time_applied END WHERE id = ?",
            (status, error, ts, status, ts, candidate_id),
        )
        row = conn.execute(
            "SELECT recovers, recovery_mode FROM memory_candidate WHERE id = ?", (candidate_id,)
        ).fetchone()
        if row is None or not row["recovers"] or status not in ("applied", "undone"):
            return
        if status == "applied":
            settled = {"complete-after": "applied", "restore-before": "failed", "accept": "failed"}[
                row["recovery_mode"]
            ]
            if settled == "failed" and row["recovery_mode"] == "restore-before":
                undo = conn.execute(
                    "SELECT undone_by FROM memory_candidate WHERE id = ?", (row["recovers"],)
                ).fetchone()
                settled = "undone" if undo is not None and undo["undone_by"] else "failed"
            note = f"settled by recovery candidate {candidate_id} ({row['recovery_mode']})"
        else:
            settled, note = "uncertain", f"recovery candidate {candidate_id} was undone; choose a recovery again"
        conn.execute(
            "UPDATE memory_candidate SET status = ?, error = ?, time_updated = ?, time_applied = CASE WHEN ? = "
            "'applied' THEN COALESCE(time_applied, ?) ELSE time_applied END WHERE id = ?",
            (settled, note, ts, settled, ts, row["recovers"]),
        )


def signature() -> str | None:
    """A digest of every candidate's id, status and update time, or ``None`` when there is no database yet: a
    watcher of the database compares it to tell a change of the candidates (CLI, agents, other editors) from the
    file events a mere read makes (WAL and shared-memory files come and go). Never creates or writes the database
    (:func:`read`)."""
    rows = read(
        lambda conn: conn.execute("SELECT id, status, time_updated FROM memory_candidate ORDER BY id").fetchall(), None
    )
    if rows is None:
        return None
    return hashlib.blake2b(repr([tuple(r) for r in rows]).encode(), digest_size=16).hexdigest()


def edit_content(conn: sqlite3.Connection, candidate_id: str, content: str) -> bool:
    """Replace the content of a ``pending``/``failed`` candidate with an edited version, keeping the first
    proposed content in ``original_content``; clears the fingerprint and diagnostic (Zuno ``service.edit``).
    Returns whether the row changed."""
    with transaction(conn):
        cur = conn.execute(
            "UPDATE memory_candidate SET original_content = COALESCE(original_content, content), content = ?, "
            "fingerprint = NULL, error = NULL, time_updated = ? WHERE id = ? AND status IN ('pending', 'failed')",
            (content, now_ms(), candidate_id),
        )
        return cur.rowcount == 1
