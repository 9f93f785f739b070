"""A persistent cache of the part of a file's verdict that depends only on its bytes, kept in the project's runtime
directory, so a second ``memzoi check`` of an unchanged workspace does not analyse anything again.

**What an entry holds.** For one file at one absolute path, the first stage of its verdict
(:func:`memzoi.project.verdict.local`) minus everything that comes from outside its bytes: the analysis findings (code,
message, span, severity, data; never the quick fixes, whose edits hold document text), its role, the span of its
opening ``---``, whether it is attested, its cross-file facts (:class:`~memzoi.project.filefacts.FileFacts`), its line
starts and length in code points (so findings are placed without reading the file) and its retention mark
(:class:`~memzoi.judge.retention.RetentionMark`). Recomputed on every run, never cached: ``retention_query_only`` (from
the mark, at the run's clock: a boundary that passes with no edit is reported), ``canonical_path`` (the file
system is asked again), and the whole second stage (:func:`memzoi.project.verdict.settle`: git visibility, ledger,
cross-file findings, ``[rules]`` grading).

**What is never stored.** A file with any finding of :data:`memzoi.safety.redact.SECRET_CODES` (a credential,
high-entropy value or personal data in its text or in its path) gets no entry: its facts could hold the secret
(an id, a reference). A record whose attestation is stale gets no verdict entry either (only an entry of its facts,
below), because its finding is explained from the committed version in git
(:func:`memzoi.project.verdict.explain_stale`), which changes without the file changing. A symlink, or a file
reached through a symlinked folder (a ``canonical_path`` finding), gets none: Memzoi refuses it, and its stat says
nothing about the link. Paths are stored as BLAKE3 hashes. So the cache holds findings and
facts only, no raw text and no matched value.

**When an entry is used.** Only under the same *context stamp*: the tool (version, a digest of the installed
source and the parsing libraries, :func:`memzoi.stores.toolstamp.tool_stamp`) and the project configuration
(``config.toml`` as loaded). Then for the bytes it was made from, by the one freshness rule of the project's stores
(:mod:`memzoi.base.freshness`): the stat stamp (size, mtime, inode, ctime) vouches for them without reading only when it
is unchanged, not racy, on a file system whose ctime cannot be set back, and the entry is not drawn for a re-hash;
otherwise, when the size matches, the file is read and its BLAKE3 hash compared. An entry whose checksum does not
match its columns (a damaged or edited row) is a miss.

**Storage.** Table ``entries`` of the project's store (:mod:`memzoi.stores.store`: one SQLite database per worktree,
``memzoi-lsp-store.db`` in ``<home>/projects/<repository-key>/worktrees/<worktree-key>/``, with the search rows,
WAL, busy timeout):
concurrent runs (two checks, the language server and a check) read while one writes, every write is one atomic
transaction, and a run rewrites only the entries that changed (a flat file would be rewritten whole, about 8 MB
at 10,000 files, and concurrent writers would need a lock of their own). A run writes its new entries in batches
of :data:`FLUSH_AT` as they come, each batch its own transaction, and the rest with what it forgets at
:meth:`ProjectCache.save`; each entry stands alone (its own stat, digest and checksum), so a run stopped halfway
leaves sound entries.

**Cross-file facts.** A file's facts are read from its own entry (the payload keeps them,
:func:`memzoi.stores.verdictpayload.payload_facts`), vouched for by the same rule as its verdict. A file that gets no
entry but whose facts may be kept (a stale attestation, :func:`memzoi.stores.verdictpayload.facts_only`) has an entry
of its facts alone, which gives facts but never a verdict. A check of a few files asks for the facts of every other
file of the project: after :data:`EAGER_AFTER` entries read alone, every entry is read in one query.

**Reading.** :meth:`ProjectCache.load` reads every entry at once (``memzoi check``, before its workers fork), or,
given the keys of a few files, only theirs and the others as asked. :meth:`ProjectCache.prefetch` reads the entries
of the next chunk of files in one query, replacing the chunk before (the language server's first scan, which never
holds the whole table; issue 29, lean memory). No connection is open while worker processes fork from the caller:
a partial load's is closed first (:meth:`ProjectCache.close`), the scan's workers come from a fork server.

**Failure.** A corrupt database is deleted and recreated; a store of another version is dropped and recreated
(:func:`memzoi.stores.store.ensure_schema`); a
read-only or full disk, a locked database or any other error turns the cache off for the run. The run never fails
because of the cache and prints the same output with or without it (``memzoi check --no-cache``).
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import blake3

from ..base import freshness
from ..base.freshness import read_stable
from ..judge.config_model import MemzoiConfig
from .index_schema import _Tx
from .store import CACHE_FORMAT, Entry, connect, entry_sum, path_key, store_path, write_entries
from .toolstamp import tool_stamp
from .verdictpayload import is_facts_only, payload_facts

#: How many new entries a run holds before it writes them (:meth:`ProjectCache.store`).
FLUSH_AT = 1000
#: Entries read at most per query of given keys (SQLite's limit on parameters is 999 or more).
CHUNK_MAX = 500
#: After this many entries read alone, a partially loaded cache reads every entry in one query (a check of a few
#: files asks for the facts of every other file).
EAGER_AFTER = 32
#: Every entry of one stamp, as ``ProjectCache.rows`` keeps them (key first).
_ENTRIES = "SELECT key, size, mtime_ns, ino, ctime_ns, checked_ns, digest, payload, sum FROM entries WHERE ctx = ?"


def _sound(key: str, ctx: str, row: tuple[Any, ...]) -> bool:
    """Whether the stored ``row`` (the columns after ``key`` of :data:`_ENTRIES`) matches its checksum."""
    try:
        return len(row) == 8 and entry_sum(key, ctx, *row[:7]) == row[7]
    except (TypeError, ValueError):
        return False


def context_stamp(config: MemzoiConfig | None) -> str:
    """The stamp every entry of a run is made and looked up under: :func:`tool_stamp` and the project
    configuration the analysis used (all of it: the safety decisions change findings)."""
    conf = config.model_dump_json() if config is not None else ""
    return blake3.blake3(f"{CACHE_FORMAT}\n{tool_stamp()}\n{conf}".encode("utf-8", "surrogatepass")).hexdigest()[:32]


@dataclass
class ProjectCache:
    """The cache of one project for one run: the entries under the run's stamp (every one read at :meth:`load`, or
    those of a few files and the others as asked, or a chunk at a time, :meth:`prefetch`) and what the run changed,
    written in batches as it comes and at :meth:`save`. Used from one thread."""

    db: Path
    stamp: str
    #: key -> (size, mtime_ns, ino, ctime_ns, checked_ns, digest, payload, sum), as read
    rows: dict[str, tuple[Any, ...]] = field(default_factory=dict)
    seen: set[str] = field(default_factory=set)
    #: absolute path -> (stamp, checked_ns, digest) of the entry :meth:`lookup` found current (:meth:`vouched`); a
    #: :meth:`prefetch` forgets those of the chunk before
    vouching: dict[str, tuple[Any, ...]] = field(default_factory=dict)
    put: dict[str, Entry] = field(default_factory=dict)
    drop: set[str] = field(default_factory=set)
    #: a connection kept open by a partial load or a chunked reader, to read entries as asked
    conn: sqlite3.Connection | None = None
    #: whether :attr:`rows` holds every stored entry (then none is read alone)
    whole: bool = False
    #: keys whose entries the last query of given keys asked for (one not found has none: it is not read alone)
    fetched: set[str] = field(default_factory=set)
    #: entries read alone so far (:data:`EAGER_AFTER`)
    alone: int = 0
    #: False once a batch could not be written: the rest wait for :meth:`save`
    flushing: bool = True

    @classmethod
    def load(
        cls, project_root: str | os.PathLike[str], config: MemzoiConfig | None, keys: Iterable[str] | None = None
    ) -> ProjectCache | None:
        """The entries of the project at ``project_root`` (the folder of its ``.memzoi``) under the stamp of
        ``config`` (:func:`context_stamp`), from its worktree's runtime directory; ``None`` when the cache cannot be
        used. With ``keys`` (the :func:`path_key` of each of the few files a run checks; none for a chunked reader,
        :meth:`prefetch`), only their entries are read now, the others when asked, through a connection that stays
        open until :meth:`save` or :meth:`close` (do not fork meanwhile). Never raises for a database or
        file-system problem."""
        try:
            cache = cls(store_path(project_root), context_stamp(config))
        except (OSError, RuntimeError, ValueError):
            return None
        conn = connect(cache.db)
        if conn is None:
            return None
        cache.conn = conn
        try:
            if keys is None:
                cache._read_all()
            else:
                cache.prefetch(keys)
        except sqlite3.Error:
            cache.close()
            return None
        if keys is None:
            cache.close()
        return cache

    def holds_none(self) -> bool:
        """True when the store holds no entry under this cache's stamp (a first run, or after a change of the tool
        or the configuration): every lookup of this run is a miss. False when it holds one or cannot be asked.
        Found empty, the cache is known whole: the run notes no key it sees, and :meth:`save` reads back none of
        the store's keys to find those it did not see (11,000 at a cold scan's end; issue 29). An entry another
        process writes meanwhile is then kept, as one written after the save is."""
        if self.rows or self.whole:
            return not self.rows
        if self.conn is None:
            return True  # nothing is read alone without a connection: every lookup is a miss
        try:
            empty = self.conn.execute("SELECT 1 FROM entries WHERE ctx = ? LIMIT 1", (self.stamp,)).fetchone() is None
        except sqlite3.Error:
            return False
        if empty:
            self.rows, self.whole = {}, True
        return empty

    def _read_all(self) -> None:
        """Read every entry under the stamp in one query. Raises ``sqlite3.Error``."""
        if self.conn is not None:
            self.rows = {r[0]: r[1:] for r in self.conn.execute(_ENTRIES, (self.stamp,))}
            self.whole = True

    def prefetch(self, keys: Iterable[str]) -> None:
        """Read the entries of ``keys`` (:func:`path_key` of absolute paths; at most :data:`CHUNK_MAX`) in one
        query; they replace the entries (and the :meth:`vouched` answers) read before. On a database error each
        entry is read alone when asked."""
        if self.conn is None:
            return
        keys = list(dict.fromkeys(keys))[:CHUNK_MAX]
        self.vouching.clear()
        try:
            cur = self.conn.execute(_ENTRIES + f" AND key IN ({','.join('?' * len(keys))})", (self.stamp, *keys))
            self.rows, self.fetched = {r[0]: r[1:] for r in cur}, set(keys)
        except sqlite3.Error:
            self.rows, self.fetched = {}, set()

    def _row(self, key: str) -> tuple[Any, ...] | None:
        """The stored entry of ``key``: read already, else read now through the open connection (every entry at
        once from the :data:`EAGER_AFTER`-th on); an entry read alone is not kept."""
        row = self.rows.get(key)
        if row is not None or self.whole or key in self.fetched or self.conn is None:
            return row
        try:
            self.alone += 1
            if self.alone > EAGER_AFTER:
                self._read_all()
                return self.rows.get(key)
            found = self.conn.execute(_ENTRIES + " AND key = ?", (self.stamp, key)).fetchone()
        except sqlite3.Error:
            return None
        return tuple(found[1:]) if found is not None else None

    def facts_of(self, path: str) -> list[Any] | None:
        """The cross-file facts (as the payload keeps them, :func:`memzoi.stores.verdictpayload.payload_facts`) of the
        file at the absolute ``path`` when its entry (a verdict's or its facts' alone) was made from its current
        bytes, by the rule of :meth:`lookup`; ``None`` otherwise."""
        payload = self._current(path)
        try:
            return payload_facts(payload) if payload is not None else None
        except (ValueError, TypeError, IndexError):
            return None

    def close(self) -> None:
        """Close the open connection, if any (entries not read by then are misses)."""
        if self.conn is not None:
            self.conn.close()
            self.conn = None

    def lookup(self, path: str) -> str | None:
        """The payload of the file at the absolute ``path`` when its entry was made from its current bytes (see
        the module docstring: by stat, else by hash when the size matches) and holds a verdict, else ``None``."""
        payload = self._current(path)
        return None if payload is None or is_facts_only(payload) else payload

    def _current(self, path: str) -> str | None:
        """:meth:`lookup`, an entry of facts alone included."""
        key = path_key(path)
        self._saw(key)
        row = self._row(key)
        if row is None or not _sound(key, self.stamp, row):
            return None
        payload: str = row[6]
        st = freshness.lstat(path)  # a symlink is never cached: it has a ``canonical_path`` finding
        if st is None or st.stamp[0] != row[0]:
            return None
        if freshness.vouches(st, row[:4], row[4]):
            self.vouching[path] = (tuple(row[:4]), row[4], row[5])
            return payload
        read = read_stable(path)
        if read is None or read[1][0] != row[0] or blake3.blake3(read[0]).digest() != row[5]:
            return None
        # The same bytes: keep the entry with the new stat, so the next run trusts it without reading.
        if read[1] != row[:4] or row[4] != read[2]:
            self._put(Entry(key, *read[1], read[2], row[5], row[6]))
        self.vouching[path] = (tuple(read[1]), read[2], row[5])
        return payload

    def vouched(self, path: str) -> tuple[tuple[int, int, int, int], int, bytes] | None:
        """``(stamp, checked_ns, digest)`` of the entry :meth:`lookup` (or :meth:`facts_of`) found current for the
        file at the absolute ``path`` in this run, ``None`` without one: the bytes its verdict or facts were made
        from, for a stored report's inputs (:mod:`memzoi.stores.replay`)."""
        return self.vouching.get(path)

    def store(
        self, path: str, digest: bytes, stamp: tuple[int, int, int, int], checked_ns: int, payload: str | None
    ) -> None:
        """Keep the entry of ``path`` made from the bytes whose BLAKE3 digest is ``digest`` (read with the stat
        ``stamp`` at ``checked_ns``, :func:`read_stable`), or forget the stored one when ``payload`` is ``None``
        (the file must not be cached). ``payload``: :func:`memzoi.stores.verdictpayload.cache_payload`'s."""
        key = path_key(path)
        self._saw(key)
        if payload is None:
            self.put.pop(key, None)
            if not self.whole or key in self.rows:  # (a whole load knows there is nothing to forget)
                self.drop.add(key)
            return
        self.drop.discard(key)
        self._put(Entry(key, *stamp, checked_ns, digest, payload))

    def _saw(self, key: str) -> None:
        """Note that the run saw the file of ``key`` (:meth:`save` with ``complete`` forgets the others). A whole
        load notes only files it has an entry of: at 50,000 files all the keys of a cold check were some 8 MB."""
        if not self.whole or key in self.rows:
            self.seen.add(key)

    def _put(self, entry: Entry) -> None:
        """Hold ``entry`` for writing; from :data:`FLUSH_AT` held on, write them now (:meth:`_write`)."""
        self.put[entry.key] = entry
        if len(self.put) >= FLUSH_AT and self.flushing:
            self.flushing = self._write(self.put.values(), ())
            if self.flushing:
                self.put.clear()

    def _write(self, put: Iterable[Entry], drop: Iterable[str], final: bool = False) -> bool:
        """Write ``put`` and forget ``drop`` in one transaction, through the open connection or a new one; ``final``
        (:meth:`save`) also forgets the entries of other stamps (another tool or configuration). Returns False when
        nothing could be written; never raises for a database problem."""
        conn = self.conn or connect(self.db)
        if conn is None:
            return False
        try:
            with _Tx(conn):
                write_entries(conn, self.stamp, put, drop)
                if final:
                    conn.execute("DELETE FROM entries WHERE ctx != ?", (self.stamp,))
            return True
        except (sqlite3.Error, ValueError):  # ValueError: a text SQLite cannot take (UnicodeEncodeError)
            return False  # (a failed ROLLBACK included)
        finally:
            if conn is not self.conn:
                conn.close()

    def save(self, complete: bool = False) -> bool:
        """Write what the run changed and has not written yet, in one transaction; with ``complete`` (the run saw
        every file of the project) also forget the entries of files it did not see (deleted, renamed). When the
        run changed nothing, nothing is written. Returns False when nothing could be written (the next run
        recomputes); never raises for a database problem."""
        try:
            if complete:
                self.drop |= self._unseen()
            if not self.put and not self.drop:
                return True
            done = self._write(self.put.values(), self.drop - self.put.keys(), final=True)
        finally:
            self.close()
        if done:
            self.put.clear()
            self.drop.clear()
        return done

    def _unseen(self) -> set[str]:
        """The keys of the entries under the stamp the run did not see: of those read, when every one was; else of
        the store's, read a row at a time (not every key held beside :attr:`seen`: 11,000 keys were 1.7 MB of the
        language server's peak; issue 29); empty when the store cannot be read."""
        seen = self.seen
        if self.whole or self.conn is None:
            return {k for k in self.rows if k not in seen}
        try:
            cur = self.conn.execute("SELECT key FROM entries WHERE ctx = ?", (self.stamp,))
            return {r[0] for r in cur if r[0] not in seen}
        except sqlite3.Error:
            return set()
