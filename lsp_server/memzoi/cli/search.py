"""``memzoi search QUERY… [--json] [--limit N] [--kind record|proposal|all]``: full-text search of titles and
bodies through the workspace index (SPEC §8).

The index is refreshed first (only changed files are re-read; built from scratch when missing, with progress on
stderr). ``--json`` prints ``{"query", "records": [...], "proposals": [...]}``; record entries use Memzoi's
runtime record keys (``id, record_id, type, lane, destination, scope_kind, visibility, status, title, body,
source_kind, source_ref, proposal_id, created_at, updated_at, retention, origin, lineage``) plus ``path``,
``score`` (BM25, lower is better) and ``snippet``.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import TYPE_CHECKING, Any

from ._changes import add_common, emit_json, project_root
from ._common import add_command, refuse_linked_plane
from .rebuild import add_progress_option

if TYPE_CHECKING:
    from ..index import SearchHit


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``search``."""
    p = add_command(
        sub, "search", help="search record and proposal titles and bodies",
        description="Full-text search (BM25) of record and proposal titles and bodies through the workspace "
        "index, refreshed first for changed files.",
        examples=["memzoi search pnpm", "memzoi search problem json --kind record --limit 3 --json"],
        exits={0: "success (also with no match)", 1: "the index is unusable, or a .memzoi, records or proposals folder is a symlink",
               2: "usage error (a bad --limit), or not inside a project"})
    p.add_argument("query", nargs="+", metavar="QUERY", help="words to find (all must match; prefixes match)")
    p.add_argument("--limit", type=int, default=10, help="at most this many results (default 10)")
    p.add_argument("--kind", choices=["record", "proposal", "all"], default="all",
                   help="what to search: records, pending proposals, or both (default: all)")
    add_common(p, actor=False)
    add_progress_option(p)
    p.set_defaults(func=run)


def _loads(value: str | None) -> Any:
    return json.loads(value) if value else None


def record_json(hit: SearchHit) -> dict[str, Any]:
    """A record hit in Memzoi's runtime record shape plus ``path``, ``score`` and ``snippet``."""
    r = hit.row
    return {
        "id": r["id"], "record_id": r["id"], "path": r["path"], "type": r["type"], "lane": r["lane"],
        "destination": "repo", "scope_kind": r["scope_kind"], "scope_id": r["scope_id"],
        "visibility": r["visibility"], "status": r["status"], "title": r["title"], "body": r["body"],
        "source_kind": r["source_kind"], "source_ref": r["source_ref"], "proposal_id": r["proposal_id"],
        "created_at": r["created_at"], "updated_at": r["updated_at"], "retention": _loads(r["retention_json"]),
        "origin": _loads(r["origin_json"]), "lineage": _loads(r["lineage_json"]), "attestation": r["attestation"],
        "admitted": bool(r["admitted"]), "score": round(hit.score, 4), "snippet": hit.snippet,
    }


def proposal_json(hit: SearchHit) -> dict[str, Any]:
    """A proposal hit: id, path, status, action, targets, scope, title, score and snippet."""
    r = hit.row
    return {
        "id": r["id"], "file_id": r["file_id"], "path": r["path"], "status": r["status"], "action": r["action"],
        "targets": _loads(r["targets"]) or [], "scope_kind": r["scope_kind"], "scope_id": r["scope_id"],
        "proposed_at": r["proposed_at"], "title": r["title"], "score": round(hit.score, 4), "snippet": hit.snippet,
    }


def run(args: argparse.Namespace) -> int:
    """Search; exit 0 (also with no hits), 1 when the index is unusable, 2 for a bad ``--limit``."""
    from ..index import Index  # noqa: PLC0415 lazy: start-up
    from ..runtime_errors import guard  # noqa: PLC0415 lazy: start-up

    if args.limit < 1:
        print("memzoi: --limit must be at least 1", file=sys.stderr)
        return 2
    query = " ".join(args.query)
    kinds = ("record", "proposal") if args.kind == "all" else (args.kind,)
    root = project_root(args)
    refused = refuse_linked_plane(args, root)  # nothing is read through a symlinked .memzoi/records/proposals
    if refused is not None:
        return refused
    from .progress import Progress  # noqa: PLC0415 lazy: start-up

    progress = Progress("search", "indexing", enabled=None if not args.no_progress else False)
    try:
        # An unusable index raises RuntimeStateError, reported by the dispatcher (JSON on stdout with --json).
        with Index(root) as index, guard(index.path, "index"):
            if index.schema_problem:
                index.rebuild(progress)
            else:
                index.refresh(progress)
            hits = index.search(query, limit=args.limit, kinds=kinds)
    finally:
        progress.finish()
    if args.json or not hits:  # the detectors load only where the query is echoed
        from ..safety.redact import scrub  # noqa: PLC0415 lazy: start-up
    if args.json:
        emit_json({
            "query": scrub(query),  # a secret typed into the query is not echoed
            "records": [record_json(h) for h in hits if h.kind == "record"],
            "proposals": [proposal_json(h) for h in hits if h.kind == "proposal"],
        })
        return 0
    if not hits:
        print(f"no matches for {scrub(query)!r}", file=sys.stderr)
    for h in hits:
        status = h.row.get("status") or "?"
        print(f"{h.path}: [{h.kind}, {status}] {h.id or '(no id)'}: {h.title}")
        print(f"    {' '.join(h.snippet.split())}")
    return 0
