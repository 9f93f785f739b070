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
(an id, a reference). A record whose attestation is stale gets none either, because its finding is explained from
the committed version in git (:func:`memzoi.project.verdict.explain_stale`), which changes without the file changing.
A symlink, or a file reached through a symlinked folder (a ``canonical_path`` finding), gets none: Memzoi refuses
it, and its stat says nothing about the link. Paths are stored as BLAKE3 hashes. So the cache holds findings and
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
at 10,000 files, and concurrent writers would need a lock of their own). The rows are read into memory once,
no connection is open while worker processes fork, and changes are written in one transaction at the end (a run
without a facts blob writes its new entries in batches of ``FLUSH_AT`` as it goes, each its own transaction).

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
from ..base.freshness import RACY_NS, Stat, read_stable
from ..judge.config_model import MemzoiConfig
from . import verdictfacts
from .store import (  # noqa: F401 - connect also imported from here
    BUSY_TIMEOUT_S,
    CACHE_FORMAT,
    Entry,
    connect,
    entry_sum,
    path_key,
    store_path,
    write_entries,
)
from .toolstamp import tool_stamp
from .verdictfacts import Blob, LazyBlob, blob_text, entry_item, payload_facts, read_blob, updated, write_blob

#: How many new entries a run without a facts blob holds before it writes them (:meth:`ProjectCache._flush`).
FLUSH_AT = 2048
#: Every entry of one stamp, as ``ProjectCache.rows`` keeps them (key first).
_ENTRIES = "SELECT key, size, mtime_ns, ino, ctime_ns, checked_ns, digest, payload, sum FROM entries WHERE ctx = ?"


def _sound(key: str, ctx: str, row: tuple[Any, ...]) -> bool:
    """Whether the stored ``row`` (the columns after ``key`` of :data:`_ENTRIES`) matches its checksum."""
    try:
        return len(row) == 8 and entry_sum(key, ctx, *row[:7]) == row[7]
    except (TypeError, ValueError):
        return False


def _stat_of(path: str) -> Stat | None:
    """The stat of ``path`` when it is a regular file and not a symlink (a symlink is never cached: it has a
    ``canonical_path`` finding); ``None`` otherwise."""
    return freshness.lstat(path)


def context_stamp(config: MemzoiConfig | None) -> str:
    """The stamp every entry of a run is made and looked up under: :func:`tool_stamp` and the project
    configuration the analysis used (all of it: the safety decisions change findings)."""
    conf = config.model_dump_json() if config is not None else ""
    return blake3.blake3(f"{CACHE_FORMAT}\n{tool_stamp()}\n{conf}".encode("utf-8", "surrogatepass")).hexdigest()[:32]


