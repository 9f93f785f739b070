"""``memzoi undo CHANGE_ID``: undo one applied change while its files still equal their after bytes."""

from __future__ import annotations

import argparse

from ..lifecycle import undo
from ._changes import add_common, run_write


def register(sub: argparse._SubParsersAction) -> None:
    """Add ``undo``."""
    p = sub.add_parser("undo", help="undo one applied change (see `memzoi history`)")
    p.add_argument("change_id", metavar="CHANGE_ID", help="change id (or a unique prefix)")
    add_common(p)
    p.set_defaults(func=lambda a: run_write(a, lambda root, who: undo(root, a.change_id, actor=who)))
