"""The project's verdict cache read the way a long-lived caller walks it (the language server's first scan): a chunk
of entries at a time, not the whole table (issue 29, lean memory).

:class:`memzoi.stores.verdictcache.ProjectCache` reads every entry and the facts blob when it is loaded, which
``memzoi check`` wants (it reads them before its workers fork). Held for a whole scan, the entries and the
decoded blob were 26 MB of the server's 155 MB peak at 10,000 files. :class:`StreamedCache` is the same cache
(the same entries, stamp, freshness rule, checksums and writes) with three differences:

- nothing is read when it opens; :meth:`StreamedCache.prefetch` reads the entries of the next chunk of files in
  one query, replacing those of the chunk before (an entry not prefetched is read alone);
- the facts blob is read only at :meth:`StreamedCache.save`, and only when the run changed something (a scan
  that changed nothing writes nothing);
- it keeps no :meth:`~memzoi.stores.verdictcache.ProjectCache.vouched` answers (only a stored report needs them);
- an entry whose bytes were confirmed by their hash (a stat in the racy window, or one drawn for a re-hash,
  :mod:`memzoi.base.freshness`) is kept under its new stat, and the blob is left as it is when that is all the run
  changed: its item of that file keeps the older stat, which the stat rule trusts no more than before (it is
  re-hashed or the entry decides), so the blob still never vouches for bytes the entries would not;
- when no facts blob is stored under its stamp (a first scan, a new tool or configuration), the new entries are
  written as they come, :data:`FLUSH_AT` at a time in one transaction each, instead of all at the end, and no blob
  is made: the next full ``memzoi check`` makes it from the entries (a check of a few files reads the entries
  meanwhile). Each entry stands alone (its own stat, digest and checksum), so a scan stopped halfway leaves
  sound entries.

Its connection stays open from :meth:`StreamedCache.open` to :meth:`~memzoi.stores.verdictcache.ProjectCache.save`
(or ``close``), used from one thread; the caller's worker processes come from a fork server, never forked from it.
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Iterable
from typing import Any

from ..judge.config_model import MemzoiConfig
from .store import connect, path_key, store_path, write_entries
from .verdictcache import _ENTRIES, ProjectCache, context_stamp
from .verdictfacts import read_blob

#: Entries read at most per :meth:`StreamedCache.prefetch` (SQLite's limit on parameters is 999 or more).
CHUNK_MAX = 500
#: New entries written per transaction while no blob is stored (:meth:`StreamedCache.store`).
FLUSH_AT = 500


class _Forgetting(dict[str, tuple[Any, ...]]):
    """A mapping that keeps only the last item set (the streamed cache's ``vouching``: the caller asks
    :meth:`~memzoi.stores.verdictcache.ProjectCache.vouched` right after the lookup, for the stat it vouched with)."""

    def __setitem__(self, key: str, value: tuple[Any, ...]) -> None:
        self.clear()
        super().__setitem__(key, value)


class StreamedCache(ProjectCache):
    """A :class:`~memzoi.stores.verdictcache.ProjectCache` read chunk by chunk (see the module docstring)."""

    @classmethod
    def open(cls, project_root: str | os.PathLike[str], config: MemzoiConfig | None) -> StreamedCache | None:
        """The cache of the project at ``project_root`` under the stamp of ``config``, its connection open and
        nothing read yet; ``None`` when it cannot be used. Never raises for a database or file-system problem."""
        try:
            cache = cls(store_path(project_root), context_stamp(config))
        except (OSError, RuntimeError, ValueError):
            return None
        cache.conn = connect(cache.db)
        if cache.conn is None:
            return None
        cache.vouching = _Forgetting()
        cache.keeps_read = False  # an entry not prefetched is read alone and not kept
        cache.restamped = set()
        try:
            cache.has_blob = (
                cache.conn.execute("SELECT 1 FROM facts WHERE ctx = ?", (cache.stamp,)).fetchone() is not None
            )
        except sqlite3.Error:
            cache.has_blob = True  # then as any cache: everything is written at the end
        return cache

    has_blob: bool  #: a facts blob is stored under the stamp (else entries are written as they come, no blob made)

    restamped: set[str]  #: keys whose entry only got a new stat this run (:meth:`lookup`)

    def lookup(self, path: str) -> str | None:
        """As :meth:`ProjectCache.lookup`; an entry it keeps under a new stat is noted in :attr:`restamped`."""
        key = path_key(path)
        had = key in self.put
        payload = super().lookup(path)
        if not had and key in self.put:
            self.restamped.add(key)
        return payload

    def prefetch(self, paths: Iterable[str]) -> None:
        """Read the entries of the absolute ``paths`` (at most :data:`CHUNK_MAX`) in one query; they replace the
        entries read before. On a database error each entry is read alone when asked."""
        if self.conn is None:
            return
        keys = list(dict.fromkeys(path_key(p) for p in paths))[:CHUNK_MAX]
        try:
            cur = self.conn.execute(_ENTRIES + f" AND key IN ({','.join('?' * len(keys))})", (self.stamp, *keys))
            self.rows = {r[0]: r[1:] for r in cur}
        except sqlite3.Error:
            self.rows = {}

    def store(
        self,
        path: str,
        digest: bytes,
        stamp: tuple[int, int, int, int],
        checked_ns: int,
        payload: str | None,
        facts: list[Any] | None = None,
    ) -> None:
        """As :meth:`ProjectCache.store`; a file that must not be cached loses its stored entry whether or not its
        chunk's entries are still read."""
        super().store(path, digest, stamp, checked_ns, payload, facts)
        self.restamped.discard(path_key(path))
        if payload is None:
            self.drop.add(path_key(path))
        if not self.has_blob and len(self.put) >= FLUSH_AT:
            self._write_now()

    def _write_now(self) -> None:
        """Write the new entries now, in one transaction, and forget them here (no blob needs them at the end). On a
        database error they stay, for :meth:`save` to try again."""
        if self.conn is None:
            return
        try:
            with self.conn:
                write_entries(self.conn, self.stamp, self.put.values())
        except (sqlite3.Error, ValueError):  # ValueError: a text SQLite cannot take
            return
        self.put.clear()
        self.restamped.clear()

    def save(self, complete: bool = False) -> bool:
        """As :meth:`ProjectCache.save`: with ``complete``, the entries of files the run did not see are dropped;
        when the run changed nothing, nothing is read or written."""
        conn, self.rows = self.conn, {}
        if conn is None:
            return False
        try:
            if complete:
                self.drop |= {r[0] for r in conn.execute("SELECT key FROM entries WHERE ctx = ?", (self.stamp,))}
                self.drop -= self.seen
            if not (self.put or self.drop or self.put_facts or getattr(self, "flushed", None)):
                self.close()
                return True
            if self.put.keys() <= self.restamped and not (self.drop or self.put_facts):
                return super().save(complete)  # new stats only: the entries are written, the blob stays
            self.blob = read_blob(conn, self.stamp) if self.has_blob else None  # updated with this run's entries
            if self.blob is None and self.has_blob:  # unreadable: made again from every entry
                self.rows = {r[0]: r[1:] for r in conn.execute(_ENTRIES, (self.stamp,))}
        except sqlite3.Error:
            self.blob, self.rows = None, {}
        self.restamped.clear()
        return super().save(complete)

    def _next_blob(self, drop: set[str], complete: bool = False) -> Any:  # the base's blob, or its text
        """As :meth:`ProjectCache._next_blob`; ``None`` (the stored blob stays) when the run only re-stamped entries,
        and when none is stored (none is made here)."""
        if not self.has_blob or (
            self.blob is None and self.put.keys() <= self.restamped and not (drop or self.put_facts)
        ):
            return None
        return super()._next_blob(drop, complete)


__all__ = ["CHUNK_MAX", "StreamedCache"]
