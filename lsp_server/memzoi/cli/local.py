"""``memzoi local add|list|show|search``: private local records (runtime plane only, never under .memzoi/);
``memzoi local pending|approve|reject``: local candidates proposed by agents (``memzoi-mcp``)."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from ..base.printable import printable, printable_block
from ._changes import actor, add_common, emit_json, project_root, read_body, refuse, run_write
from ._common import add_command, add_group

if TYPE_CHECKING:  # the record type only: the local lane loads when a command runs
    from ..ledger.local_records import LocalRecord


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``local`` and its subcommands."""
    p = add_command(
        sub,
        "local",
        help="private local records kept in the runtime plane",
        description="Private local records live only in the runtime database under ${MEMZOI_HOME:-~/.memzoi}, "
        "never under .memzoi/ and never in git. Secrets are refused.",
        examples=["memzoi local add --title 'My editor setup' --body 'I use tabs locally.'", "memzoi local list"],
        exits={1: "a refused write or an unknown id"},
    )
    ps = add_group(p, "local_command")
    ad = add_command(
        ps,
        "add",
        help="store a private local record (one ledgered change)",
        description="Store a private local record in the runtime plane as one ledgered change.",
        examples=[
            "memzoi local add --title 'Prefer rg' --body 'Use ripgrep for searches.' --tag tools",
            "memzoi local add --title 'Notes' --body-file notes.md --type procedure --lane procedural",
        ],
        exits={1: "refused (a secret in the text, an invalid type or lane)"},
    )
    ad.add_argument("--title", required=True, help="title of the record")
    body = ad.add_mutually_exclusive_group(required=True)
    body.add_argument("--body", help="body of the record")
    body.add_argument("--body-file", help="file holding the body (- for stdin)")
    ad.add_argument("--type", default="fact", help="memory type (default: fact)")
    ad.add_argument("--lane", default="semantic", help="memory lane (default: semantic)")
    ad.add_argument("--tag", action="append", dest="tags", help="a tag (repeatable)")
    add_common(ad)
    ad.set_defaults(func=run_add)
    ls = add_command(
        ps,
        "list",
        help="list local records, newest first",
        description="List the private local records of this project, newest first.",
        examples=["memzoi local list", "memzoi local list --json"],
        exits={},
    )
    add_common(ls, actor=False)
    ls.set_defaults(func=run_list)
    sh = add_command(
        ps,
        "show",
        help="show one local record",
        description="Show one private local record: its type, lane, sensitivity, title and body.",
        examples=["memzoi local show loc-0123", "memzoi local show loc-0123 --json"],
        exits={1: "no local record has this id"},
    )
    sh.add_argument("id", metavar="ID", help="local record id (see `memzoi local list`)")
    add_common(sh, actor=False)
    sh.set_defaults(func=run_show)
    se = add_command(
        ps,
        "search",
        help="search local records (every word must match)",
        description="Search the private local records' titles and bodies; every word must match.",
        examples=["memzoi local search ripgrep", "memzoi local search 'editor tabs' --json"],
        exits={},
    )
    se.add_argument("query", metavar="QUERY", help="words to find (all must match)")
    add_common(se, actor=False)
    se.set_defaults(func=run_search)
    pe = add_command(
        ps,
        "pending",
        help="list local candidates proposed by agents that wait for a decision",
        description="List the local candidates that agents proposed (memzoi-mcp) and that [promotion] "
        "keeps for a human decision.",
        examples=["memzoi local pending", "memzoi local pending --json"],
        exits={},
    )
    add_common(pe, actor=False)
    pe.set_defaults(func=run_pending)
    ap = add_command(
        ps,
        "approve",
        help="apply a pending local candidate as a private local record (one ledgered "
        "change; `memzoi undo` reverts it)",
        description="Apply a pending local candidate as a private local record, as one ledgered change "
        "that `memzoi undo` reverts.",
        examples=["memzoi local approve cand-0123"],
        exits={1: "refused (unknown or settled candidate)"},
    )
    ap.add_argument("id", metavar="CANDIDATE", help="candidate id (see `memzoi local pending`)")
    add_common(ap)
    ap.set_defaults(func=run_approve)
    rj = add_command(
        ps,
        "reject",
        help="reject a pending local candidate with a reason",
        description="Reject a pending local candidate with a reason; nothing is stored.",
        examples=["memzoi local reject cand-0123 --reason 'not worth keeping'"],
        exits={1: "refused (unknown or settled candidate)"},
    )
    rj.add_argument("id", metavar="CANDIDATE", help="candidate id (see `memzoi local pending`)")
    rj.add_argument("--reason", required=True, help="why it is rejected")
    add_common(rj)
    rj.set_defaults(func=run_reject)


