"""``memzoi materialize candidate|plan|decide|apply``: Memzoi's reviewed materialization flow (reference §5).

``candidate`` turns a draft record into a candidate JSON; ``plan`` derives the plan; ``decide`` records the
explicit decision (decision time now, or ``--decision-at``); ``apply`` revalidates all three and writes the record
with its ``materialization:`` attestation as one ledgered change. Artifacts go to stdout, or with ``--output`` to a
new file outside ``.memzoi`` (never overwritten).
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from ..base.printable import printable
from ._changes import add_common, emit_json, project_root, refuse, run_write, unreadable
from ._common import add_command, add_group


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``materialize`` and its subcommands."""
    p = add_command(
        sub,
        "materialize",
        help="materialize a reviewed record: template, candidate, plan, decide, apply",
        description="Memzoi's reviewed materialization flow: a candidate from a draft record (`memzoi materialize "
        "template` prints a complete one to edit), its derived plan, an explicit decision, then apply writes the "
        "record with its materialization attestation (one ledgered change). Artifacts go to stdout or to a new "
        "file outside .memzoi.",
        examples=[
            "memzoi materialize template --title 'Build with make' --output draft.md",
            "memzoi materialize candidate draft.md --output cand.json",
            "memzoi materialize plan cand.json --output plan.json",
            "memzoi materialize decide plan.json --candidate cand.json --output decision.json",
            "memzoi materialize apply --candidate cand.json --plan plan.json --decision decision.json",
        ],
        exits={1: "refused (an invalid or mismatched artifact, a gate or detector finding)"},
    )
    ps = add_group(p, "materialize_command")
    t = add_command(
        ps,
        "template",
        help="print a complete draft record to edit, then give to `candidate`",
        description="Print a draft record holding every key a Memzoi record requires (an active repository "
        "decision in the semantic lane, created now); edit its type, lane, title and body, then run `memzoi "
        "materialize candidate` on it.",
        examples=[
            "memzoi materialize template",
            "memzoi materialize template --title 'Build with make' --output draft.md",
        ],
        exits={1: "refused (a title without letters or digits, an existing --output file)"},
    )
    t.add_argument("--title", default=None, help="the record's title (its slug is the id; default: an example)")
    t.add_argument("--output", help="write to this new file (outside .memzoi) instead of stdout")
    add_common(t, actor=False)
    t.set_defaults(func=run_template)
    c = add_command(
        ps,
        "candidate",
        help="build a candidate JSON from a draft record file",
        description="Build a materialization candidate from a draft record (Markdown with frontmatter).",
        examples=[
            "memzoi materialize candidate draft.md",
            "memzoi materialize candidate draft.md --action update --output cand.json",
        ],
        exits={1: "refused (an unreadable or invalid draft, an existing --output file)"},
    )
    c.add_argument("draft", metavar="DRAFT.md", help="the draft record file")
    c.add_argument(
        "--action",
        choices=["create", "update"],
        default="create",
        help="create a new record or update an existing one (default: create)",
    )
    c.add_argument("--output", help="write to this new file (outside .memzoi) instead of stdout")
    add_common(c, actor=False)
    c.set_defaults(func=run_candidate)
    pl = add_command(
        ps,
        "plan",
        help="derive the plan of a candidate",
        description="Derive the materialization plan of a candidate (deterministic).",
        examples=["memzoi materialize plan cand.json --output plan.json"],
        exits={1: "refused (an invalid candidate, an existing --output file)"},
    )
    pl.add_argument("candidate", metavar="CANDIDATE.json", help="the candidate artifact")
    pl.add_argument("--output", help="write to this new file (outside .memzoi) instead of stdout")
    add_common(pl, actor=False)
    pl.set_defaults(func=run_plan)
    d = add_command(
        ps,
        "decide",
        help="record the explicit decision to write a plan",
        description="Record the explicit human decision to write a plan (decision time now, or --decision-at).",
        examples=["memzoi materialize decide plan.json --candidate cand.json --output decision.json"],
        exits={1: "refused (the plan was not derived from the candidate, a bad --decision-at)"},
    )
    d.add_argument("plan", metavar="PLAN.json", help="the plan artifact")
    d.add_argument("--candidate", required=True, metavar="CANDIDATE.json", help="the candidate the plan came from")
    d.add_argument("--decision-at", help="decision time, RFC 3339 (default: now)")
    d.add_argument("--output", help="write to this new file (outside .memzoi) instead of stdout")
    add_common(d, actor=False)
    d.set_defaults(func=run_decide)
    a = add_command(
        ps,
        "apply",
        help="write the decided record with its attestation (one ledgered change)",
        description="Revalidate candidate, plan and decision, then write the record with its "
        "materialization attestation as one ledgered change.",
        examples=["memzoi materialize apply --candidate cand.json --plan plan.json --decision decision.json"],
        exits={1: "refused (mismatched artifacts, a gate or detector finding, a changed file)"},
    )
    a.add_argument("--candidate", required=True, metavar="CANDIDATE.json", help="the candidate artifact")
    a.add_argument("--plan", required=True, metavar="PLAN.json", help="the plan artifact")
    a.add_argument("--decision", required=True, metavar="DECISION.json", help="the decision artifact")
    for key in ("candidate-id", "plan-id", "decision-id"):
        a.add_argument(f"--{key}", help=f"expected {key.replace('-', '_')} (refused when it differs)")
    add_common(a)
    a.set_defaults(func=run_apply)


