"""``memzoi supersede RECORD --title T --body-file F --reason R``: propose a replacement (pending packet)."""

from __future__ import annotations

import argparse

from ._changes import add_common, read_body, run_write
from ._common import add_command


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``supersede``."""
    p = add_command(
        sub,
        "supersede",
        help="create a pending proposal that supersedes a record",
        description="Create a pending proposal packet that replaces a record with a new one; it is applied only "
        "by `memzoi proposals apply` after review.",
        examples=[
            "memzoi supersede use-pnpm-for-installs --title 'Use pnpm 9' --body-file new.md "
            "--reason 'pnpm 9 changed the lockfile'"
        ],
        exits={1: "refused (no such record, a secret in the text, a changed file)"},
    )
    p.add_argument("record", metavar="RECORD", help="record id or path")
    p.add_argument("--title", required=True, help="title of the replacement record")
    body = p.add_mutually_exclusive_group(required=True)
    body.add_argument("--body", help="body of the replacement record")
    body.add_argument("--body-file", help="file holding the body (- for stdin)")
    p.add_argument("--reason", required=True, help="why the record is superseded")
    add_common(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Create the supersede packet."""
    from ..lifecycle import propose_supersede  # noqa: PLC0415 lazy: start-up

    return run_write(
        args,
        lambda root, who: propose_supersede(
            root, args.record, title=args.title, body=read_body(args), reason=args.reason, actor=who
        ),
    )
