"""Reading the index: full-text search, rows by id or path, counts, drift against the files, and the stored
cross-file facts (:class:`IndexQueries`, which :class:`memzoi.stores.index.Index` inherits).

Every query of the index's SQL lives here or in :mod:`memzoi.stores.index`; other modules call these methods and
functions and never read the tables themselves.
"""

from __future__ import annotations

import itertools
import json
import os
import re
import sqlite3
from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ..project.crossfile import Workspace
    from ..project.filefacts import FileFacts

# crossfile, filefacts and pathsafety import the analysis and the detectors: they are imported by the queries
# that need them, so a search loads none of it. The marker is pathsafety's REDACTED_PREFIX (a test holds them
# equal).
_REDACTED_PREFIX = "<redacted-path:"


@dataclass
class Drift:
    """Differences between the index and the git plane (paths relative to the project root)."""

    missing_from_index: list[str] = field(default_factory=list)
    stale_in_index: list[str] = field(default_factory=list)
    changed_in_index: list[str] = field(default_factory=list)
    fts_out_of_sync: bool = False
    schema: str | None = None  # a message when the database has another schema version
    #: files that cannot be read (permissions): never indexed, and a rebuild cannot change that
    unreadable: list[str] = field(default_factory=list)

    @property
    def clean(self) -> bool:
        """True when the index matches the files exactly."""
        return not (
            self.missing_from_index
            or self.stale_in_index
            or self.changed_in_index
            or self.fts_out_of_sync
            or self.schema
        )

    def to_json(self) -> dict[str, Any]:
        """Plain dict form for ``memzoi doctor --json`` (every field, by name)."""
        return asdict(self)


@dataclass
class SearchHit:
    """One search result: ``kind`` is ``record`` or ``proposal``; ``score`` is BM25 (lower is better, as SQLite
    reports it); ``snippet`` marks matches with ``[`` ``]``; ``row`` holds the stored columns."""

    kind: str
    path: str
    id: str | None
    title: str
    score: float
    snippet: str
    row: dict[str, Any]


def fts_query(text: str, *, any_word: bool = False) -> str | None:
    """A safe FTS5 query for user text: each word quoted and prefix-matched, all required (or, with
    ``any_word``, at least one); ``None`` when the text has no word characters. FTS5 syntax in the input is never
    interpreted."""
    words = re.findall(r"\w+", text, flags=re.UNICODE)
    if not words:
        return None
    return (" OR " if any_word else " ").join('"' + w.replace('"', '""') + '"*' for w in words[:32])


_WORD = re.compile(r"\w+", flags=re.UNICODE)
#: Words shown around the first match, as FTS5's ``snippet(…, 12)`` showed them.
EXCERPT_WORDS = 12
_LEAD_WORDS = 2


def excerpt(title: str, body: str, query: str, words: int = EXCERPT_WORDS) -> str:
    """About ``words`` words of ``title``, else of ``body``, from shortly before the first word that matches
    ``query`` (each of its words is a case-insensitive prefix, as :func:`fts_query` matches them), with matching
    words in ``[…]`` and ``…`` where the text goes on. Reads the text only up to the end of that window, so it is
    linear in the text, however often the words occur. Without a match it is the first words of the body."""
    prefixes = [w.casefold() for w in _WORD.findall(query)[:32]]

    def matches(word: str) -> bool:
        low = word.casefold()
        return any(low.startswith(p) for p in prefixes)

    for text in (title, body):
        window = _window(text, matches, words)
        if window:
            return _marked(text, window, matches)
    return _marked(body, list(itertools.islice(_WORD.finditer(body), words)), lambda _w: False)


def _window(text: str, matches: Callable[[str], bool], words: int) -> list[re.Match[str]]:
    """The word matches of ``text`` from up to two words before its first matching word, ``words`` in all."""
    lead: deque[re.Match[str]] = deque(maxlen=_LEAD_WORDS)
    found = _WORD.finditer(text)
    for m in found:
        if matches(m.group()):
            return [*lead, m, *itertools.islice(found, max(0, words - len(lead) - 1))]
        lead.append(m)
    return []


def _marked(text: str, window: list[re.Match[str]], matches: Callable[[str], bool]) -> str:
    if not window:
        return ""
    start, end = window[0].start(), window[-1].end()
    parts = ["…"] if text[:start].strip() else []
    pos = start
    for m in window:
        parts.append(text[pos : m.start()])
        parts.append(f"[{m.group()}]" if matches(m.group()) else m.group())
        pos = m.end()
    if text[end:].strip():
        parts.append("…")
    return "".join(parts)


