"""``memzoi materialize candidate|plan|decide|apply``: Memzoi's reviewed materialization flow (reference §5).

``candidate`` turns a draft record into a candidate JSON; ``plan`` derives the plan; ``decide`` records the
explicit decision (decision time now, or ``--decision-at``); ``apply`` revalidates all three and writes the record
with its ``materialization:`` attestation as one ledgered change. Artifacts go to stdout, or with ``--output`` to a
new file outside ``.memzoi`` (never overwritten).
"""

from __future__ import annotations

import argparse
import json
import os
from pathlib import Path

from ..ledger import Refusal
from ..lifecycle.materialize import (
    build_candidate,
    decision_now,
    derive_decision,
    derive_plan,
    load_artifact,
    materialize_apply,
    validate_candidate,
)
from ._changes import add_common, emit_json, project_root, refuse, run_write


def register(sub: argparse._SubParsersAction) -> None:
    """Add ``materialize`` and its subcommands."""
    p = sub.add_parser("materialize", help="materialize a reviewed record: candidate, plan, decide, apply")
    ps = p.add_subparsers(dest="materialize_command", metavar="SUBCOMMAND", required=True)
    c = ps.add_parser("candidate", help="build a candidate JSON from a draft record file")
    c.add_argument("draft", metavar="DRAFT.md")
    c.add_argument("--action", choices=["create", "update"], default="create")
    c.add_argument("--output", help="write to this new file (outside .memzoi) instead of stdout")
    add_common(c, actor=False)
    c.set_defaults(func=run_candidate)
    pl = ps.add_parser("plan", help="derive the plan of a candidate")
    pl.add_argument("candidate", metavar="CANDIDATE.json")
    pl.add_argument("--output", help="write to this new file (outside .memzoi) instead of stdout")
    add_common(pl, actor=False)
    pl.set_defaults(func=run_plan)
    d = ps.add_parser("decide", help="record the explicit decision to write a plan")
    d.add_argument("plan", metavar="PLAN.json")
    d.add_argument("--candidate", required=True, metavar="CANDIDATE.json")
    d.add_argument("--decision-at", help="decision time, RFC 3339 (default: now)")
    d.add_argument("--output", help="write to this new file (outside .memzoi) instead of stdout")
    add_common(d, actor=False)
    d.set_defaults(func=run_decide)
    a = ps.add_parser("apply", help="write the decided record with its attestation (one ledgered change)")
    a.add_argument("--candidate", required=True, metavar="CANDIDATE.json")
    a.add_argument("--plan", required=True, metavar="PLAN.json")
    a.add_argument("--decision", required=True, metavar="DECISION.json")
    for key in ("candidate-id", "plan-id", "decision-id"):
        a.add_argument(f"--{key}", help=f"expected {key.replace('-', '_')} (refused when it differs)")
    add_common(a)
    a.set_defaults(func=run_apply)


def _emit(args: argparse.Namespace, artifact: dict, id_key: str) -> int:
    if not args.output:
        emit_json(artifact)
        return 0
    out = Path(args.output)
    absolute = out if out.is_absolute() else Path.cwd() / out
    if ".memzoi" in absolute.parts:
        return refuse(args, Refusal("unsafe_output_path", f"{out}: artifacts are never written inside .memzoi"))
    if not absolute.parent.is_dir() or absolute.parent.is_symlink():
        return refuse(args, Refusal("unsafe_output_path", f"{out}: the parent must be an existing real directory"))
    try:
        fd = os.open(absolute, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o644)
    except FileExistsError:
        return refuse(args, Refusal("output_exists", f"{out} already exists; choose a new file"))
    with os.fdopen(fd, "w", encoding="utf-8") as fh:
        fh.write(json.dumps(artifact, indent=2, ensure_ascii=False) + "\n")
    if args.json:
        emit_json({"path": str(out), id_key: artifact[id_key]})
    else:
        print(f"wrote {out} ({id_key} {artifact[id_key]})")
    return 0


def run_candidate(args: argparse.Namespace) -> int:
    """Build a candidate."""
    try:
        text = Path(args.draft).read_text(encoding="utf-8")
        candidate = build_candidate(project_root(args), text, action=args.action)
    except (OSError, UnicodeDecodeError) as err:
        return refuse(args, Refusal("unreadable", f"{args.draft}: cannot read ({err})"))
    except Refusal as err:
        return refuse(args, err)
    return _emit(args, candidate, "candidate_id")


def run_plan(args: argparse.Namespace) -> int:
    """Derive a plan."""
    try:
        candidate = load_artifact(args.candidate)
        validate_candidate(candidate)
    except Refusal as err:
        return refuse(args, err)
    return _emit(args, derive_plan(candidate), "plan_id")


def run_decide(args: argparse.Namespace) -> int:
    """Record a decision."""
    try:
        candidate = load_artifact(args.candidate)
        validate_candidate(candidate)
        plan = load_artifact(args.plan)
        if plan != derive_plan(candidate):
            raise Refusal("materialization_candidate_plan_mismatch", "the plan was not derived from this candidate")
        decision_at = args.decision_at or decision_now()
        from ..models.common import parse_rfc3339

        if parse_rfc3339(decision_at) is None or decision_at != decision_at.strip():
            raise Refusal("invalid_timestamp", "--decision-at must be an RFC 3339 timestamp with a timezone")
    except Refusal as err:
        return refuse(args, err)
    return _emit(args, derive_decision(plan, decision_at), "decision_id")


def run_apply(args: argparse.Namespace) -> int:
    """Apply a decided materialization."""
    try:
        candidate = load_artifact(args.candidate)
        plan = load_artifact(args.plan)
        decision = load_artifact(args.decision)
    except Refusal as err:
        return refuse(args, err)
    expected = {"candidate_id": args.candidate_id, "plan_id": args.plan_id, "decision_id": args.decision_id}
    return run_write(args, lambda root, who: materialize_apply(root, candidate, plan, decision, actor=who,
                                                               expected_ids=expected))
