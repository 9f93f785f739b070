"""``memzoi history [PATH]``: ledger changes, newest first (SPEC §8)."""

from __future__ import annotations

import argparse

from ..base.printable import printable
from ._changes import add_common, describe_file, emit_json, project_root, refuse
from ._common import add_command


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``history``."""
    p = add_command(
        sub,
        "history",
        help="list ledger changes, newest first (optionally only those touching PATH)",
        description="List the changes recorded in the ledger, newest first, with their files, actor, source, "
        "reason and status. With PATH, only the changes that touched that file.",
        examples=["memzoi history", "memzoi history .memzoi/records/use-pnpm.md --limit 5", "memzoi history --json"],
        exits={1: "PATH is outside the project"},
    )
    p.add_argument("path", nargs="?", metavar="PATH", help="only changes touching this file")
    p.add_argument("--limit", type=int, help="at most this many changes")
    add_common(p, actor=False)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Print the history."""
    from ..ledger import Refusal, history  # noqa: PLC0415 lazy: start-up
    from ..lifecycle.common import rel_to_root  # noqa: PLC0415 lazy: start-up

    root = project_root(args)
    rel = None
    if args.path:
        try:
            rel = rel_to_root(root, args.path)
        except Refusal as err:
            return refuse(args, err)
    changes = history(root, rel, limit=args.limit)
    if args.json:
        emit_json({"changes": [c.to_json() for c in changes]})
        return 0
    if not changes:
        print("no changes recorded")
    for c in changes:
        print(printable(f"{c.id}  {c.status:9} {c.operation:11} {c.created_at}  {c.actor} ({c.source})  {c.summary}"))
        if c.reason:
            print(printable(f"    reason: {c.reason}"))
        if c.diagnostic:
            print(printable(f"    note: {c.diagnostic}"))
        for f in c.files:
            print(printable(f"    {describe_file(f.to_json()):8} {f.path}"))
    return 0
