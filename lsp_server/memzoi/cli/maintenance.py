"""``memzoi maintenance plan [--record-id ID…] [--evaluated-at T] [--output FILE] [--json]``: Memzoi's immutable,
report-only ``memzoi/maintenance-plan`` over the repository records (reference §8; :mod:`memzoi.agent.maintenance`).
The plan is printed (JSON with ``--json``, else a summary of its findings); ``--output`` writes it to a file outside
the git worktree and the memzoi runtime home, the command's only write. ``maintenance materialize`` is not here."""

from __future__ import annotations

import argparse

from ..base.printable import printable
from ._changes import add_common, emit_json, project_root, refuse
from ._common import add_command, add_group


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``maintenance`` and ``maintenance plan``."""
    p = add_command(
        sub,
        "maintenance",
        help="repository maintenance evidence (duplicates, contradictions, staleness, expiry)",
        description="Report-only maintenance evidence over the canonical repository records.",
        examples=["memzoi maintenance plan", "memzoi maintenance plan --json"],
        exits={1: "refused (an unknown target, a record that cannot be planned over, --output inside the project)"},
    )
    ps = add_group(p, "maintenance_command")
    pl = add_command(
        ps,
        "plan",
        help="emit the immutable memzoi/maintenance-plan (no write but --output)",
        description="Evaluate the repository records at --evaluated-at (default now): exact duplicates, "
        "contradictions as full sets with no winner, staleness (180 days) and expiry. The same snapshot and time "
        "always give the same plan and plan_id. Nothing in the project or the runtime is written.",
        examples=[
            "memzoi maintenance plan",
            "memzoi maintenance plan --record-id use-pnpm --json",
            "memzoi maintenance plan --evaluated-at 2027-01-01T00:00:00Z --output ../maintenance-plan.json",
        ],
        exits={
            1: "refused (an unknown --record-id, a record not admitted or not repository-scoped, invalid "
            "retention facts, --output inside the worktree or the runtime home)",
            2: "usage error, or not inside a project",
        },
    )
    pl.add_argument(
        "--record-id",
        action="append",
        default=[],
        metavar="ID",
        help="a target record (repeatable; default: every record)",
    )
    pl.add_argument("--evaluated-at", metavar="T", help="the evaluation instant (RFC 3339 with a timezone)")
    pl.add_argument("--output", metavar="FILE", help="also write the plan here (outside the worktree and runtime)")
    add_common(pl, actor=False)
    pl.set_defaults(func=run_plan)


def run_plan(args: argparse.Namespace) -> int:
    """Plan; exit 0 (whatever the findings), 1 when refused."""
    from ..agent.maintenance import plan_maintenance, request  # noqa: PLC0415 lazy: start-up
    from ..agent.maintenance_output import write_plan  # noqa: PLC0415 lazy: start-up
    from ..ledger import Refusal  # noqa: PLC0415 lazy: start-up

    root = project_root(args)
    try:
        plan = plan_maintenance(root, request(args.record_id, args.evaluated_at))
        written = write_plan(root, plan, args.output) if args.output else None
    except Refusal as err:
        return refuse(args, err)
    if args.json:
        emit_json(plan)
        return 0
    s = plan["summary"]
    print(
        f"maintenance plan {plan['plan_id']} at {plan['evaluated_at']} (valid until {plan['not_after']}): "
        f"{s['records']} record(s), {s['exact_duplicates']} exact duplicate set(s), {s['contradictions']} "
        f"contradiction set(s), {s['stale']} stale, {s['expired']} expired"
    )
    for f in plan["findings"]:
        print(printable(f"  {f['kind']}: {', '.join(f['record_ids'])}"))
    if written is not None:
        print(printable(f"written to {written}"))
    return 0
