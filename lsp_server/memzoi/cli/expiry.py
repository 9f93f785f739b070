"""``memzoi expiry RECORD [--evaluated-at T] [--json]``: why a repository record is or is not eligible for normal
reads (Memzoi's ``expiry``, reference §6; :mod:`memzoi.agent.expiry`). ``--json`` prints Memzoi's ``ExpiryDiagnostic``
``{record, evaluated_at, retention, current_assertion, exclusions, excluded_from_normal_reads, reason}``."""

from __future__ import annotations

import argparse
import sys

from ..base.printable import printable
from ._changes import add_common, emit_json, project_root, refuse
from ._common import add_command


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``expiry``."""
    p = add_command(
        sub,
        "expiry",
        help="explain a record's normal-read eligibility (retention and current assertion)",
        description="Evaluate a repository record's retention and current-assertion exclusions at an instant "
        "(default now) and say whether ordinary reads (search, context, precheck) include it. Reads only.",
        examples=["memzoi expiry use-pnpm", "memzoi expiry use-pnpm --evaluated-at 2027-01-01T00:00:00Z --json"],
        exits={
            1: "an unknown record, invalid retention facts, or an unusable index",
            2: "usage error (--evaluated-at is not RFC 3339 with a timezone), or not inside a project",
        },
    )
    p.add_argument("record", metavar="RECORD", help="the record id")
    p.add_argument("--evaluated-at", metavar="T", help="the instant to evaluate at (RFC 3339 with a timezone)")
    add_common(p, actor=False)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Print the diagnostic; exit 0 whether included or excluded, 1 when refused, 2 for a bad instant."""
    from ..agent.expiry import inspect_expiry  # noqa: PLC0415 lazy: start-up
    from ..ledger import Refusal  # noqa: PLC0415 lazy: start-up
    from ..models.common import parse_rfc3339  # noqa: PLC0415 lazy: start-up

    at = None
    if args.evaluated_at is not None:
        at = parse_rfc3339(args.evaluated_at.strip())
        if at is None:
            print("memzoi expiry: error: --evaluated-at must be an RFC 3339 timestamp with a timezone", file=sys.stderr)
            return 2
    try:
        out = inspect_expiry(project_root(args), args.record, at)
    except Refusal as err:
        return refuse(args, err)
    if args.json:
        emit_json(out)
        return 0
    r = out["retention"]
    state = "EXCLUDED from" if out["excluded_from_normal_reads"] else "included in"
    print(printable(f"{out['record']['id']} ({out['record']['path']}): {state} normal reads at {out['evaluated_at']}"))
    print(
        f"  retention: {r['state']} ({r['reason']}"
        + (f", boundary {r['effective_boundary']})" if r["effective_boundary"] else ")")
    )
    print(printable(f"  {out['reason']}"))
    return 0
