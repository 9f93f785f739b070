"""``memzoi capture plan|review|apply``: evidence-backed capture of one Markdown file with Memzoi's
``markdown-deterministic`` profile (Memzoi's ``capture`` commands, reference §8; rules in
:mod:`memzoi.lifecycle.capture_plan`, :mod:`~memzoi.lifecycle.capture_review` and
:mod:`~memzoi.lifecycle.capture_apply`). ``plan`` and ``review`` write no memory state; ``apply`` writes one
ledgered change."""

from __future__ import annotations

import argparse
from typing import Any

from ..base.printable import printable
from ._changes import add_root_json, emit_json, project_root, read_text_file, refuse
from ._common import add_command, add_group


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``capture`` with ``plan``, ``review`` and ``apply``."""
    p = add_command(
        sub,
        "capture",
        help="plan, review and apply evidence-backed capture from a Markdown file",
        description="Capture typed sections (`## Decision: …`, `## Preference: …`, …) of one project Markdown file. "
        "`plan` extracts candidates with their evidence, `review` records a decision on each, and `apply` writes "
        "the accepted ones (pending packets, private runtime rows) as one ledgered change.",
        examples=[
            "memzoi capture plan --source notes/findings.md --json",
            "memzoi capture review --plan-file plan.json --decisions-file decisions.json --reviewed-by zoki "
            "--reviewed-at 2026-07-10T12:00:00Z --json",
            "memzoi capture apply --plan-file plan.json --review-file review.json --plan-id capture_… "
            "--review-id review_…",
        ],
        exits={1: "a refused input or a stale plan or review (nothing written)"},
    )
    ps = add_group(p, "capture_command")
    pl = add_command(
        ps,
        "plan",
        help="the deterministic capture plan of one Markdown file (writes no memory)",
        description="Extract candidates from one project-relative .md file (--source) or a "
        "memzoi/capture-request (--request-file) and print the plan.",
        examples=[
            "memzoi capture plan --source notes/findings.md",
            "memzoi capture plan --request-file request.yaml --json",
        ],
        exits={1: "an invalid source or request"},
    )
    src = pl.add_mutually_exclusive_group(required=True)
    src.add_argument("--source", metavar="PATH", help="project-relative Markdown file")
    src.add_argument("--request-file", metavar="FILE", help="a memzoi/capture-request (JSON or YAML)")
    pl.add_argument("--source-id", help="the source id (default: from the file name)")
    pl.add_argument("--output", metavar="FILE", help="also save the plan artifact (never replacing a path)")
    add_root_json(pl)
    pl.set_defaults(func=run_plan)
    rv = add_command(
        ps,
        "review",
        help="decide every candidate of a plan (writes no memory)",
        description="Record accept, reject, edit or defer for every candidate of the plan; the review "
        "id pins the plan, reviewer, time and decisions.",
        examples=[
            "memzoi capture review --plan-file plan.json --decisions-file decisions.json "
            "--reviewed-by zoki --reviewed-at 2026-07-10T12:00:00Z"
        ],
        exits={1: "invalid decisions or a stale plan"},
    )
    rv.add_argument("--plan-file", required=True, metavar="FILE", help="the plan artifact (`capture plan --output`)")
    rv.add_argument(
        "--decisions-file",
        required=True,
        metavar="FILE",
        help='JSON or YAML: {"schema": "memzoi/capture-review-input", "plan_id", "decisions": [{"candidate_id", '
        '"outcome": accept|reject|edit|defer, and for edit "memory" and optionally "destination"}]} '
        "(docs/runtime-plane.md, Capture)",
    )
    rv.add_argument("--reviewed-by", required=True, help="who reviewed the candidates")
    rv.add_argument("--reviewed-at", required=True, help="RFC 3339 time")
    rv.add_argument("--output", metavar="FILE", help="also save the review artifact")
    add_root_json(rv)
    rv.set_defaults(func=run_review)
    ap = add_command(
        ps,
        "apply",
        help="write the accepted candidates (one ledgered change)",
        description="Revalidate the plan and review and write the accepted or edited candidates: "
        "repo ones as pending packets, local and session ones as private runtime rows.",
        examples=[
            "memzoi capture apply --plan-file plan.json --review-file review.json "
            "--plan-id capture_… --review-id review_…"
        ],
        exits={1: "a stale or altered plan or review, or another refusal (nothing written)"},
    )
    for flag, text in (
        ("--plan-file", "the plan artifact"),
        ("--review-file", "the review artifact"),
        ("--plan-id", "the plan id you reviewed (capture_…)"),
        ("--review-id", "the review id you apply (review_…)"),
    ):
        ap.add_argument(flag, required=True, help=text)
    ap.add_argument("--actor", default="cli", help="who applies (default: cli)")
    add_root_json(ap)
    ap.set_defaults(func=run_apply)


def _emit(args: argparse.Namespace, artifact: dict[str, Any], lines: list[str]) -> int:
    from ..lifecycle.capture_artifacts import save_artifact  # noqa: PLC0415 lazy: start-up

    if getattr(args, "output", None):
        save_artifact(project_root(args), args.output, artifact)
    if args.json:
        emit_json(artifact)
    else:
        print("\n".join(map(printable, lines)))
    return 0


def _plan_lines(plan: dict[str, Any]) -> list[str]:
    lines = [f"capture plan {plan['plan_id']} ({plan['status']}, {plan['data_class']})"]
    for d in plan.get("diagnostics", []):
        lines.append(
            f"  diagnostic {d['code']}"
            + (f" ({d['detector']})" if d.get("detector") else "")
            + (f" at line {d['line']}" if d.get("line") else "")
        )
    for c in plan.get("candidates", []):
        a = c["action"]
        where = (
            a.get("path")
            or a.get("route")
            or a.get("reason_code")
            or a.get("code")
            or ", ".join(m["id"] for m in a.get("matches", []))
        )
        lines.append(
            f"  {c['candidate_id']} {c['classification']['destination']:<12} {a['kind']:<15} "
            f"{c['memory']['title']} -> {where}"
        )
    return lines


def run_plan(args: argparse.Namespace) -> int:
    """Print (and optionally save) the plan."""
    from ..ledger import Refusal  # noqa: PLC0415 lazy: start-up
    from ..lifecycle.capture_plan import plan_capture  # noqa: PLC0415 lazy: start-up

    try:
        request = read_text_file(args.request_file) if args.request_file else None
        plan = plan_capture(
            project_root(args),
            source=args.source,
            request_text=request,
            request_where=args.request_file or "request",
            source_id=args.source_id,
        )
        return _emit(args, plan, _plan_lines(plan))
    except Refusal as err:
        return refuse(args, err)


def run_review(args: argparse.Namespace) -> int:
    """Print (and optionally save) the review."""
    from ..ledger import Refusal  # noqa: PLC0415 lazy: start-up
    from ..lifecycle.capture_artifacts import read_artifact  # noqa: PLC0415 lazy: start-up
    from ..lifecycle.capture_review import review_capture  # noqa: PLC0415 lazy: start-up

    try:
        review = review_capture(
            project_root(args),
            read_artifact(args.plan_file, "plan file"),
            read_artifact(args.decisions_file, "decisions file"),
            reviewed_by=args.reviewed_by,
            reviewed_at=args.reviewed_at,
        )
        lines = [f"capture review {review['review_id']} of {review['plan_id']} ({review['data_class']})"]
        lines += [f"  {d['candidate_id']} {d['outcome']}" for d in review["decisions"]]
        return _emit(args, review, lines)
    except Refusal as err:
        return refuse(args, err)


def run_apply(args: argparse.Namespace) -> int:
    """Apply the review."""
    from ..ledger import Refusal  # noqa: PLC0415 lazy: start-up
    from ..lifecycle.capture_apply import capture_apply  # noqa: PLC0415 lazy: start-up
    from ..lifecycle.capture_artifacts import read_artifact  # noqa: PLC0415 lazy: start-up

    try:
        out = capture_apply(
            project_root(args),
            read_artifact(args.plan_file, "plan file"),
            read_artifact(args.review_file, "review file"),
            plan_id=args.plan_id,
            review_id=args.review_id,
            actor=args.actor,
        )
    except Refusal as err:
        return refuse(args, err)
    if args.json:
        emit_json(out)
        return 0
    again = " (replayed)" if out["replayed"] else ""
    print(
        printable(
            f"capture applied{again}: " + (f"change {out['change_id']}" if out["change_id"] else "nothing to write")
        )
    )
    for w in out["writes"]:
        print(
            printable(
                "  wrote " + (w["path"] if w["kind"] == "proposal_file" else f"{w['destination']} {w['record_id']}")
            )
        )
    return 0
