"""``memzoi reconcile [--recover CHANGE_ID MODE | --adopt RUNTIME_DIR [--assume-moved]]``: classify interrupted
changes; settle uncertain ones; bring over this checkout's ledger from another runtime folder."""

from __future__ import annotations

import argparse
from pathlib import Path

from ..base.printable import printable
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
        "with --recover, settle an uncertain change as a new change; with --adopt, bring this checkout's ledger "
        "from another runtime folder (a moved repository's, or the one kept while git refused the repository: "
        "`memzoi doctor` and `memzoi history` name it) into this one, only while this one holds no change; the "
        "old folder is kept, and a copy of the repository never takes its original's ledger.",
        examples=[
            "memzoi reconcile",
            "memzoi reconcile --recover chg_01a2437c0f4ce7b2a3d04179 restore-before --reason 'checked by hand'",
            "memzoi reconcile --adopt ~/.memzoi/projects/repo-0123456789abcdef",
        ],
        exits={1: "an uncertain change waits for a recovery, or the recovery or adoption was refused"},
    )
    one = p.add_mutually_exclusive_group()
    one.add_argument(
        "--recover",
        nargs=2,
        metavar=("CHANGE_ID", "MODE"),
        help=f"settle an uncertain change; MODE is one of {', '.join(RECOVERY_MODES)}",
    )
    one.add_argument(
        "--adopt",
        metavar="RUNTIME_DIR",
        help="bring the ledger of this checkout found in RUNTIME_DIR (as doctor names it) into this checkout's",
    )
    p.add_argument(
        "--assume-moved",
        action="store_true",
        help="with --adopt: take a ledger that records no place as a moved repository's (no copy uses it)",
    )
    p.add_argument("--reason", help="why (recorded with the recovery change)")
    add_common(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Reconcile, or run one recovery. Exit 1 while an uncertain change waits for a recovery."""
    from ..ledger import Ledger, Refusal, reconcile, recover  # noqa: PLC0415 lazy: start-up

    root = project_root(args)
    try:
        if args.adopt:
            return _adopt(args, root)
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


def _adopt(args: argparse.Namespace, root: Path) -> int:
    """``--adopt``: bring the ledger over and say what came (a refusal propagates to :func:`run`)."""
    from ..ledger.adopt import adopt_ledger, shown_adopted  # noqa: PLC0415 lazy: start-up

    adopted = shown_adopted(adopt_ledger(root, args.adopt, assume_moved=args.assume_moved))
    if args.json:
        emit_json({"adopted": adopted})
    else:
        print(
            printable(
                f"brought {adopted['changes']} change(s) from {adopted['from']} into {adopted['ledger']}; "
                "the old folder is kept"
            )
        )
    return 0