def run_add(args: argparse.Namespace) -> int:
    """Add a local record."""
    from ..lifecycle import add_local  # noqa: PLC0415 lazy: start-up

    return run_write(
        args,
        lambda root, who: add_local(
            root, title=args.title, body=read_body(args), type=args.type, lane=args.lane, tags=args.tags, actor=who
        ),
    )


def _print(records: list[LocalRecord], args: argparse.Namespace) -> int:
    if args.json:
        emit_json({"records": [r.to_json() for r in records]})
        return 0
    if not records:
        print("no local records")
    for r in records:
        print(printable(f"{r.id}  {r.type}/{r.lane}  {r.title}"))
    return 0


def run_list(args: argparse.Namespace) -> int:
    """List local records."""
    from ..lifecycle import list_local  # noqa: PLC0415 lazy: start-up

    return _print(list_local(project_root(args)), args)


def run_search(args: argparse.Namespace) -> int:
    """Search local records."""
    from ..lifecycle import search_local  # noqa: PLC0415 lazy: start-up

    return _print(search_local(project_root(args), args.query), args)


def run_show(args: argparse.Namespace) -> int:
    """Show one local record."""
    from ..ledger import Refusal  # noqa: PLC0415 lazy: start-up
    from ..lifecycle import get_local  # noqa: PLC0415 lazy: start-up

    rec = get_local(project_root(args), args.id)
    if rec is None:
        return refuse(args, Refusal("local_record_not_found", f"no local record `{args.id}`; see `memzoi local list`"))
    if args.json:
        emit_json(rec.to_json())
        return 0
    print(printable(f"{rec.id} ({rec.type}/{rec.lane}, {rec.sensitivity}, from {rec.source_kind or 'cli'})"))
    if rec.applies_to:
        print(printable(f"applies to: {', '.join(rec.applies_to)}"))
    print(printable(f"# {rec.title}") + "\n")
    print(printable_block(rec.body))
    return 0


def run_pending(args: argparse.Namespace) -> int:
    """List pending local candidates."""
    from ..lifecycle.candidates import list_candidates  # noqa: PLC0415 lazy: start-up

    items = list_candidates(project_root(args))
    if args.json:
        emit_json({"candidates": [c.to_json() for c in items]})
        return 0
    if not items:
        print("no pending local candidates")
    for c in items:
        print(printable(f"{c.id}  {c.type}/{c.lane}  confidence {c.confidence_bp / 10_000:g}  by {c.actor}  {c.title}"))
        print(printable(f"    reason: {c.reason}"))
        if c.applies_to:
            print(printable(f"    applies to: {', '.join(c.applies_to)}"))
    return 0


def run_approve(args: argparse.Namespace) -> int:
    """Apply a pending local candidate."""
    from ..lifecycle.candidates import approve_local  # noqa: PLC0415 lazy: start-up

    return run_write(args, lambda root, who: approve_local(root, args.id, actor=who))


def run_reject(args: argparse.Namespace) -> int:
    """Reject a pending local candidate."""
    from ..ledger import Refusal  # noqa: PLC0415 lazy: start-up
    from ..lifecycle.candidates import reject_local  # noqa: PLC0415 lazy: start-up

    try:
        cand = reject_local(project_root(args), args.id, reason=args.reason, actor=actor(args))
    except Refusal as err:
        return refuse(args, err)
    if args.json:
        emit_json(cand.to_json())
    else:
        print(f"local candidate {cand.id} rejected")
    return 0