def _emit(args: argparse.Namespace, artifact: dict[str, Any], id_key: str) -> int:
    from ..ledger import Refusal  # noqa: PLC0415 lazy: start-up
    from ..lifecycle.artifacts import write_artifact  # noqa: PLC0415 lazy: start-up

    if not args.output:
        emit_json(artifact)
        return 0
    out = Path(args.output)
    try:
        write_artifact(out, artifact)
    except Refusal as err:
        return refuse(args, err)
    from ..judge.pathsafety import shown_local_path  # noqa: PLC0415 lazy: start-up

    if args.json:
        emit_json({"path": shown_local_path(out), id_key: artifact[id_key]})
    else:
        print(printable(f"wrote {shown_local_path(out)} ({id_key} {artifact[id_key]})"))
    return 0


def run_template(args: argparse.Namespace) -> int:
    """Print (or write to a new ``--output`` file) a complete draft record."""
    from ..ledger import Refusal, now_utc  # noqa: PLC0415 lazy: start-up
    from ..lifecycle.artifacts import write_text_artifact  # noqa: PLC0415 lazy: start-up
    from ..lifecycle.draft_template import EXAMPLE_TITLE, draft_template  # noqa: PLC0415 lazy: start-up

    try:
        text = draft_template(now_utc(precise=False), title=args.title or EXAMPLE_TITLE)
    except ValueError as err:
        return refuse(args, Refusal("invalid_value", f"--title: {err}"))
    if not args.output:
        print(text, end="")
        return 0
    try:
        write_text_artifact(Path(args.output), text)
    except Refusal as err:
        return refuse(args, err)
    from ..judge.pathsafety import shown_local_path  # noqa: PLC0415 lazy: start-up

    shown = shown_local_path(args.output)
    if args.json:
        emit_json({"path": shown})
    else:
        print(printable(f"wrote {shown}; edit it, then run `memzoi materialize candidate {shown}`"))
    return 0


def run_candidate(args: argparse.Namespace) -> int:
    """Build a candidate."""
    from ..ledger import Refusal  # noqa: PLC0415 lazy: start-up
    from ..lifecycle.materialize_candidate import build_candidate  # noqa: PLC0415 lazy: start-up

    try:
        text = Path(args.draft).read_text(encoding="utf-8")
        candidate = build_candidate(project_root(args), text, action=args.action)
    except (OSError, UnicodeDecodeError) as err:
        return refuse(args, unreadable(args.draft, err))
    except Refusal as err:
        return refuse(args, err)
    return _emit(args, candidate, "candidate_id")


def run_plan(args: argparse.Namespace) -> int:
    """Derive a plan."""
    from ..ledger import Refusal  # noqa: PLC0415 lazy: start-up
    from ..lifecycle.materialize import derive_plan, load_artifact  # noqa: PLC0415 lazy: start-up
    from ..lifecycle.materialize_candidate import validate_candidate  # noqa: PLC0415 lazy: start-up

    try:
        candidate = load_artifact(args.candidate)
        validate_candidate(candidate)
    except Refusal as err:
        return refuse(args, err)
    return _emit(args, derive_plan(candidate), "plan_id")


def run_decide(args: argparse.Namespace) -> int:
    """Record a decision."""
    from ..ledger import Refusal  # noqa: PLC0415 lazy: start-up
    from ..lifecycle.materialize import decision_now, derive_decision, derive_plan, load_artifact  # noqa: PLC0415 lazy: start-up
    from ..lifecycle.materialize_candidate import validate_candidate  # noqa: PLC0415 lazy: start-up
    from ..models.common import parse_rfc3339  # noqa: PLC0415 lazy: start-up

    try:
        candidate = load_artifact(args.candidate)
        validate_candidate(candidate)
        plan = load_artifact(args.plan)
        if plan != derive_plan(candidate):
            raise Refusal("materialization_candidate_plan_mismatch", "the plan was not derived from this candidate")
        decision_at = args.decision_at or decision_now()
        if parse_rfc3339(decision_at) is None or decision_at != decision_at.strip():
            raise Refusal("invalid_timestamp", "--decision-at must be an RFC 3339 timestamp with a timezone")
    except Refusal as err:
        return refuse(args, err)
    return _emit(args, derive_decision(plan, decision_at), "decision_id")


def run_apply(args: argparse.Namespace) -> int:
    """Apply a decided materialization."""
    from ..ledger import Refusal  # noqa: PLC0415 lazy: start-up
    from ..lifecycle.materialize import load_artifact, materialize_apply  # noqa: PLC0415 lazy: start-up

    try:
        candidate = load_artifact(args.candidate)
        plan = load_artifact(args.plan)
        decision = load_artifact(args.decision)
    except Refusal as err:
        return refuse(args, err)
    expected = {"candidate_id": args.candidate_id, "plan_id": args.plan_id, "decision_id": args.decision_id}
    return run_write(
        args, lambda root, who: materialize_apply(root, candidate, plan, decision, actor=who, expected_ids=expected)
    )
