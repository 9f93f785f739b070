"""``memzoi search QUERY… [--mode natural|all_words|phrase] [--json] [--limit N] [--kind record|proposal|all]``:
search of record titles and bodies and pending proposals through the workspace index (SPEC §8), ranked as the MCP
tool ``search_memory`` ranks (one core function, :func:`memzoi.agent.search.search_memory`), with the same modes
(:mod:`memzoi.agent.query`): ``natural`` by default (a question such as "how do I build the project" finds the
record about building), ``all_words`` (every word must match, as a prefix) and ``phrase``.

The index is refreshed first (only changed files are re-read; built from scratch when missing, with progress on
stderr); the query is made while GNU find lists the files (:class:`memzoi.stores.findlisting.Ahead`) and kept only
where the refresh then judged those very rows and changed none (:meth:`memzoi.stores.index.Index.refresh_querying`),
else made again. Active, current records come first. ``--json`` prints ``{"query", "mode", "records": [...],
"proposals": [...]}``; record entries use Memzoi's runtime record keys (``id, record_id, type, lane, destination,
scope_kind, visibility, status, title, body, source_kind, source_ref, proposal_id, created_at, updated_at,
retention, origin, lineage``) plus ``path``, ``current``, ``usable``, ``reasons``, ``score`` (0–1, higher is better) and ``snippet``. A
record with a ``prompt_injection`` finding has its title and body withheld, as the MCP tool withholds them. A
record that is not usable memory (refused, or legacy) is shown with its reasons (text: after its status; JSON:
``usable: false``, ``reasons``), the verdict ``search_memory`` gives an agent.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import TYPE_CHECKING, Any

from ..agent.query import MODES, fts_match
from ..base.printable import printable
from ._changes import add_common, emit_json, project_root, refuse
from ._common import add_command, refuse_linked_plane
from .rebuild import add_progress_option

if TYPE_CHECKING:
    from ..stores.index import Index


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``search``."""
    p = add_command(
        sub,
        "search",
        help="search record and pending proposal titles and bodies",
        description="Search of record and pending proposal titles and bodies through the workspace index, "
        "refreshed first for changed files, ranked as the MCP tool search_memory ranks (BM25 with a relevance "
        "floor; active, current records first).",
        examples=[
            "memzoi search how do I build the project",
            "memzoi search pnpm --mode all_words",
            "memzoi search 'run make' --mode phrase",
            "memzoi search problem json --kind record --limit 3 --json",
        ],
        exits={
            0: "success (also with no match)",
            1: "the index is unusable, or a .memzoi, records or proposals folder is a symlink",
            2: "usage error (a bad --limit), or not inside a project",
        },
    )
    p.add_argument("query", nargs="+", metavar="QUERY", help="words or a question to find (see --mode)")
    p.add_argument(
        "--mode",
        choices=list(MODES),
        default="natural",
        help="natural (default): a question or words, stop words dropped, any remaining word may match, "
        "cut at a relevance floor; all_words: every word must match (prefixes match); phrase: the words "
        "in this order",
    )
    p.add_argument("--limit", type=int, default=10, help="at most this many results (default 10)")
    p.add_argument(
        "--kind",
        choices=["record", "proposal", "all"],
        default="all",
        help="what to search: records (every status: active, superseded, tombstoned, listed after the "
        "active ones), pending proposal packets (resolved packets, applied or rejected, are not "
        "searched), or both (default: all)",
    )
    add_common(p, actor=False)
    add_progress_option(p)
    # the results are the last thing a search does: its process need not free what it held (main.end_at_once)
    p.set_defaults(func=run, end_at_once=True)


def _loads(value: str | None) -> Any:
    return json.loads(value) if value else None


def record_json(hit: dict[str, Any]) -> dict[str, Any]:
    """A record hit of :func:`memzoi.agent.search.search_memory` (called with ``rows``) in Memzoi's runtime record
    shape plus ``path``, ``current``, ``usable`` and ``reasons`` (whether it is usable memory and why not: the
    MCP tool's verdict, :meth:`memzoi.agent.recall.Reader.usable`), ``score`` (0–1, higher is better) and
    ``snippet``; an unsafe record's title and body withheld."""
    r = hit["row"]
    return {
        "id": r["id"],
        "record_id": r["id"],
        "path": r["path"],
        "type": r["type"],
        "lane": r["lane"],
        "destination": "repo",
        "scope_kind": r["scope_kind"],
        "scope_id": r["scope_id"],
        "visibility": r["visibility"],
        "status": r["status"],
        "title": hit["title"],
        "body": None if hit["unsafe"] else r["body"],
        "source_kind": r["source_kind"],
        "source_ref": r["source_ref"],
        "proposal_id": r["proposal_id"],
        "created_at": r["created_at"],
        "updated_at": r["updated_at"],
        "retention": _loads(r["retention_json"]),
        "origin": _loads(r["origin_json"]),
        "lineage": _loads(r["lineage_json"]),
        "attestation": r["attestation"],
        "admitted": bool(r["admitted"]),
        "current": hit["current"],
        # the agent's verdict (memzoi.agent.recall.Reader.usable, one rule): a legacy record is admitted as a
        # warning yet is not usable memory until upgraded
        "usable": not hit["reasons"],
        "reasons": hit["reasons"],
        "score": hit["score"],
        "snippet": hit["excerpt"] or "",
    }


