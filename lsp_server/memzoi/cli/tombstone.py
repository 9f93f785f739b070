"""``memzoi tombstone RECORD --reason R``: propose retiring a record (pending packet)."""

from __future__ import annotations

import argparse

from ..lifecycle import propose_tombstone
from ._changes import add_common, run_write


def register(sub: argparse._SubParsersAction) -> None:
    """Add ``tombstone``."""
    p = sub.add_parser("tombstone", help="create a pending proposal that tombstones a record")
    p.add_argument("record", metavar="RECORD", help="record id or path")
    p.add_argument("--reason", required=True, help="why the record is retired")
    add_common(p)
    p.set_defaults(func=lambda a: run_write(
        a, lambda root, who: propose_tombstone(root, a.record, reason=a.reason, actor=who)))
