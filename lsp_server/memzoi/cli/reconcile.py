"""``memzoi reconcile [--recover CHANGE_ID MODE]``: classify interrupted changes; settle uncertain ones."""

from __future__ import annotations

import argparse

from ..base.vocabulary import RECOVERY_MODES
from ._changes import actor, add_common, emit_change, emit_json, project_root, refuse
from ._common import add_command


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``reconcile``."""
    p = add_command(
        sub,
        "reconcile",
        help="classify interrupted changes (never replays); recover uncertain ones",
        description="Classify changes interrupted by a crash from the files on disk (never replaying a write); "
        "with --recover, settle an uncertain change as a new change.",
        examples=[
            "memzoi reconcile",
            "memzoi reconcile --recover chg_01a2437c0f4ce7b2a3d04179 restore-before --reason 'checked by hand'",
        ],
        exits={1: "an uncertain change waits for a recovery, or the recovery was refused"},
    )
    p.add_argument(
        "--recover",
        nargs=2,
        metavar=("CHANGE_ID", "MODE"),
        help=f"settle an uncertain change; MODE is one of {', '.join(RECOVERY_MODES)}",
    )
    p.add_argument("--reason", help="why (recorded with the recovery change)")
    add_common(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Reconcile, or run one recovery. Exit 1 while an uncertain change waits for a recovery."""
    from ..ledger import Ledger, Refusal, reconcile, recover  # noqa: PLC0415 lazy: start-up

    root = project_root(args)
    try:
        if args.recover:
            change_id, mode = args.recover
            result = recover(root, change_id, mode, actor=actor(args), reason=args.reason)
            emit_change(args, result)
            return 0
        outcomes = reconcile(root)
        ledger = Ledger.for_project(root)
        with ledger.connect() as conn:
            uncertain = [c.id for c in ledger.by_status(conn, "uncertain")]
    except Refusal as err:
        return refuse(args, err)
    if args.json:
        emit_json({"reconciled": [o.__dict__ for o in outcomes], "uncertain": uncertain})
        return 1 if uncertain else 0
    for o in outcomes:
        print(f"{o.change_id}: {o.previous} -> {o.status}")
    if not outcomes:
        print("no interrupted changes")
    for cid in uncertain:
        print(f"{cid} is uncertain: run `memzoi reconcile --recover {cid} restore-before|complete-after|accept`")
    return 1 if uncertain else 0
