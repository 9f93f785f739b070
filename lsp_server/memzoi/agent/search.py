"""``search_memory``: what an agent finds for its words, in repository records, pending proposals and its
private local records, ranked and cut at the relevance floor of :mod:`memzoi.agent.query`.

Each hit carries ``provenance``: ``git`` for the repository's records and packets, ``runtime`` for private local
records (Memzoi's recall reports the plane a memory came from). Unsafe repository text is withheld as
:mod:`memzoi.agent.recall` withholds it.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from ..safety.redact import scrub
from ..stores.index import Index
from ..stores.index_queries import excerpt
from .bounds import withheld
from .query import candidates_match, matched, relevant, score, terms
from .recall import DAMAGED_ROW, Reader, _excerpt, applies_of, best_binding, damaged_row, normalize_path


class _Refreshed(Reader):
    """A :class:`~memzoi.agent.recall.Reader` over an open index of ``root`` the caller has just refreshed: read as
    it is, not refreshed again, and left open."""

    def __init__(self, root: Path, index: Index) -> None:
        super().__init__(root)
        self.index = index

    def __enter__(self) -> Reader:
        return self

    def __exit__(self, kind: type[BaseException] | None, err: BaseException | None, tb: object) -> None:
        if isinstance(err, DAMAGED_ROW):  # the caller's index stays open
            raise damaged_row(self.index.path, err) from None


def _tags(row: dict[str, Any]) -> list[str]:
    try:
        value = json.loads(row.get("tags") or "[]")
    except ValueError:
        return []
    return [str(t) for t in value] if isinstance(value, list) else []


def _reasons(r: Reader, row: dict[str, Any], unsafe: list[str]) -> list[str]:
    """Why a repository record row whose unsafe codes are ``unsafe`` is not usable memory
    (:meth:`~memzoi.agent.recall.Reader.usable`, the rule of context packs and ``get_memory``); empty when it is."""
    held: list[dict[str, Any]] = []
    return [] if r.usable(row, held, unsafe) else held[0]["reasons"]


def _query_terms(query: str, mode: str) -> list[str]:
    return terms(query) if mode == "natural" else [w.casefold() for w in re.findall(r"\w+", query)[:32]]


def search_memory(
    root: Path,
    query: str,
    *,
    limit: int = 10,
    kind: str = "record",
    type: str | None = None,
    path: str | None = None,
    tags: list[str] | None = None,
    mode: str = "natural",
    include_local: bool = True,
    rows: bool = False,
    index: Index | None = None,
) -> dict[str, Any]:
    """Search memory (see the module docstring). ``kind``: ``record`` (repository records, and local records
    unless ``include_local`` is false), ``proposal`` (pending packets) or ``all``; ``type``, ``path`` (scored by
    :func:`memzoi.agent.recall.path_match_score` against ``applies_to``/``scope.paths``) and ``tags`` (every one
    must be among the memory's tags) filter; ``mode``: ``natural``, ``all_words`` or ``phrase``
    (:mod:`memzoi.agent.query`). Active, current records come first, then by ``score`` (0–1, higher is better).
    Each hit: ``kind, id, path, title, type, lane, status, current, admitted, excerpt, unsafe, reasons, score,
    tags, provenance`` (``admitted``: the index's current verdict of a repository record, refreshed before the
    query; a pending packet and a private local record are ``true``; ``reasons``: why a record is not usable memory,
    :func:`_reasons`, a packet's unsafe codes, empty when usable)
    (and, with ``rows``, ``row``: the index's stored columns of a repository hit, for ``memzoi search --json``).
    ``memzoi search`` and the MCP tool both rank through this function, so they find the same memories. A
    superseded record's active replacement is returned with it (``successor_of``: the superseded hit's id), see
    :func:`_successors`. ``index``: an open index of ``root`` the caller has just refreshed (read as it is,
    not refreshed again: one refresh per search)."""
    if index is None:  # queried while find lists the files where the refresh takes find's listing (Reader.early)
        args: dict[str, Any] = dict(
            limit=limit, kind=kind, type=type, path=path, tags=tags, mode=mode, include_local=include_local, rows=rows
        )
        with Reader(root, lambda opened: search_memory(root, query, **args, index=opened)) as r:
            return r.early if r.early is not None else search_memory(root, query, **args, index=r.index)
    where = normalize_path(path, root) if path else None
    kinds = ("record", "proposal") if kind == "all" else (kind,)
    match = candidates_match(query, mode)
    wanted = _query_terms(query, mode)
    want_tags = {t.casefold() for t in tags or []}
    out: list[dict[str, Any]] = []
    with _Refreshed(root, index) as r:
        weights = r.weights(wanted)
        hits = r.index.search(query, limit=max(limit * 5, 50), kinds=kinds, match=match) if match else []
        for h in hits:
            row = h.row
            row_tags = _tags(row) if h.kind == "record" else []
            if type and (h.kind != "record" or row.get("type") != type):
                continue
            if h.kind == "proposal" and row.get("role") != "pending":
                continue
            if want_tags and not want_tags <= {t.casefold() for t in row_tags}:
                continue
            if (
                where
                and best_binding(applies_of(row) if h.kind == "record" else _packet_paths(r.root / h.path), [where])[0]
                == 0
            ):
                continue
            got = matched(wanted, f"{h.title}\n{row.get('body', '')}")
            cover = relevant(wanted, got, weights)
            if (mode == "natural" and cover is None) or (mode == "all_words" and got != set(wanted)):
                continue
            unsafe = r.unsafe(h.path)
            reasons = _reasons(r, row, unsafe) if h.kind == "record" else unsafe
            out.append(
                {  # an unsafe title is withheld too: it can be the attack itself
                    "kind": h.kind,
                    "row": row,
                    "id": h.id,
                    "path": h.path,
                    "title": withheld(unsafe) if unsafe else h.title,
                    "type": row.get("type"),
                    "lane": row.get("lane"),
                    "status": row.get("status"),
                    "current": h.kind == "record" and r.current(row),
                    "admitted": bool(row.get("admitted", 1)),
                    "excerpt": None if unsafe else _excerpt(h.snippet),
                    "unsafe": unsafe,
                    "reasons": reasons,
                    "tags": row_tags,
                    "provenance": "git",
                    "score": score(
                        h.score, cover if cover is not None else 1.0, len(matched(wanted, " ".join(row_tags)))
                    ),
                }
            )
            if h.kind == "record":  # a superseded hit names what replaced it: the memory to act on
                out[-1]["superseded_by"] = [
                    x[0] for x in r.db.execute("SELECT id FROM records WHERE supersedes_id = ? ORDER BY id", (h.id,))
                ]
        if "record" in kinds:
            out += _successors(r, out, query, type)
    if "record" in kinds and include_local and not where:
        out += _local_hits(root, query, mode, wanted, type, want_tags)
    out.sort(key=lambda x: (not (x["kind"] == "record" and x["status"] == "active" and x["current"]), -x["score"]))
    results = out[:limit] if rows else [{k: v for k, v in x.items() if k != "row"} for x in out[:limit]]
    return {"query": scrub(query), "mode": mode, "results": results}  # a secret in the query is not echoed


def _successors(r: Reader, out: list[dict[str, Any]], query: str, type: str | None) -> list[dict[str, Any]]:
    """The active records that replaced a superseded record among ``out`` and are not in it themselves: Memzoi's
    ``supersedes`` link (reference: memzoi-format.md, record lifecycle) followed from the hit to its current
    replacement (through a chain of supersedes, at most 10 steps), so the memory to act on is returned although
    its own words fall below the relevance floor (trial 2, defect 2). Each carries ``successor_of`` (the
    superseded hit's id) and that hit's score."""
    held = {x["path"] for x in out if x["kind"] == "record"}
    extra: list[dict[str, Any]] = []
    for hit in [x for x in out if x["kind"] == "record" and x["status"] == "superseded" and x["id"]]:
        rid, row = hit["id"], None
        for _ in range(10):
            found = r.db.execute(  # a damaged row is withheld (memzoi.stores.index_schema.sound_sql)
                f"SELECT * FROM records t WHERE supersedes_id = ? AND {r.index.sound_sql('t')} ORDER BY path LIMIT 1",
                (rid,),
            ).fetchone()
            if found is None:
                break
            row = dict(found)
            if row["status"] != "superseded":
                break
            rid = row["id"]
        if row is None or row["status"] != "active" or row["path"] in held or (type and row["type"] != type):
            continue
        held.add(row["path"])
        unsafe = r.unsafe(row["path"])
        extra.append(
            {
                "kind": "record",
                "row": row,
                "id": row["id"],
                "path": row["path"],
                "title": withheld(unsafe) if unsafe else row["title"],
                "type": row["type"],
                "lane": row["lane"],
                "status": row["status"],
                "current": r.current(row),
                "admitted": bool(row["admitted"]),
                "excerpt": None if unsafe else _excerpt(excerpt(row["title"], row["body"], query)),
                "unsafe": unsafe,
                "reasons": _reasons(r, row, unsafe),
                "tags": _tags(row),
                "provenance": "git",
                "score": hit["score"],
                "successor_of": hit["id"],
            }
        )
    return extra


def _local_hits(
    root: Path, query: str, mode: str, wanted: list[str], type: str | None, want_tags: set[str]
) -> list[dict[str, Any]]:
    """Hits among the project's private local records (runtime plane), judged by the same rule."""
    from ..ledger.local_records import list_local  # noqa: PLC0415 lazy: start-up

    out = []
    for rec in list_local(root):
        if (type and rec.type != type) or (want_tags and not want_tags <= {t.casefold() for t in rec.tags}):
            continue
        text = f"{rec.title}\n{rec.body}"
        if mode == "phrase":
            found = " ".join(query.split()).casefold() in " ".join(text.split()).casefold()
            cover = 1.0 if found else 0.0
        else:
            got = matched(wanted, text + "\n" + " ".join(rec.tags))
            cover = (relevant(wanted, got, {}) or 0.0) if mode == "natural" else float(got == set(wanted))
        if not wanted or not cover:
            continue
        out.append(
            {
                "kind": "local",
                "id": rec.id,
                "path": None,
                "title": rec.title,
                "type": rec.type,
                "lane": rec.lane,
                "status": "active",
                "current": True,
                "admitted": True,
                "excerpt": _excerpt(excerpt(rec.title, rec.body, " ".join(wanted))),
                "unsafe": [],
                "reasons": [],
                "tags": rec.tags,
                "provenance": "runtime",
                "score": score(0.0, cover, len(matched(wanted, " ".join(rec.tags)))),
            }
        )
    return out


def _packet_paths(path: Path) -> list[str]:
    from ..judge.analysis import analyze_path  # noqa: PLC0415 lazy: start-up

    data = analyze_path(path).document.data or {}
    raw_scope = data.get("scope")
    scope: dict[str, Any] = raw_scope if isinstance(raw_scope, dict) else {}
    raw_paths = scope.get("paths")
    paths: list[Any] = raw_paths if isinstance(raw_paths, list) else []
    return [str(p) for p in paths]
