"""``memzoi tombstone RECORD --reason R``: propose retiring a record (pending packet)."""

from __future__ import annotations

import argparse

from ._changes import add_common, run_write
from ._common import add_command


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``tombstone``."""
    p = add_command(
        sub,
        "tombstone",
        help="create a pending proposal that tombstones a record",
        description="Create a pending proposal packet that retires a record; it is applied only by "
        "`memzoi proposals apply` after review.",
        examples=["memzoi tombstone node-20-is-the-runtime --reason 'moved to Node 22'"],
        exits={1: "refused (no such record, a changed file)"},
    )
    p.add_argument("record", metavar="RECORD", help="record id or path")
    p.add_argument("--reason", required=True, help="why the record is retired")
    add_common(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Create the tombstone packet."""
    from ..lifecycle import propose_tombstone  # noqa: PLC0415 lazy: start-up

    return run_write(args, lambda root, who: propose_tombstone(root, args.record, reason=args.reason, actor=who))
