"""``memzoi history [PATH]``: ledger changes, newest first (SPEC §8)."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from ..base.printable import printable
from ._changes import add_common, emit_json, project_root, refuse
from ._common import add_command


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``history``."""
    p = add_command(
        sub,
        "history",
        help="list ledger changes, newest first (optionally only those touching PATH)",
        description="List the changes recorded in the ledger, newest first, with their files, actor, source, "
        "reason and status. With PATH, only the changes that touched that file. Notes first name a ledger of this "
        "checkout kept in another runtime folder (a moved repository's, or the one kept while git refused it: "
        "`memzoi reconcile --adopt` brings it over).",
        examples=["memzoi history", "memzoi history .memzoi/records/use-pnpm.md --limit 5", "memzoi history --json"],
        exits={
            1: "PATH is outside the project, or the ledger is damaged (`corrupt_database`: what could be read is "
            "printed first, and the error says to run `memzoi doctor`)"
        },
    )
    p.add_argument("path", nargs="?", metavar="PATH", help="only changes touching this file")
    p.add_argument("--limit", type=int, help="at most this many changes")
    add_common(p, actor=False)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Print the history; a damaged ledger is an error (exit 1) after whatever could be read."""
    from ..ledger import Refusal, checked_history  # noqa: PLC0415 lazy: start-up
    from ..lifecycle.common import rel_to_root  # noqa: PLC0415 lazy: start-up

    root = project_root(args)
    rel = None
    if args.path:
        try:
            rel = rel_to_root(root, args.path)
        except Refusal as err:
            return refuse(args, err)
    found = checked_history(root, rel, limit=args.limit)
    changes, problem = found.changes, found.problem()
    if problem is not None and found.damage is not None:
        from ..judge.pathsafety import with_shown_paths  # noqa: PLC0415 lazy: start-up - the detectors, for a damaged ledger only

        problem = with_shown_paths(problem, found.damage.path)
    from ..base.checkout import checkout_notes  # noqa: PLC0415 lazy: start-up
    from ..judge.pathsafety import shown_local_path  # noqa: PLC0415 lazy: start-up

    notes = checkout_notes(root, shown_local_path)  # another checkout's ledger: said once, before the changes
    from ..base import ledgerfind  # noqa: PLC0415 lazy: start-up

    # this checkout's ledger in another runtime folder (moved, git refused); a copy's is not this checkout's to name
    elsewhere = ledgerfind.find_ledgers(root).without_copies()
    notes += [
        f"{message}; {step}" if step else message for _, message, step in ledgerfind.notes(elsewhere, shown_local_path)
    ]
    if args.json:
        out: dict[str, Any] = {"changes": [c.to_json() for c in changes]} if found.read else {}
        if notes:
            out["checkout_notes"] = notes
        if elsewhere.found:
            out["ledgers_elsewhere"] = [f.to_json(shown_local_path) for f in elsewhere.found]
        if problem is not None:
            out["error"] = {"code": "corrupt_database", "message": problem}
        emit_json(out)
        return 0 if problem is None else 1
    for note in notes:
        print(printable(f"note: {note}"))
    if not changes and problem is None:
        print("no changes recorded")
    for c in changes:
        print(printable(f"{c.id}  {c.status:9} {c.operation:11} {c.created_at}  {c.actor} ({c.source})  {c.summary}"))
        if c.reason:
            print(printable(f"    reason: {c.reason}"))
        if c.diagnostic:
            print(printable(f"    note: {c.diagnostic}"))
        for f in c.files:
            print(printable(f"    {f.change:8} {f.path}"))
    if problem is None:
        return 0
    from ..base.runtime_errors import after_code  # noqa: PLC0415 lazy: start-up

    print(printable(f"memzoi: corrupt_database: {after_code('corrupt_database', problem)}"), file=sys.stderr)
    return 1
