"""``memzoi capture apply --plan-file --review-file --plan-id --review-id``: write what a capture review accepted
(Memzoi's reference page "Apply routing and provenance"; result schema ``memzoi/capture-apply-result``).

Before any write, and again under the repository lock, apply checks that the plan and review artifacts are
unaltered and are the ones named by ``--plan-id`` and ``--review-id``, that the review is of that plan and its
decisions still hold, and recomputes the plan from the current source and memory state: a changed source, a new
duplicate or conflict, a consumed proposal id, an altered artifact or a mismatched id is a stale zero-write error
(``capture_plan_stale``, ``capture_review_stale``). Then, as **one ledgered change** (``capture_apply``):

* an accepted or edited ``repo`` candidate → a pending packet (``sources`` naming the source file, origin route
  ``capture``, a compact ``capture`` provenance block: plan, review, candidate ids, extractor, evidence locator,
  spans and hashes, review outcome; never the evidence text); never a canonical record;
* an accepted or edited ``local`` candidate → a private local record (``source_kind: capture``, ``source_ref`` the
  source path and lines);
* an accepted or edited ``session`` candidate → a checkpoint (stored with ``source_kind: note``);
* rejected, deferred, duplicate, conflicting, blocked and unresolved candidates write nothing.

An identical retry (same plan id, review id and actor) replays the recorded outcome (operation id ``capture:`` and
32 hex of the review id); a failed file write puts back what was written (the ledger's guarded change).
"""

from __future__ import annotations

import os
import sqlite3
from datetime import datetime
from pathlib import Path
from typing import Any

from ..base.clock import utc_now
from ..ledger import ChangePlan, FileChange, Ledger, Refusal, now_utc, run_change
from ..read.render import render_packet
from . import operations as ops
from .capture_review import check_plan_artifact, recompute, review_identity, validated
from .common import PENDING, reserve_packet_id, verified
from .import_plan import base_packet_id
from .propose import Draft, packet_data
from .routed_writes import RoutedWrite, record_without_change, write_routed

RESULT_SCHEMA = "memzoi/capture-apply-result"
OPERATION = "capture_apply"


def _stale(code: str, what: str) -> Refusal:
    return Refusal(code, f"{what}; nothing was written. Plan and review again, then apply the new ids")


def check_review(review: Any, plan: dict[str, Any], review_id: str) -> dict[str, Any]:
    """``review`` (a parsed review file) when it is unaltered, names ``review_id`` and reviews ``plan``."""
    if not isinstance(review, dict) or review.get("schema") != "memzoi/capture-review":
        raise Refusal(
            "invalid_capture_review", "the review file is not a `memzoi/capture-review` artifact; nothing was written"
        )
    if review.get("review_id") != review_id or review_identity(review) != review_id:
        raise _stale("capture_review_stale", "the review file is not the review named by --review-id, or was altered")
    if review.get("plan_id") != plan["plan_id"]:
        raise _stale("capture_review_stale", "the review is of another plan")
    return review


def _writes(plan: dict[str, Any], review: dict[str, Any]) -> list[tuple[dict[str, Any], dict[str, Any]]]:
    """``(candidate, decision)`` of every accepted or edited candidate, in plan order."""
    by_id = {c["candidate_id"]: c for c in plan["candidates"]}
    return [(by_id[d["candidate_id"]], d) for d in review["decisions"] if d["outcome"] in ("accept", "edit")]


def _routed(cand: dict[str, Any], decision: dict[str, Any]) -> tuple[str, dict[str, Any], str]:
    if decision["outcome"] == "edit":
        return decision["destination"], decision["memory"], decision["sensitivity"]
    return cand["classification"]["destination"], cand["memory"], cand["classification"]["sensitivity"]


def provenance(
    plan: dict[str, Any], review: dict[str, Any], cand: dict[str, Any], decision: dict[str, Any]
) -> dict[str, Any]:
    """The compact capture provenance of one written candidate (no evidence text)."""
    ev = [{k: v for k, v in e.items() if k != "text"} for e in cand["evidence"]]
    out = {
        "schema": "memzoi/capture-provenance",
        "plan_id": plan["plan_id"],
        "review_id": review["review_id"],
        "candidate_id": cand["candidate_id"],
        "extractor": {k: cand["extraction"][k] for k in ("id", "version")},
        "evidence": ev,
        "review_outcome": decision["outcome"],
        "reviewed_by": review["reviewed_by"],
    }
    if decision.get("reviewed_candidate_id"):
        out["reviewed_candidate_id"] = decision["reviewed_candidate_id"]
    return out


def _plain(value: Any) -> Any:
    """``value`` as the packet's frontmatter reads it back: numbers as their plain text, ``None`` left out (the
    ``capture`` block is free-form YAML whose scalars are kept as written)."""
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return str(value)
    return value


