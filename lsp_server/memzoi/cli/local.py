"""``memzoi local add|list|show|search``: private local records (runtime plane only, never under .memzoi/)."""

from __future__ import annotations

import argparse

from ..ledger import Refusal
from ..lifecycle import add_local, get_local, list_local, search_local
from ._changes import add_common, emit_json, project_root, read_body, refuse, run_write


def register(sub: argparse._SubParsersAction) -> None:
    """Add ``local`` and its subcommands."""
    p = sub.add_parser("local", help="private local records kept in the runtime plane")
    ps = p.add_subparsers(dest="local_command", metavar="SUBCOMMAND", required=True)
    ad = ps.add_parser("add", help="store a private local record (one ledgered change)")
    ad.add_argument("--title", required=True)
    body = ad.add_mutually_exclusive_group(required=True)
    body.add_argument("--body")
    body.add_argument("--body-file", help="file holding the body (- for stdin)")
    ad.add_argument("--type", default="fact")
    ad.add_argument("--lane", default="semantic")
    ad.add_argument("--tag", action="append", dest="tags", help="a tag (repeatable)")
    add_common(ad)
    ad.set_defaults(func=run_add)
    ls = ps.add_parser("list", help="list local records, newest first")
    add_common(ls, actor=False)
    ls.set_defaults(func=run_list)
    sh = ps.add_parser("show", help="show one local record")
    sh.add_argument("id", metavar="ID")
    add_common(sh, actor=False)
    sh.set_defaults(func=run_show)
    se = ps.add_parser("search", help="search local records (every word must match)")
    se.add_argument("query", metavar="QUERY")
    add_common(se, actor=False)
    se.set_defaults(func=run_search)


def run_add(args: argparse.Namespace) -> int:
    """Add a local record."""
    return run_write(args, lambda root, who: add_local(
        root, title=args.title, body=read_body(args), type=args.type, lane=args.lane, tags=args.tags, actor=who))


def _print(records, args) -> int:
    if args.json:
        emit_json({"records": [r.to_json() for r in records]})
        return 0
    if not records:
        print("no local records")
    for r in records:
        print(f"{r.id}  {r.type}/{r.lane}  {r.title}")
    return 0


def run_list(args: argparse.Namespace) -> int:
    """List local records."""
    return _print(list_local(project_root(args)), args)


def run_search(args: argparse.Namespace) -> int:
    """Search local records."""
    return _print(search_local(project_root(args), args.query), args)


def run_show(args: argparse.Namespace) -> int:
    """Show one local record."""
    rec = get_local(project_root(args), args.id)
    if rec is None:
        return refuse(args, Refusal("local_record_not_found", f"no local record `{args.id}`; see `memzoi local list`"))
    if args.json:
        emit_json(rec.to_json())
        return 0
    print(f"{rec.id} ({rec.type}/{rec.lane}, {rec.sensitivity}, from {rec.source_kind or 'cli'})\n# {rec.title}\n")
    print(rec.body)
    return 0
