"""``memzoi reattest RECORD``: explicitly accept a hand-edited record with a new attestation (ledgered)."""

from __future__ import annotations

import argparse

from ._changes import add_common, run_write
from ._common import add_command


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``reattest``."""
    p = add_command(
        sub,
        "reattest",
        help="accept a hand-edited record's content with a new attestation",
        description="Explicitly accept the current content of a record that was edited after review "
        "(stale_attestation) by writing a new materialization attestation, as one ledgered change.",
        examples=["memzoi reattest use-pnpm-for-installs --reason 'typo fix reviewed'"],
        exits={1: "refused (not a record, a blocking finding, a changed file)"},
    )
    p.add_argument("record", metavar="RECORD", help="record id or path")
    p.add_argument("--reason", help="why the edit is accepted (kept in the ledger)")
    add_common(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Write the new attestation."""
    from ..lifecycle.reattest import reattest  # noqa: PLC0415 lazy: start-up

    return run_write(args, lambda root, who: reattest(root, args.record, actor=who, reason=args.reason))