def _packet(
    root: Path,
    plan: dict[str, Any],
    review: dict[str, Any],
    cand: dict[str, Any],
    decision: dict[str, Any],
    pid: str,
    actor: str,
    now: str,
) -> FileChange:
    _, memory, _ = _routed(cand, decision)
    draft = Draft(
        title=memory["title"],
        body=memory["body"],
        type=memory["type"],
        lane=memory["lane"],
        reason=f"captured from {cand['evidence'][0]['locator']['path']}",
        confidence=cand["confidence"],
        tags=list(memory["tags"]),
        applies_to=list(memory["scope"]["paths"]),
    )
    data = packet_data(draft, pid, actor=actor, now=now, target=None)
    data["sources"] = [{"path": cand["evidence"][0]["locator"]["path"]}]
    data["capture"] = _plain(provenance(plan, review, cand, decision))
    data["origin"] = {"origin_key": f"capture:{cand['candidate_id']}", "route": "capture"}
    rel = f"{PENDING}/{pid}.md"
    return FileChange(rel, None, verified(root, rel, render_packet(data, memory["body"]), data, memory["body"]))


def _change(root: Path, plan: dict[str, Any], review: dict[str, Any], ctx: dict[str, Any]) -> ChangePlan:
    now = now_utc(precise=False)
    files: list[FileChange] = []
    routed: list[RoutedWrite] = []
    for cand, decision in _writes(plan, review):
        dest, memory, sens = _routed(cand, decision)
        pid = None
        if dest == "repo":
            pid = (
                cand["action"].get("proposal_id")
                if decision["outcome"] == "accept"
                else reserve_packet_id(root, base_packet_id(memory["title"]).replace("mem_import_", "mem_capture_", 1))
            )
            files.append(_packet(root, plan, review, cand, decision, pid, ctx["actor"], now))
        ev = cand["evidence"][0]
        routed.append(
            RoutedWrite(
                {"candidate_id": cand["candidate_id"]},
                dest,
                memory["title"],
                memory["body"],
                memory["type"],
                memory["lane"],
                tags=memory["tags"],
                paths=memory["scope"]["paths"],
                sensitivity=sens,
                source_kind="capture",
                source_ref=f"{ev['locator']['path']}#L{ev['span']['line_start']}-L{ev['span']['line_end']}",
                salt=f"capture:{cand['candidate_id']}",
                proposal_id=pid,
                path=f"{PENDING}/{pid}.md" if pid else None,
            )
        )
    at: datetime = ctx["now"]

    def effects(conn: sqlite3.Connection, change_id: str) -> None:
        writes = write_routed(conn, change_id, routed, at)
        out = {**ctx["envelope"], "writes": writes, "change_id": change_id}
        ops.record(conn, ctx["op"], OPERATION, ctx["fp"], out, change_id)
        ctx["outcome"] = out

    return ChangePlan(
        OPERATION,
        files,
        reason="capture apply",
        summary=f"capture: {len(files)} packet(s), {len(routed) - len(files)} runtime row(s)",
        details={"plan_id": plan["plan_id"], "review_id": review["review_id"]},
        db_effects=effects,
    )


def capture_apply(
    project_root: str | os.PathLike[str],
    plan: Any,
    review: Any,
    *,
    plan_id: str,
    review_id: str,
    actor: str,
    source: str = "cli",
    now: datetime | None = None,
) -> dict[str, Any]:
    """Apply ``review`` of ``plan`` (the parsed artifacts) named ``plan_id`` and ``review_id`` (module docstring).
    Returns ``{"schema": "memzoi/capture-apply-result", "plan_id", "review_id", "operation_id", "replayed",
    "writes": [{"kind": "proposal_file", "candidate_id", "proposal_id", "path"} | {"kind": "runtime_record",
    "candidate_id", "record_id", "destination"}], "change_id"}``. Raises :class:`Refusal` with nothing written."""
    root = Path(project_root).resolve()
    plan = check_plan_artifact(plan)
    if plan["plan_id"] != plan_id:
        raise _stale("capture_plan_stale", "the plan file is not the plan named by --plan-id")
    review = check_review(review, plan, review_id)
    op = "capture:" + review_id.removeprefix("review_")[:32]
    fp = ops.fingerprint(OPERATION, {"plan_id": plan_id, "review_id": review_id, "actor": actor.strip()})
    envelope = {
        "schema": RESULT_SCHEMA,
        "plan_id": plan_id,
        "review_id": review_id,
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

    def checked(r: Path) -> None:
        with Ledger.for_project(r).connect() as conn:
            replay = ops.recorded(conn, op, OPERATION, fp)
        if replay is not None:
            raise ops.Replay(replay)
        recompute(r, plan)
        validated(
            r,
            plan,
            [
                {k: v for k, v in d.items() if k in ("candidate_id", "outcome", "memory", "destination")}
                for d in review["decisions"]
            ],
        )

    def checked_change(r: Path) -> ChangePlan:
        checked(r)
        return _change(r, plan, review, ctx)

    try:
        checked(root)
        if not _writes(plan, review):
            return record_without_change(ledger, op, OPERATION, fp, {**envelope, "writes": [], "change_id": None})
        run_change(root, checked_change, actor=ctx["actor"], source=source)
    except ops.Replay as replay:
        return replay.outcome
    outcome: dict[str, Any] = ctx["outcome"]
    return outcome
