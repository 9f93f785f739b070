"""``memzoi capture review``: a human's decision on every candidate of a capture plan, pinned as an immutable
review artifact (Memzoi's reference page "Data classes and review"; ``memzoi/capture-review-input`` and
``memzoi/capture-review``, schema ids without Memzoi's ``-v1`` suffix). Review writes no memory state.

The decisions file::

    {"schema": "memzoi/capture-review-input", "plan_id": "capture_…",
     "decisions": [{"candidate_id": "candidate_…", "outcome": "accept"},
                   {"candidate_id": "candidate_…", "outcome": "edit", "destination": "local",
                    "memory": {"type", "lane", "title", "body", "scope": {"kind", "id", "paths"}, "tags"}}]}

Rules (Memzoi's): every candidate is decided exactly once; outcomes ``accept``, ``reject``, ``edit``, ``defer``;
accept keeps a routeable candidate (``create_proposal``/``create_runtime``): a duplicate cannot be accepted as new
memory, a conflict needs lifecycle resolution, a no-write or blocked candidate must be edited, rejected or
deferred; edit needs a complete memory draft and may choose a destination (``repo``, ``local``, ``session``), and
the policy is applied again: the prohibited-content detectors run on the edit, and a repo edit must pass the gate
and detectors. ``reviewed_by`` is non-empty and ``reviewed_at`` an explicit RFC 3339 time. Review recomputes the
plan from its source first: a changed source or memory state is stale (``capture_plan_stale``). ``review_id`` is
``review_`` + BLAKE3 over the review without its id (plan, reviewer, time, every decision and edit). A
``prior_review_id`` (Memzoi's one-hop review lineage) is not supported here (``unsupported_prior_review``).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, get_args

from ..ledger import Refusal
from ..models.common import Lane, MemoryType, parse_rfc3339
from .capture_actions import repo_block
from .capture_plan import current_plan
from .capture_prohibited import first_prohibited
from .capture_source import canonical_hash

INPUT_SCHEMA = "memzoi/capture-review-input"
REVIEW_SCHEMA = "memzoi/capture-review"
OUTCOMES = ("accept", "reject", "edit", "defer")
_ROUTEABLE = ("create_proposal", "create_runtime")
_TYPES: tuple[str, ...] = get_args(MemoryType)
_LANES: tuple[str, ...] = get_args(Lane)
_SENS = {"repo": "repo-safe", "local": "local-only", "session": "temporary-state"}


def _bad(code: str, what: str) -> Refusal:
    return Refusal(code, f"{what}; nothing was written")


def check_plan_artifact(plan: Any) -> dict[str, Any]:
    """``plan`` (a parsed plan file) when it is an unaltered, reviewable capture plan. Raises :class:`Refusal`
    (``invalid_capture_plan``, ``capture_plan_blocked``, ``capture_plan_stale`` when its content no longer gives
    its id)."""
    if not isinstance(plan, dict) or plan.get("schema") != "memzoi/capture-plan" or not plan.get("plan_id"):
        raise _bad("invalid_capture_plan", "the plan file is not a `memzoi/capture-plan` artifact")
    if plan.get("status") != "ready":
        raise _bad(
            "capture_plan_blocked",
            "a blocked capture plan cannot be reviewed or applied; remove the "
            "prohibited content from the source and plan again",
        )
    if "capture_" + canonical_hash({k: v for k, v in plan.items() if k != "plan_id"}) != plan["plan_id"]:
        raise _bad(
            "capture_plan_stale",
            "the plan file was altered after planning (its content no longer gives its plan id); plan again",
        )
    return plan


def recompute(root: Path, plan: dict[str, Any]) -> dict[str, Any]:
    """The plan of ``plan``'s source now; refuses with ``capture_plan_stale`` when the source or the memory state
    changed (the id differs)."""
    src = plan["request"]["sources"][0]
    now = current_plan(root, src["locator"]["path"], src["source_id"])
    if now["plan_id"] != plan["plan_id"]:
        raise _bad(
            "capture_plan_stale",
            "the capture source or the memory it is compared with changed since the "
            "plan was made; run `memzoi capture plan` again and review the new plan",
        )
    return now


def _memory(value: Any, cid: str) -> dict[str, Any]:
    keys = {"type", "lane", "title", "body", "scope", "tags"}
    if not isinstance(value, dict) or set(value) != keys:
        raise _bad(
            "invalid_capture_decision",
            f"the edit of `{cid}` needs a complete memory draft with exactly {', '.join(sorted(keys))}",
        )
    scope, tags = value["scope"], value["tags"]
    if value["type"] not in _TYPES or value["lane"] not in _LANES:
        raise _bad("invalid_capture_decision", f"the edit of `{cid}` has an unknown type or lane")
    for key in ("title", "body"):
        if not isinstance(value[key], str) or not value[key].strip():
            raise _bad("invalid_capture_decision", f"the edit of `{cid}` needs a non-empty {key}")
    if (
        not isinstance(scope, dict)
        or set(scope) != {"kind", "id", "paths"}
        or scope["kind"] != "repo"
        or not isinstance(scope["paths"], list)
        or not isinstance(tags, list)
    ):
        raise _bad(
            "invalid_capture_decision",
            f"the edit of `{cid}` needs scope `{{kind: repo, id, paths}}` and a list of tags",
        )
    return {**value, "title": value["title"].strip(), "body": value["body"].strip()}


def _decision(root: Path, item: Any, cand: dict[str, Any]) -> dict[str, Any]:
    cid = cand["candidate_id"]
    allowed = {"candidate_id", "outcome", "memory", "destination"}
    if not isinstance(item, dict) or not set(item) <= allowed or item.get("outcome") not in OUTCOMES:
        raise _bad(
            "invalid_capture_decision",
            f"the decision on `{cid}` must be `{{candidate_id, outcome: "
            f"{'|'.join(OUTCOMES)}}}` (edit adds memory and optionally destination)",
        )
    outcome, kind = item["outcome"], cand["action"]["kind"]
    if outcome != "edit" and set(item) - {"candidate_id", "outcome"}:
        raise _bad("invalid_capture_decision", f"only an edit of `{cid}` may carry memory or destination")
    if outcome == "accept" and kind not in _ROUTEABLE:
        why = {
            "duplicate": "a duplicate cannot be accepted as new memory",
            "conflict": "a conflict needs lifecycle resolution (supersede or tombstone)",
        }.get(kind, "a no-write or blocked candidate must be edited, rejected or deferred")
        raise _bad("invalid_capture_decision", f"`{cid}` cannot be accepted: {why}")
    out: dict[str, Any] = {"candidate_id": cid, "outcome": outcome}
    if outcome == "edit":
        memory = _memory(item.get("memory"), cid)
        dest = item.get("destination", cand["classification"]["destination"])
        if dest not in _SENS:
            raise _bad("invalid_capture_decision", f"the edit of `{cid}` must route to repo, local or session")
        if dest == "session" and (memory["type"], memory["lane"]) != ("episode", "session"):
            raise _bad("invalid_capture_decision", f"a session edit of `{cid}` must be type episode, lane session")
        hit = first_prohibited(f"{memory['title']}\n{memory['body']}")
        if hit is not None:
            raise _bad(
                "prohibited_content_detected",
                f"the edit of `{cid}` holds prohibited content ({hit.code}, line {hit.line} of the edit)",
            )
        codes = repo_block(root, memory) if dest == "repo" else []
        if codes:
            raise _bad("blocked", f"the repo edit of `{cid}` is blocked by {', '.join(codes)}")
        out |= {
            "destination": dest,
            "sensitivity": _SENS[dest],
            "memory": memory,
            "reviewed_candidate_id": "candidate_"
            + canonical_hash({"of": cid, "memory": memory, "destination": dest})[:32],
        }
    return out


def validated(root: Path, plan: dict[str, Any], decisions: Any) -> list[dict[str, Any]]:
    """The normalized decisions of ``decisions`` (the input's list) over ``plan``'s candidates, in plan order."""
    by_id = {c["candidate_id"]: c for c in plan["candidates"]}
    if not isinstance(decisions, list):
        raise _bad("invalid_capture_decision", "`decisions` must be a list")
    seen: dict[str, Any] = {}
    for item in decisions:
        cid = item.get("candidate_id") if isinstance(item, dict) else None
        if not isinstance(cid, str) or cid not in by_id:
            raise _bad("invalid_capture_decision", "a decision names a candidate that is not in the plan")
        if cid in seen:
            raise _bad("invalid_capture_decision", f"`{cid}` is decided more than once")
        seen[cid] = item
    missing = [cid for cid in by_id if cid not in seen]
    if missing:
        raise _bad(
            "invalid_capture_decision", f"every candidate must be decided exactly once; undecided: {', '.join(missing)}"
        )
    return [_decision(root, seen[c["candidate_id"]], c) for c in plan["candidates"]]


def review_identity(review: dict[str, Any]) -> str:
    """``review_<BLAKE3 hex>`` over ``review`` without ``review_id``."""
    return "review_" + canonical_hash({k: v for k, v in review.items() if k != "review_id"})


def review_capture(
    project_root: str | os.PathLike[str], plan: Any, decisions_input: Any, *, reviewed_by: str, reviewed_at: str
) -> dict[str, Any]:
    """The ``memzoi/capture-review`` of ``decisions_input`` (the parsed decisions file) over ``plan`` (the parsed
    plan file); module docstring. Writes nothing. Raises :class:`Refusal` (``invalid_capture_plan``,
    ``capture_plan_blocked``, ``capture_plan_stale``, ``invalid_capture_review_input``,
    ``invalid_capture_decision``, ``prohibited_content_detected``, ``blocked``, ``unsupported_prior_review``)."""
    root = Path(project_root).resolve()
    plan = check_plan_artifact(plan)
    if (
        not isinstance(decisions_input, dict)
        or decisions_input.get("schema") != INPUT_SCHEMA
        or not set(decisions_input) <= {"schema", "plan_id", "decisions", "prior_review_id"}
    ):
        raise _bad(
            "invalid_capture_review_input",
            f"the decisions file must be `{{schema: {INPUT_SCHEMA}, plan_id, decisions}}`",
        )
    if decisions_input.get("prior_review_id") is not None:
        raise _bad(
            "unsupported_prior_review",
            "a review replacing deferred decisions of an earlier review "
            "(prior_review_id) is not supported; review the whole plan again",
        )
    if decisions_input.get("plan_id") != plan["plan_id"]:
        raise _bad("invalid_capture_review_input", "the decisions file names another plan id than the plan file")
    if not reviewed_by.strip():
        raise _bad("invalid_capture_review_input", "--reviewed-by must not be empty")
    if not isinstance(reviewed_at, str) or parse_rfc3339(reviewed_at) is None:
        raise _bad("invalid_capture_review_input", "--reviewed-at must be an RFC 3339 time with Z or an offset")
    recompute(root, plan)
    decisions = validated(root, plan, decisions_input.get("decisions"))
    private = plan["data_class"] == "private" or any(d.get("destination") in ("local", "session") for d in decisions)
    review = {
        "schema": REVIEW_SCHEMA,
        "review_id": "",
        "plan_id": plan["plan_id"],
        "prior_review_id": None,
        "reviewed_by": reviewed_by.strip(),
        "reviewed_at": reviewed_at,
        "data_class": "private" if private else "repo_safe",
        "decisions": decisions,
    }
    review["review_id"] = review_identity(review)
    return review