@dataclass
class ProjectCache:
    """The cache of one project for one run: the entries under the run's stamp, read once at :meth:`load` (or,
    for a run given a few files, read as they are asked for), the project's facts blob
    (:mod:`memzoi.stores.verdictfacts`), and what the run changed, written once by :meth:`save`. Used from one thread."""

    db: Path
    stamp: str
    #: key -> (size, mtime_ns, ino, ctime_ns, checked_ns, digest, payload, sum), as :meth:`load` read them
    rows: dict[str, tuple[Any, ...]] = field(default_factory=dict)
    seen: set[str] = field(default_factory=set)
    #: absolute path -> (stamp, checked_ns, digest) of the entry :meth:`lookup` found current (:meth:`vouched`)
    vouching: dict[str, tuple[Any, ...]] = field(default_factory=dict)
    put: dict[str, Entry] = field(default_factory=dict)
    drop: set[str] = field(default_factory=set)
    #: key -> blob item of a file with no entry whose facts may be kept (:func:`memzoi.stores.verdictpayload.kept_facts`)
    put_facts: dict[str, list[Any]] = field(default_factory=dict)
    #: the facts blob as loaded (None: none stored; a partial load keeps its text, items decoded as asked); kept up
    #: to date by :meth:`save`
    blob: Blob | LazyBlob | None = None
    #: a connection kept open by a partial load (``load(..., keys=...)``) to read other entries as asked
    conn: sqlite3.Connection | None = None
    _partial: bool = False
    #: keys of this run's entries already written (:meth:`_flush`), no longer held in ``put``
    flushed: set[str] = field(default_factory=set)
    _flushing: bool = True
    #: whether an entry read alone (:meth:`_row`) is kept in :attr:`rows`
    keeps_read: bool = True

    @classmethod
    def load(
        cls, project_root: str | os.PathLike[str], config: MemzoiConfig | None, keys: Iterable[str] | None = None
    ) -> ProjectCache | None:
        """The entries of the project at ``project_root`` (the folder of its ``.memzoi``) under the stamp of
        ``config`` (:func:`context_stamp`), from its worktree's runtime directory, and its facts blob; ``None``
        when the cache cannot be used. With ``keys`` (the :func:`path_key` of each of the few files a run checks), only
        their entries are read now, the others when asked, through a connection that stays open until
        :meth:`save` or :meth:`close` (do not fork meanwhile). Never raises for a database or file-system problem."""
        try:
            cache = cls(store_path(project_root), context_stamp(config))
        except (OSError, RuntimeError, ValueError):
            return None
        conn = connect(cache.db)
        if conn is None:
            return None
        try:
            query = _ENTRIES
            if keys is None:
                cache.rows = {r[0]: r[1:] for r in conn.execute(query, (cache.stamp,))}
            else:
                wanted = list(dict.fromkeys(keys))[:500]  # SQLite's limit on parameters is 999 or more
                cur = conn.execute(query + f" AND key IN ({','.join('?' * len(wanted))})", (cache.stamp, *wanted))
                cache.rows = {r[0]: r[1:] for r in cur}
            cache.blob = read_blob(conn, cache.stamp) if keys is None else verdictfacts.read_lazy(conn, cache.stamp)
        except sqlite3.Error:
            conn.close()
            return None
        if keys is None:
            conn.close()
        else:
            cache.conn, cache._partial = conn, True
        return cache

    def _row(self, key: str) -> tuple[Any, ...] | None:
        """The stored entry of ``key``: read at :meth:`load`, else read now through an open connection (a partial
        load keeps it; a streamed cache does not, :attr:`keeps_read`)."""
        row = self.rows.get(key)
        if row is None and self.conn is not None:
            try:
                found = self.conn.execute(_ENTRIES + " AND key = ?", (self.stamp, key)).fetchone()
            except sqlite3.Error:
                found = None
            row = tuple(found[1:]) if found is not None else None
            if row is not None and self.keeps_read:
                self.rows[key] = row
        return row

    def facts_of(self, path: str) -> list[Any] | None:
        """The cross-file facts (as the payload keeps them, :func:`memzoi.stores.verdictpayload.stored_facts`) of the file
        at the absolute ``path`` when the cache vouches for its current bytes: from the facts blob when its stat
        is the item's and not racy, else from the file's entry (:meth:`lookup`); ``None`` otherwise."""
        if self.blob is not None:
            item = self.blob.get(path_key(path))
            if item is not None:
                if freshness.vouches(_stat_of(path), item[:4], item[4]):
                    facts: list[Any] = item[5]
                    return facts
        payload = self.lookup(path)
        try:
            return payload_facts(payload) if payload is not None else None
        except (ValueError, TypeError, IndexError):
            return None

    def close(self) -> None:
        """Close the connection of a partial load (nothing to do otherwise)."""
        if self.conn is not None:
            self.conn.close()
            self.conn = None

    def lookup(self, path: str) -> str | None:
        """The payload of the file at the absolute ``path`` when its entry was made from its current bytes (see
        the module docstring: by stat, else by hash when the size matches), else ``None``."""
        key = path_key(path)
        self.seen.add(key)
        row = self._row(key)
        if row is None or not _sound(key, self.stamp, row):
            return None
        payload: str = row[6]
        st = _stat_of(path)
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
            self.put[key] = Entry(key, *read[1], read[2], row[5], row[6])
        self.vouching[path] = (tuple(read[1]), read[2], row[5])
        return payload

    def vouched(self, path: str) -> tuple[tuple[int, int, int, int], int, bytes] | None:
        """``(stamp, checked_ns, digest)`` of the entry :meth:`lookup` found current for the file at the absolute
        ``path`` in this run, ``None`` without one: the bytes its verdict was made from, for a stored report's
        inputs (:mod:`memzoi.stores.replay`)."""
        return self.vouching.get(path)

    def store(
        self,
        path: str,
        digest: bytes,
        stamp: tuple[int, int, int, int],
        checked_ns: int,
        payload: str | None,
        facts: list[Any] | None = None,
    ) -> None:
        """Keep the entry of ``path`` made from the bytes whose BLAKE3 digest is ``digest`` (read with the stat
        ``stamp`` at ``checked_ns``, :func:`read_stable`), or forget the stored one when ``payload`` is ``None``
        (the file must not be cached). Such a file's ``facts``, when given
        (:func:`memzoi.stores.verdictpayload.kept_facts`), still go to the facts blob under the same stat rule."""
        key = path_key(path)
        self.seen.add(key)
        self.put_facts.pop(key, None)
        if payload is None:
            self.put.pop(key, None)
            if key in self.rows:
                self.drop.add(key)
            if facts is not None:
                self.put_facts[key] = [*stamp, checked_ns, facts, digest.hex()]
            return
        self.put[key] = Entry(key, *stamp, checked_ns, digest, payload)
        if len(self.put) >= FLUSH_AT and self._flushing and self.blob is None and not self._partial:
            self._flush()

    def _flush(self) -> None:
        """Write the entries held in ``put`` now, in one transaction of their own, and let them go: a cold run
        holds at most :data:`FLUSH_AT` of them (at 50,000 files all of them were some 40 MB of the parent). On any
        failure they stay held for :meth:`save`, and the run flushes no more. Never raises."""
        conn = connect(self.db)
        try:
            if conn is None:
                raise sqlite3.OperationalError("store unavailable")
            with conn:  # the connection is in autocommit: BEGIN ... COMMIT, ROLLBACK on error
                conn.execute("BEGIN IMMEDIATE")
                write_entries(conn, self.stamp, self.put.values())
        except (sqlite3.Error, ValueError):
            self._flushing = False
            return
        finally:
            if conn is not None:
                conn.close()
        self.flushed.update(self.put)
        self.put.clear()

    def save(self, complete: bool = False) -> bool:
        """Write what the run changed in one transaction; with ``complete`` (the run saw every file of the
        project) also forget the entries of files it did not see (deleted, renamed). Returns False when nothing
        could be written (the next run recomputes); never raises for a database problem."""
        self.close()
        drop = set(self.drop)
        if complete and not self._partial:
            drop |= self.rows.keys() - self.seen
        drop -= self.put.keys() | self.flushed
        blob = self._next_blob(drop, complete and not self._partial)
        if not self.put and not drop and blob is None and not self.flushed:
            return True
        conn = connect(self.db)
        if conn is None:
            return False
        try:
            conn.execute("BEGIN IMMEDIATE")
            if blob is None and self.blob is None and (self._partial and self.put or self.flushed):
                # A check of a few files that analysed the project's others (no blob yet), or a run whose entries
                # were written as it went: the blob is made from every stored entry, so the next check of a few
                # files reads one blob instead of an entry per file.
                blob = self._first_blob(((r[0], r[1:]) for r in conn.execute(_ENTRIES, (self.stamp,))), drop)
            write_entries(conn, self.stamp, self.put.values(), drop)
            conn.execute("DELETE FROM entries WHERE ctx != ?", (self.stamp,))  # another tool or configuration
            if blob is not None:
                write_blob(conn, self.stamp, blob)
            conn.execute("COMMIT")
            return True
        except (sqlite3.Error, ValueError):  # ValueError: a text SQLite cannot take (UnicodeEncodeError)
            try:
                conn.execute("ROLLBACK")
            except sqlite3.Error:
                pass
            return False
        finally:
            conn.close()

    def _next_blob(self, drop: set[str], complete: bool = False) -> Blob | str | None:
        """The facts blob to store after this run's changes, or ``None`` when the stored one stays right. Made
        from every entry when none is stored (a full load only: a partial one does not have them). A complete
        run also forgets the items of files it did not see."""
        if self.blob is None:  # (a run that wrote entries as it went makes it from the store: save)
            return None if self.partial or self.flushed else self._first_blob(self.rows.items(), drop)
        if isinstance(self.blob, LazyBlob):  # a partial load: its few changes written into the text
            changed = self.put or drop or self.put_facts
            return verdictfacts.spliced(self.blob, self.put.values(), self.put_facts, drop) if changed else None
        unseen = {k for k in self.blob if k not in self.seen} if complete else set()
        if not self.put and not drop and not self.put_facts and not unseen:
            return None
        return self._with_facts(updated(self.blob, self.put.values(), drop | unseen))

    def _with_facts(self, blob: Blob) -> Blob:
        """``blob`` with this run's facts of files without an entry (changed in place and returned)."""
        blob.update(self.put_facts)
        return blob

    def _first_blob(self, rows: Iterable[tuple[str, tuple[Any, ...]]], drop: set[str]) -> str:
        """The text of the facts blob of the stored entries ``rows`` (pairs of key and the columns after ``key``
        of :data:`_ENTRIES`, read as they come) once this run's entries replace theirs and ``drop`` is forgotten.
        Written item by item (:func:`memzoi.stores.verdictfacts.item_text`): at 50,000 files the blob as a dict of
        decoded facts, then dumped, was 130 MB of ``memzoi check``'s peak."""
        parts = []
        for k, row in rows:
            if k not in drop and k not in self.put and k not in self.put_facts and _sound(k, self.stamp, row):
                parts.append(entry_item(k, row[:5], row[6], row[5]))
        parts += [verdictfacts.put_item(e) for e in self.put.values() if e.key not in drop]
        parts += [verdictfacts.facts_item(k, item) for k, item in self.put_facts.items()]
        return blob_text(parts)

    @property
    def partial(self) -> bool:
        """Whether only some entries were read (``load(..., keys=...)``)."""
        return self._partial


__all__ = [
    "CACHE_FORMAT",
    "RACY_NS",
    "Entry",
    "ProjectCache",
    "connect",
    "context_stamp",
    "entry_sum",
    "path_key",
    "read_stable",
    "tool_stamp",
]
