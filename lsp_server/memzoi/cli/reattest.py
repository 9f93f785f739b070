"""``memzoi reattest RECORD``: explicitly accept a hand-edited record with a new attestation (ledgered)."""

from __future__ import annotations

import argparse

from ..lifecycle.reattest import reattest
from ._common import add_command
from ._changes import add_common, run_write


def register(sub: argparse._SubParsersAction) -> None:
    """Add ``reattest``."""
    p = add_command(
        sub, "reattest", help="accept a hand-edited record's content with a new attestation",
        description="Explicitly accept the current content of a record that was edited after review "
        "(stale_attestation) by writing a new materialization attestation, as one ledgered change.",
        examples=["memzoi reattest use-pnpm-for-installs --reason 'typo fix reviewed'"],
        exits={1: "refused (not a record, a blocking finding, a changed file)"})
    p.add_argument("record", metavar="RECORD", help="record id or path")
    p.add_argument("--reason", help="why the edit is accepted (kept in the ledger)")
    add_common(p)
    p.set_defaults(func=lambda a: run_write(a, lambda root, who: reattest(root, a.record, actor=who, reason=a.reason)))
