"""``memzoi undo CHANGE_ID``: undo one applied change while its files still equal their after bytes."""

from __future__ import annotations

import argparse

from ._changes import add_common, run_write
from ._common import add_command


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``undo``."""
    p = add_command(
        sub,
        "undo",
        help="undo one applied change (see `memzoi history`)",
        description="Undo one applied change: restore every file's before bytes, while the files still equal the "
        "change's after bytes (an edit made since refuses the undo).",
        examples=["memzoi undo chg_01a2437c0f4ce7b2a3d04179", "memzoi undo 01a2437c0f4ce7b2a3d04179 --json"],
        exits={1: "refused (unknown change, not applied, a file changed since)"},
    )
    p.add_argument(
        "change_id",
        metavar="CHANGE_ID",
        help="change id, as `memzoi history` prints it (or a unique prefix; `chg_` may be left out)",
    )
    add_common(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Undo the change."""
    from ..lifecycle import undo  # noqa: PLC0415 lazy: start-up

    return run_write(args, lambda root, who: undo(root, args.change_id, actor=who))
