"""``memzoi import apply --from-file MANIFEST --plan-id ID``: write a reviewed import plan (Memzoi's lifecycle
document, "Import planning"; reference page "Classified import").

Apply recomputes the plan (:mod:`.import_plan`) from the manifest and the current memory state under the
repository lock and refuses, with nothing written, when its id is not ``--plan-id`` (``import_plan_stale``: a wrong
or stale id is a zero-write operation). Then, as **one ledgered change** (``import_apply``, undoable as one):

* each ``create_proposal`` → a pending packet ``.memzoi/proposals/pending/<proposal_id>.md`` (``status:
  proposed``, origin route ``import``; never a canonical record);
* each ``create_runtime`` → a private local record (``source_kind: import``) or a checkpoint (``type: episode``,
  ``lane: session``), runtime rows visible exactly while the change is applied.

Duplicate, discarded and blocked candidates write nothing. A failed file write puts back the packets already
written and leaves the change ``failed`` (its rows invisible); a failed database write records nothing (the
ledger's guarded change, as for ``session-end``).

**The source event is imported once.** The manifest's ``origin_key`` names it (Memzoi keeps an origin outcome per
origin identity and input fingerprint): the first apply is recorded under the operation id
``import:<32 hex of BLAKE3(origin_key)>`` (:mod:`.operations`); an identical retry (same manifest, actor and plan
id) replays that outcome (``replayed: true``) before the plan check and writes nothing; the same ``origin_key``
with another manifest is refused (``operation_id_conflict``). A session candidate's checkpoint is stored with
``source_kind: note`` (the checkpoint table has no ``import`` source kind yet).
"""

from __future__ import annotations

import os
import sqlite3
from datetime import datetime
from pathlib import Path
from typing import Any

import blake3

from ..base.clock import utc_now
from ..ledger import ChangePlan, FileChange, Ledger, Refusal, now_utc, run_change
from . import operations as ops
from .common import verified
from .import_manifest import ImportManifest, parse_import_manifest
from .import_plan import build_plan, existing_content, packet_of, screen_origin_key, source_file
from .routed_writes import RoutedWrite, record_without_change, write_routed

OPERATION = "import_apply"


def operation_id(m: ImportManifest) -> str:
    """The operation id an apply of ``m`` is recorded under: ``import:`` and 32 hex digits of BLAKE3 over the
    ``origin_key`` (never the key itself, which is the caller's text)."""
    return "import:" + blake3.blake3(m.origin_key.encode("utf-8")).hexdigest()[:32]


def _writes(plan: dict[str, Any]) -> list[dict[str, Any]]:
    return [c for c in plan["candidates"] if c["action"]["kind"] in ("create_proposal", "create_runtime")]


def _change(root: Path, m: ImportManifest, plan: dict[str, Any], ctx: dict[str, Any]) -> ChangePlan:
    now = now_utc(precise=False)
    by_index = {c.index: c for c in m.candidates}
    files: list[FileChange] = []
    routed: list[RoutedWrite] = []
    for item in _writes(plan):
        action, c = item["action"], by_index[item["index"]]
        if action["kind"] == "create_proposal":
            rel, text, data = packet_of(m, c, action["proposal_id"], actor=ctx["actor"], now=now)
            files.append(FileChange(rel, None, verified(root, rel, text, data, c.body)))
        routed.append(
            RoutedWrite(
                {"index": c.index},
                "repo" if action["kind"] == "create_proposal" else c.destination,
                c.title,
                c.body,
                c.type,
                c.lane,
                tags=c.tags,
                paths=c.scope["paths"],
                sensitivity=c.sensitivity,
                source_kind="import",
                salt=f"import:{ctx['op']}:{c.index}",
                proposal_id=action.get("proposal_id"),
                path=action.get("path"),
            )
        )
    at: datetime = ctx["now"]

    def effects(conn: sqlite3.Connection, change_id: str) -> None:
        writes = write_routed(conn, change_id, routed, at)
        out = {**ctx["envelope"], **plan, "writes": writes, "change_id": change_id}
        ops.record(conn, ctx["op"], OPERATION, ctx["fp"], out, change_id)
        ctx["outcome"] = out

    return ChangePlan(
        OPERATION,
        files,
        reason="import apply",
        summary=f"import: {len(files)} packet(s), {len(_writes(plan)) - len(files)} runtime row(s)",
        details={
            "plan_id": plan["plan_id"],
            "proposal_ids": [
                i["action"]["proposal_id"] for i in _writes(plan) if i["action"]["kind"] == "create_proposal"
            ],
        },
        db_effects=effects,
    )


