"""The index rows' stored stamps as a refresh's decision reads them (:func:`read`, for
:func:`memzoi.stores.index_fresh.stale`), and their copy kept between the refreshes of a long-lived process
(:func:`keep`: the MCP server, whose every ``search_memory`` refreshes the index first).

A refresh at 50,000 records reads 55,000 rows; turning them into Python objects is a large part of a search
(issue 29: a search at 50,000 records in 0.25 s). Without a kept copy the vouching rows are read as the decision
compares them, a row at a time in key order, and none is held after (issue 29: the language server's peak RSS; held
as a dict, they were 3.8 MB of its peak at 10,000 records). A kept copy is used only while it is provably the
database's:
its connection of its own, which never writes, reads ``PRAGMA data_version``, which changes whenever any other
connection (of this process or another) has committed since (SQLite: "PRAGMA data_version"); and while no row it
holds as vouching has aged past the trust age. This keeps the stored side only; the files' side of the MCP server's
refreshes is kept by change notifications (:mod:`memzoi.stores.changefeed`).
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any

from ..base import freshness

#: A row's stored columns as the decision reads them: ``(size, mtime_ns, ino, ctime_ns, checked_ns, sha)``.
ROW = "size, mtime_ns, ino, ctime_ns, checked_ns, sha"
#: The rows whose stored stamp vouches for the file while it is unchanged: :func:`memzoi.base.freshness.trusted`'s
#: conditions on the stored stamp alone (not racy, confirmed within the trust age), for the stamps compared in bulk.
VOUCHING = "max(mtime_ns, ctime_ns) < checked_ns - :racy AND :now - checked_ns <= :age"
#: Rows fetched by key in one query, at most (SQLite's limit on host parameters is 32,766 since 3.32).
IN_BATCH = 500
#: Copies kept at once (one per index, so per project): an MCP server serves one project, or a few.
MAX_KEPT = 4


#: Rows whose stored stamp vouches while unchanged, ``(key, (size, mtime_ns, ino, ctime_ns))``, in key order.
Vouching = Iterable[tuple[str, tuple[Any, ...]]]


@dataclass
class Stored:
    """The index's rows by key: ``vouching`` gives each row whose stored stamp vouches while unchanged with that stamp
    ``(key, (size, mtime_ns, ino, ctime_ns))`` in key order (SQLite's binary order of UTF-8, which is Python's order
    of the keys), to be iterated once: read from the database as it is iterated, or a kept copy's (a list, shared
    with the copy: never change it); ``rows`` maps every other row to its :data:`ROW` columns."""

    vouching: Vouching
    rows: dict[str, tuple[Any, ...]]


def read(db: sqlite3.Connection, now: int, *, bulk: bool = True) -> Stored:
    """The rows of the index ``db`` at the wall clock ``now`` (ns): with ``bulk``, split by :data:`VOUCHING` (from the
    kept copy where :func:`keep` made one and it is still the database's; else the vouching rows are read from
    ``db`` as they are iterated: iterate them before ``db`` writes); without, every row in ``rows``. Raises
    ``sqlite3.Error``."""
    if not bulk:
        cur = _plain(db)
        return Stored((), {r[0]: r[1:] for r in cur.execute(f"SELECT path, {ROW} FROM files")})
    if _KEPT is not None:
        return _KEPT.read(db, now)
    return _fetch(db, now)


def full_rows(db: sqlite3.Connection, keys: list[str]) -> dict[str, tuple[Any, ...]]:
    """The :data:`ROW` columns of the rows ``keys`` of the index ``db`` (key → row), :data:`IN_BATCH` keys a query."""
    return _rows_where(db, "path", keys)


def rows_by_id(db: sqlite3.Connection, ids: list[int]) -> dict[str, tuple[Any, ...]]:
    """The :data:`ROW` columns of the rows of ``files`` with the ``rowid`` ``ids`` that exist (key → row),
    :data:`IN_BATCH` ids a query."""
    return _rows_where(db, "rowid", ids)


def _rows_where(db: sqlite3.Connection, column: str, values: list[Any]) -> dict[str, tuple[Any, ...]]:
    """The rows of ``files`` whose ``column`` (``path`` or ``rowid``) is one of ``values``: key → :data:`ROW`."""
    cur = _plain(db)
    out: dict[str, tuple[Any, ...]] = {}
    for i in range(0, len(values), IN_BATCH):
        part = values[i : i + IN_BATCH]
        sql = f"SELECT path, {ROW} FROM files WHERE {column} IN ({','.join('?' * len(part))})"
        out.update((r[0], r[1:]) for r in cur.execute(sql, part))
    return out


def _plain(db: sqlite3.Connection) -> sqlite3.Cursor:
    cur = db.cursor()
    cur.row_factory = None  # plain tuples: 50,000 rows as sqlite3.Row cost a third more
    return cur


def _args(now: int) -> dict[str, int]:
    return {"racy": freshness.RACY_NS, "now": now, "age": freshness.MAX_TRUST_NS}


def _fetch(db: sqlite3.Connection, now: int) -> Stored:
    """:class:`Stored` of ``db`` at the wall clock ``now``: two queries, the vouching rows' run as they are
    iterated."""
    cur, args = _plain(db), _args(now)
    rows = {r[0]: r[1:] for r in cur.execute(f"SELECT path, {ROW} FROM files WHERE NOT ({VOUCHING})", args)}
    return Stored(_vouching(_plain(db), args), rows)


def _vouching(cur: sqlite3.Cursor, args: dict[str, int]) -> Iterator[tuple[str, tuple[Any, ...]]]:
    """The rows :data:`VOUCHING` at the clock of ``args``, one at a time in key order (by the primary key)."""
    sql = f"SELECT path, size, mtime_ns, ino, ctime_ns FROM files WHERE {VOUCHING} ORDER BY path"
    for r in cur.execute(sql, args):
        yield r[0], r[1:]


class _Kept:
    """The copies kept by :func:`keep`, one per database file."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._slots: dict[str, tuple[sqlite3.Connection, tuple[Any, ...], int, Stored]] = {}

    def read(self, db: sqlite3.Connection, now: int) -> Stored:
        """:func:`read` through the kept copy of ``db``'s file, fetched anew when it is no longer the database's."""
        path = next((r[2] for r in db.execute("PRAGMA database_list") if r[1] == "main"), "")
        if not path:  # an in-memory or temporary database: nothing to keep
            return _fetch(db, now)
        with self._lock:
            slot = self._slots.get(path)
            probe = slot[0] if slot is not None else sqlite3.connect(path, check_same_thread=False)
            key = (probe.execute("PRAGMA data_version").fetchone()[0], freshness.RACY_NS, freshness.MAX_TRUST_NS)
            if slot is not None and slot[1] == key and now <= slot[2]:
                return Stored(slot[3].vouching, dict(slot[3].rows))
            fetched = _fetch(db, now)
            stored = Stored(list(fetched.vouching), fetched.rows)
            # until the first vouching row ages past the trust age (a row that does not vouch never comes to)
            oldest = db.execute(f"SELECT min(checked_ns) FROM files WHERE {VOUCHING}", _args(now)).fetchone()[0]
            until = _NEVER if oldest is None else oldest + freshness.MAX_TRUST_NS
            self._slots.pop(path, None)
            while len(self._slots) >= MAX_KEPT:  # the least recently filled copy goes, with its connection
                self._slots.pop(next(iter(self._slots)))[0].close()
            self._slots[path] = (probe, key, until, stored)
            return Stored(stored.vouching, dict(stored.rows))


_KEPT: _Kept | None = None
_NEVER = 1 << 63


def keep() -> None:
    """From now on, keep the stored stamps of each index this process refreshes between its refreshes (a
    long-lived process: the MCP server). Idempotent."""
    global _KEPT
    if _KEPT is None:
        _KEPT = _Kept()


__all__ = ["IN_BATCH", "MAX_KEPT", "ROW", "VOUCHING", "Stored", "Vouching", "full_rows", "keep", "read", "rows_by_id"]