class IndexQueries:
    """The reading methods of :class:`memzoi.stores.index.Index`. They use its ``db`` (an open :mod:`sqlite3`
    connection with :class:`sqlite3.Row` rows), ``root``, ``schema_problem`` and ``_require()``."""

    db: sqlite3.Connection
    root: Path
    schema_problem: str | None

    def _require(self) -> None:  # pragma: no cover - defined by Index
        raise NotImplementedError

    def sound_sql(self, alias: str) -> str:
        """The condition a query that serves ``records`` or ``proposals`` rows (named ``alias``) adds, so that a row
        whose stored values no longer match their checksum is withheld (:func:`memzoi.stores.index_schema.sound_sql`)."""
        from .index_schema import sound_sql  # noqa: PLC0415 lazy: start-up

        return sound_sql(self.db, alias)

    # -- reading -------------------------------------------------------------------------------------------------

    def search(
        self, query: str, *, limit: int = 10, kinds: Iterable[str] = ("record", "proposal"), match: str | None = None
    ) -> list[SearchHit]:
        """Full-text search over titles and bodies (BM25, title weighted 10:1), best first, at most ``limit``
        hits per kind merged by score. ``match``: a ready FTS5 expression (:func:`memzoi.agent.query.fts_match`)
        instead of all of ``query``'s words. Returns ``[]`` for a query without words."""
        self._require()
        q = match or fts_query(query)
        if q is None:
            return []
        hits: list[SearchHit] = []
        for kind in kinds:
            table = {"record": "records", "proposal": "proposals"}[kind]
            # No FTS5 snippet(): its cost grows with the square of a document's matches (a body repeating the
            # query word 100,000 times kept `search` busy for minutes); :func:`excerpt` is linear. The best rowids
            # are chosen from the full-text index alone, then only their rows are read: joining first read every
            # matching row, body included (35,000 of 50,000 records for a common word, 75 ms against 32 ms).
            sql = (
                f"SELECT t.*, s.score FROM (SELECT rowid, bm25({table}_fts, 10.0, 1.0) AS score FROM {table}_fts "
                f"WHERE {table}_fts MATCH ? ORDER BY score, rowid LIMIT ?) s "
                f"JOIN {table} t ON t.rowid = s.rowid WHERE {self.sound_sql('t')} ORDER BY s.score, s.rowid"
            )
            try:
                rows = self.db.execute(sql, (q, limit)).fetchall()
            except sqlite3.OperationalError:
                continue
            for r in rows:
                d = dict(r)
                snip = excerpt(d["title"], d["body"], query)
                hits.append(SearchHit(kind, d["path"], d.get("id"), d["title"], d.pop("score"), snip, d))
        hits.sort(key=lambda h: h.score)
        return hits[:limit]

    def record(self, record_id: str) -> dict[str, Any] | None:
        """The indexed record with id ``record_id`` (first by path when several claim it; a damaged one is withheld:
        :meth:`sound_sql`), or ``None``.
        Used by lifecycle operations and hover; includes ``revision`` and ``attested_projection``."""
        self._require()
        sql = f"SELECT * FROM records t WHERE id = ? AND {self.sound_sql('t')} ORDER BY path LIMIT 1"
        r = self.db.execute(sql, (record_id,)).fetchone()
        return dict(r) if r else None

    def stored_facts(self) -> dict[str, FileFacts]:
        """The stored cross-file facts of every indexed file (absolute path → facts), without reading or
        analysing a file; files indexed under a redacted path are left out (their facts were stripped)."""
        from .verdictpayload import stored_facts  # noqa: PLC0415 lazy: start-up

        self._require()
        base = str(self.root)
        return {
            os.path.join(base, *r["path"].split("/")): stored_facts(json.loads(r["facts"]))
            for r in self.db.execute("SELECT path, facts FROM files")
            if not r["path"].startswith(_REDACTED_PREFIX)
        }

    def workspace(self) -> Workspace:
        """A cross-file :class:`~memzoi.project.crossfile.Workspace` loaded from stored facts, keyed by absolute path
        (no file is read or analysed). The language server starts from it and then updates open files."""
        from ..project.crossfile import Workspace  # noqa: PLC0415 lazy: start-up
        from .verdictpayload import stored_facts  # noqa: PLC0415 lazy: start-up

        self._require()
        ws = Workspace()
        for r in self.db.execute("SELECT path, facts FROM files ORDER BY path"):
            ws.update(str(self.root / r["path"]), stored_facts(json.loads(r["facts"])))
        return ws

    def counts(self) -> dict[str, int]:
        """Row counts: files, records, proposals, refused files."""
        self._require()

        def one(sql: str) -> int:
            return int(self.db.execute(sql).fetchone()[0])

        return {
            "files": one("SELECT count(*) FROM files"),
            "records": one("SELECT count(*) FROM records"),
            "proposals": one("SELECT count(*) FROM proposals"),
            "refused": one("SELECT count(*) FROM files WHERE admitted = 0 AND kind = 'record'"),
        }

    def refused_records(self) -> list[str]:
        """Paths (relative to the project root, sorted) of the indexed records that admission refused."""
        return self._paths("admitted = 0 AND kind = 'record'")

    def failed_analyses(self) -> list[str]:
        """Paths (relative to the project root, sorted) of the indexed files whose analysis failed unexpectedly
        (their stored findings hold an ``internal_error``)."""
        return self._paths("findings LIKE '%\"internal_error\"%'")

    def _paths(self, where: str) -> list[str]:
        """The sorted paths of the ``files`` rows that match the SQL condition ``where``."""
        self._require()
        return [r["path"] for r in self.db.execute(f"SELECT path FROM files WHERE {where} ORDER BY path")]


__all__ = [
    "Drift",
    "IndexQueries",
    "SearchHit",
    "fts_query",
]