def _stale(expected: str, plan: dict[str, Any]) -> Refusal:
    return Refusal(
        "import_plan_stale",
        f"the plan id given ({expected[:19]}…) is not the current plan of this "
        f"manifest ({plan['plan_id'][:19]}…): the manifest, the actor or the memory state changed since "
        "it was planned; nothing was written. Run `memzoi import plan` again, review it, and apply its id",
    )


def import_apply(
    project_root: str | os.PathLike[str],
    text: str,
    *,
    plan_id: str,
    where: str = "manifest",
    actor: str = "cli",
    path: str | None = None,
    source: str = "cli",
    now: datetime | None = None,
) -> dict[str, Any]:
    """Apply the plan ``plan_id`` of manifest ``text`` (module docstring). Returns Memzoi's apply envelope: the
    plan plus ``mode: "apply"``, ``actor``, ``source_file``, ``expected_plan_id`` and ``writes`` (``[{"kind":
    "proposal_file", "index", "proposal_id", "path"} | {"kind": "runtime_record", "index", "record_id",
    "destination"}]``), and this project's ``change_id`` (``None`` when nothing was to be written),
    ``operation_id`` and ``replayed``. Raises :class:`Refusal` (``invalid_import_manifest``,
    ``import_plan_stale``, ``operation_id_conflict``, ledger and write codes) with nothing written."""
    root = Path(project_root).resolve()
    m = parse_import_manifest(text, where)
    screen_origin_key(m)
    op = operation_id(m)
    fp = ops.fingerprint(OPERATION, {"manifest": m.canonical(), "actor": actor.strip(), "plan_id": plan_id})
    envelope = {
        "mode": "apply",
        "actor": actor.strip(),
        "source_file": source_file(root, path),
        "expected_plan_id": plan_id,
        "operation_id": op,
        "replayed": False,
    }
    ctx: dict[str, Any] = {
        "actor": actor.strip() or "cli",
        "op": op,
        "fp": fp,
        "now": now or utc_now(),
        "envelope": envelope,
    }
    ledger = Ledger.for_project(root)

    def current(r: Path) -> dict[str, Any]:
        with Ledger.for_project(r).connect() as conn:
            try:
                replay = ops.recorded(conn, op, OPERATION, fp)
            except Refusal as err:
                raise Refusal(
                    err.code,
                    "the source event of this manifest (its `origin_key`) was already imported "
                    "with other content, another actor or another plan id; nothing was written. A source "
                    "event is imported once: give a new event its own `origin_key`, or repeat the original "
                    "apply exactly to read its outcome",
                ) from None
            if replay is not None:
                raise ops.Replay(replay)
            plan = build_plan(r, m, actor, existing_content(r, conn))
        if plan["plan_id"] != plan_id:
            raise _stale(plan_id, plan)
        return plan

    try:
        plan = current(root)  # an early answer (replay, stale plan) before the lock
        if not _writes(plan):
            out = {**envelope, **plan, "writes": [], "change_id": None}
            return record_without_change(ledger, op, OPERATION, fp, out)
        run_change(root, lambda r: _change(r, m, current(r), ctx), actor=ctx["actor"], source=source)
    except ops.Replay as replay:
        return replay.outcome
    outcome: dict[str, Any] = ctx["outcome"]
    return outcome