def proposal_json(hit: dict[str, Any]) -> dict[str, Any]:
    """A pending proposal hit: id, path, status, action, targets, scope, title, score and snippet."""
    r = hit["row"]
    return {
        "id": r["id"],
        "file_id": r["file_id"],
        "path": r["path"],
        "status": r["status"],
        "action": r["action"],
        "targets": _loads(r["targets"]) or [],
        "scope_kind": r["scope_kind"],
        "scope_id": r["scope_id"],
        "proposed_at": r["proposed_at"],
        "title": hit["title"],
        "score": hit["score"],
        "snippet": hit["excerpt"] or "",
    }


def run(args: argparse.Namespace) -> int:
    """Search; exit 0 (also with no hits), 1 when the index is unusable, 2 for a bad ``--limit`` or a query without
    a word to search for (empty, blanks or punctuation only: it would match nothing, whatever the index holds)."""
    if args.limit < 1:
        print("memzoi: --limit must be at least 1", file=sys.stderr)
        return 2
    query_text = " ".join(args.query)
    if fts_match(query_text, args.mode) is None:
        print("memzoi: QUERY holds no word to search for (letters or digits, two or more)", file=sys.stderr)
        return 2
    root = project_root(args)
    refused = refuse_linked_plane(args, root)  # nothing is read through a symlinked .memzoi/records/proposals
    if refused is not None:
        return refused
    from ..stores.findlisting import Ahead  # noqa: PLC0415 lazy: start-up

    # the refresh's listing by find in a process of its own (started by the entry point where it could), first: the
    # rest is imported meanwhile
    walked = Ahead(root)
    from ..base.runtime_errors import guard  # noqa: PLC0415 lazy: start-up
    from ..ledger import Refusal  # noqa: PLC0415 lazy: start-up
    from ..runs.checkimports import cached_patterns  # noqa: PLC0415 lazy: start-up
    from ..stores.readindex import open_for_read  # noqa: PLC0415 lazy: start-up

    with cached_patterns():  # the detectors that scrub the query compile their patterns from the cache
        from ..agent.search import search_memory  # noqa: PLC0415 lazy: start-up
    from .progress import Progress  # noqa: PLC0415 lazy: start-up

    progress = Progress("search", "indexing", enabled=None if not args.no_progress else False)

    def query(index: Index) -> dict[str, Any]:
        # The same ranking as the MCP tool (memzoi.agent.search), on the index as it is (not refreshed again);
        # private local records are `memzoi local search`.
        return search_memory(
            root,
            query_text,
            limit=args.limit,
            kind=args.kind,
            mode=args.mode,
            include_local=False,
            rows=True,
            index=index,
        )

    scratch = None
    try:
        # An unusable index raises RuntimeStateError, reported by the dispatcher (JSON on stdout with --json); a
        # home that cannot be written gets a private index for this search (stores.readindex).
        opened, scratch = open_for_read(root, workers=None)
        with opened as index, guard(index.path, "index"):
            early = None
            try:
                if index.schema_problem:
                    index.rebuild(progress)
                else:  # queried while find lists the files; that answer stands where the refresh changed no row
                    early = index.refresh_querying(query, progress, walked)
            finally:
                progress.finish()
            found = early if early is not None else query(index)
    except Refusal as err:
        return refuse(args, err)
    finally:
        walked.close()  # find is reaped even where the refresh did not ask for its listing (a rebuild)
        if scratch is not None:
            scratch.cleanup()
    hits = found["results"]
    if args.json:
        emit_json(
            {
                "query": found["query"],
                "mode": args.mode,  # a secret typed into the query is not echoed
                "records": [record_json(h) for h in hits if h["kind"] == "record"],
                "proposals": [proposal_json(h) for h in hits if h["kind"] == "proposal"],
            }
        )
        return 0
    if not hits:
        rule = {
            "natural": "no record or pending proposal passed the relevance floor",
            "all_words": "every word must match",
            "phrase": "the words must appear in this order",
        }[args.mode]
        print(printable(f"no matches for {found['query']!r} ({args.mode} mode: {rule})"), file=sys.stderr)
    for h in hits:
        status = h.get("status") or "?"
        if h["kind"] == "record" and h["reasons"]:  # shown to a human, but said not to be usable memory
            status += f", not usable memory: {', '.join(h['reasons'])}"
        print(printable(f"{h['path']}: [{h['kind']}, {status}] {h['id'] or '(no id)'}: {h['title']}"))
        if h["excerpt"]:
            print(printable(f"    {' '.join(h['excerpt'].split())}"))
    return 0
