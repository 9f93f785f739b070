"""The project store: one SQLite database per worktree of a project, in its runtime directory
(``<home>/projects/<repository-key>/worktrees/<worktree-key>/memzoi-lsp-store.db``, Memzoi's key derivation and
layout, reference §7.1/§7.3; the file name is ours, so Memzoi's own ``index.db`` is never touched).

It holds every derived fact about the project's files, under one version and one opening rule:

- each file's store entry (table ``entries``: stamp, digest, compact verdict payload with its cross-file facts, or
  its facts alone, checksum; written only by :func:`write_entries`, read by :mod:`memzoi.stores.verdictcache`);
- the search rows (``files``, ``records``, ``proposals``, their FTS5 tables and ``meta``; :mod:`memzoi.stores.index`);
- the stored reports ``memzoi check`` replays when no input of them changed (``reports``, :mod:`memzoi.stores.replay`).

Whether a stored fact is still its file's is decided by the one freshness rule of :mod:`memzoi.base.freshness`
(stat, racy window, file-system type, content hash, re-hash sample) together with the tool stamp
(:func:`memzoi.stores.toolstamp.tool_stamp`) and the project's configuration, which every table's rows are made under.

**Version.** ``PRAGMA user_version`` is :data:`STORE_VERSION`, which changes with the layout of any table or
payload. A database of another version (an older or newer build, or the two databases earlier builds kept) is
never served: :func:`ensure_schema` drops every table and creates the current ones, checked again under the
write lock, so that of many processes opening a new store at once one creates it and the others find it. The
databases of earlier builds (:data:`OLD_DATABASES`) are deleted when the store is opened.
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Iterable
from dataclasses import dataclass
from operator import itemgetter
from pathlib import Path
from typing import Any

import blake3

from ..base.runtime import DB_COMPANIONS, STORE_DB, private_dir, private_file, worktree_runtime_dir
from .index_schema import SCHEMA_VERSION, _opening, _split_sql, _Tx, schema_script

#: The databases earlier builds kept in the same directory (the verdict cache and the index), removed on open.
OLD_DATABASES = ("memzoi-lsp-verdicts.db", "memzoi-lsp-index.db")
#: Version of a store entry's payload layout (:mod:`memzoi.stores.verdictpayload`; 2: entries of facts alone, in
#: place of the facts blob of earlier builds).
PAYLOAD_FORMAT = 2
#: Version of the ``entries`` layout with its payload.
CACHE_FORMAT = 2 + 100 * PAYLOAD_FORMAT
#: Version of the ``reports`` layout (:mod:`memzoi.stores.replay`; 2: the inputs are stored compressed).
REPORT_FORMAT = 2
#: The store's own generation (2: a store written by an earlier build may be damaged, since its runtime plane closed
#: a descriptor of the open database and so ended SQLite's locks, letting another process delete the WAL in use:
#: :func:`memzoi.base.runtime.private_file`; such a store is made anew once, and a damaged one is removed first).
STORE_GENERATION = 2
#: ``PRAGMA user_version`` of a current store: any table's layout changes it.
STORE_VERSION = STORE_GENERATION * 10_000_000 + SCHEMA_VERSION * 100_000 + CACHE_FORMAT * 10 + REPORT_FORMAT

ENTRIES_SCHEMA = (
    "CREATE TABLE IF NOT EXISTS entries (key TEXT PRIMARY KEY, ctx TEXT NOT NULL, "
    "size INTEGER NOT NULL, mtime_ns INTEGER NOT NULL, ino INTEGER NOT NULL, ctime_ns INTEGER NOT NULL, "
    "checked_ns INTEGER NOT NULL, digest BLOB NOT NULL, payload TEXT NOT NULL, sum BLOB NOT NULL) "
    "WITHOUT ROWID"
)
#: Writes one entry (:func:`write_entries`).
_PUT = "INSERT OR REPLACE INTO entries VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
REPORTS_SCHEMA = (
    "CREATE TABLE IF NOT EXISTS reports (key TEXT PRIMARY KEY, made_ns INTEGER NOT NULL, inputs BLOB NOT NULL, "
    "report BLOB NOT NULL, sum BLOB NOT NULL) WITHOUT ROWID"
)


#: How long a run waits for another one's write transaction before going on without the store, in seconds.
BUSY_TIMEOUT_S = 2.0


def store_path(project_root: str | os.PathLike[str]) -> Path:
    """Where the store of the project at ``project_root`` lives (see the module docstring). Creates nothing."""
    return worktree_runtime_dir(project_root) / STORE_DB


def _tables(conn: sqlite3.Connection) -> list[tuple[str, str]]:
    return [
        (r[0], r[1])
        for r in conn.execute(
            "SELECT type, name FROM sqlite_master WHERE type IN ('table', 'trigger') AND name NOT LIKE 'sqlite_%'"
        )
    ]


def _drop_all(conn: sqlite3.Connection) -> None:
    """Drop every trigger and table of ``conn``, full-text tables first (their shadow tables go with them)."""
    for kind, name in _tables(conn):
        if kind == "trigger":
            conn.execute(f'DROP TRIGGER IF EXISTS "{name}"')
    for (name,) in conn.execute(
        "SELECT name FROM sqlite_master WHERE type = 'table' AND sql LIKE 'CREATE VIRTUAL%'"
    ).fetchall():
        conn.execute(f'DROP TABLE IF EXISTS "{name}"')
    for _, name in _tables(conn):
        conn.execute(f'DROP TABLE IF EXISTS "{name}"')


#: Tables every current store has (a store missing one is made anew).
TABLES = frozenset({"entries", "reports", "meta", "files", "records", "proposals", "records_fts", "proposals_fts"})


def _current(conn: sqlite3.Connection) -> bool:
    if conn.execute("PRAGMA user_version").fetchone()[0] != STORE_VERSION:
        return False
    return TABLES <= {name for kind, name in _tables(conn) if kind == "table"}


def ensure_schema(conn: sqlite3.Connection) -> None:
    """Give the store ``conn`` (autocommit, ``isolation_level=None``) the current layout: nothing to do when its
    version is :data:`STORE_VERSION` and it has every table of :data:`TABLES`; otherwise, under
    ``BEGIN IMMEDIATE`` and checked again there, drop every table and trigger and create the current ones. A store
    of an earlier :data:`STORE_GENERATION` is checked first (``PRAGMA quick_check``, once): a damaged one raises
    ``sqlite3.DatabaseError``: :func:`connect` answers it with :func:`heal`, the index names it
    (``corrupt_database``). Raises ``sqlite3.Error``."""
    if _current(conn):
        return
    with _Tx(conn):
        if not _current(conn):
            version = conn.execute("PRAGMA user_version").fetchone()[0]
            if 0 < version < STORE_GENERATION * 10_000_000 and conn.execute("PRAGMA quick_check").fetchone()[0] != "ok":
                raise sqlite3.DatabaseError(
                    f"{_db_name(conn)}: database disk image is malformed"
                )  # see STORE_GENERATION
            _drop_all(conn)
            for stmt in _split_sql(schema_script()):
                conn.execute(stmt)
            conn.execute(ENTRIES_SCHEMA)
            conn.execute(REPORTS_SCHEMA)
            conn.execute(f"PRAGMA user_version={STORE_VERSION}")


def _db_name(conn: sqlite3.Connection) -> str:
    """The file name of the main database of ``conn`` (``""`` when it has none or cannot say)."""
    try:
        return os.path.basename(str(conn.execute("PRAGMA database_list").fetchone()[2] or ""))
    except (sqlite3.Error, TypeError, IndexError):
        return ""


def remove_database(db: Path) -> None:
    """Delete the database file ``db`` and its SQLite companions (``-wal``, ``-shm``, ``-journal``); a file
    already gone is no error. Raises ``OSError`` for one that cannot be removed."""
    for p in (db, *(db.with_name(db.name + s) for s in DB_COMPANIONS)):
        try:
            p.unlink()
        except FileNotFoundError:
            pass


def forget_old_databases(folder: Path) -> None:
    """Delete the databases earlier builds kept in the runtime folder ``folder`` (:data:`OLD_DATABASES`): their
    facts are made again in the store. Never raises."""
    for name in OLD_DATABASES:
        try:
            if (folder / name).exists():
                remove_database(folder / name)
        except OSError:
            pass


def _open(db: Path) -> sqlite3.Connection:
    """A connection to the store ``db`` with the current layout (:func:`memzoi.stores.store.ensure_schema`: created, or
    recreated for another version, race-free); the databases of earlier builds beside it are removed. Raises
    ``OSError`` or ``sqlite3.Error``."""
    private_dir(db.parent)
    private_file(db)
    conn = sqlite3.connect(db, timeout=BUSY_TIMEOUT_S, isolation_level=None)
    try:
        _opening(conn, lambda: ensure_schema(conn), patience=BUSY_TIMEOUT_S * 5)
        conn.execute(f"PRAGMA busy_timeout={int(BUSY_TIMEOUT_S * 1000)}")
        private_file(db)  # the WAL and shared-memory files SQLite just created
    except BaseException:
        conn.close()
        raise
    forget_old_databases(db.parent)
    return conn


def connect(db: Path) -> sqlite3.Connection | None:
    """:func:`_open`, deleting and recreating a database that is not one (corrupt, truncated, foreign); ``None``
    when the store cannot be used at all (read-only or full disk, locked, unreadable)."""
    try:
        return _open(db)
    except sqlite3.DatabaseError as err:
        if isinstance(err, sqlite3.OperationalError):  # locked, read-only, no space: not the file's fault
            return None
    except OSError:
        return None
    if not heal(db):
        return None
    try:
        return _open(db)
    except (OSError, sqlite3.Error):
        return None


def heal(db: Path) -> bool:
    """After an opening of the store ``db`` failed with ``sqlite3.DatabaseError`` proper (not a database, malformed:
    not an ``OperationalError`` such as a lock), remove it when a fresh look confirms it is damaged (:func:`_damaged`),
    so that the next opening makes it anew: everything in it is derived from the git plane. Returns whether it was
    removed. Another process may be using the file right now, and deleting a database another connection holds loses
    its writes (SQLite removes the ``-wal`` by path when that connection closes), hence the fresh look. Never
    raises."""
    if not _damaged(db):
        return False
    try:
        remove_database(db)
    except OSError:
        return False
    return True


@dataclass(frozen=True, slots=True)
class Entry:
    """One cached file as stored: ``key`` (:func:`path_key`), the stat of the bytes it was made from (``size``
    in bytes, ``mtime_ns``, ``ino``, ``ctime_ns``), ``checked_ns`` (wall clock, ns, taken before the bytes were
    read), ``digest`` (BLAKE3 of the bytes, 32 bytes) and ``payload`` (the JSON of
    :func:`memzoi.stores.verdictpayload.cache_payload`)."""

    key: str
    size: int
    mtime_ns: int
    ino: int
    ctime_ns: int
    checked_ns: int
    digest: bytes
    payload: str


def entry_sum(
    key: str, ctx: str, size: int, mtime_ns: int, ino: int, ctime_ns: int, checked_ns: int, digest: bytes, payload: str
) -> bytes:
    """The checksum stored with an entry: BLAKE3 (16 bytes) of every other column of its row. A row whose
    checksum does not match (a damaged page, an edited row) is a miss, never a verdict."""
    h = blake3.blake3(f"{key}\0{ctx}\0{size}\0{mtime_ns}\0{ino}\0{ctime_ns}\0{checked_ns}\0".encode())
    h.update(digest if isinstance(digest, bytes) else b"")
    h.update(payload.encode("utf-8", "surrogatepass") if isinstance(payload, str) else b"\xff")
    return h.digest(16)


def path_key(path: str) -> str:
    """The key of the file at the absolute ``path``: hex BLAKE3 of its bytes (surrogate-escaped names hash as
    their original bytes), so no file name is stored."""
    return blake3.blake3(path.encode("utf-8", "surrogateescape")).hexdigest()


def write_entries(conn: sqlite3.Connection, stamp: str, entries: Iterable[Entry], drop: Iterable[str] = ()) -> None:
    """The one writer of store entries: put ``entries`` under the context ``stamp`` (each with its checksum,
    :func:`entry_sum`) and delete the entries of the keys ``drop``, inside the caller's transaction. Raises
    ``sqlite3.Error`` or ``ValueError`` (a text SQLite cannot take)."""
    write_rows(conn, [entry_row(stamp, e) for e in entries], drop)


def entry_row(stamp: str, e: Entry) -> tuple[Any, ...]:
    """The row of ``entries`` that :func:`write_entries` writes for ``e`` under the context ``stamp``, its
    checksum (:func:`entry_sum`) last."""
    row = (e.key, stamp, e.size, e.mtime_ns, e.ino, e.ctime_ns, e.checked_ns, e.digest, e.payload)
    return (*row, entry_sum(*row))


def write_rows(conn: sqlite3.Connection, rows: Iterable[tuple[Any, ...]], drop: Iterable[str] = ()) -> None:
    """:func:`write_entries` of rows made already (:func:`entry_row`, :class:`EntryRows`), inside the caller's
    transaction, in the order of their keys (a key given twice: the last row stands, as in the order given). Raises
    ``sqlite3.Error`` or ``ValueError``."""
    # The keys are hashes, so rows come in random key order: inserted so, the table's B-tree splits pages all over
    # (11,000 entries of a rebuild: 0.049 s of CPU, and pages two-thirds full for its commit to write); in key order
    # every page is filled in turn (0.034 s).
    conn.executemany(_PUT, sorted(rows, key=itemgetter(0)))
    conn.executemany("DELETE FROM entries WHERE key = ?", [(k,) for k in drop])


class EntryRows:
    """The store entries of a whole rebuild made into their rows (:func:`entry_row`, under ``stamp``) one file at a
    time as its entry comes (:meth:`add`, by :func:`made_entries`' rule), so that its one transaction only writes
    them (:func:`write_rows` of :attr:`rows` and :attr:`drop`): made after the last worker's result, under the
    write lock, they cost 0.1–0.15 s of CPU at 10,000 files (issue 29: ``memzoi rebuild`` ≤ 1.2× a cold check)."""

    def __init__(self, stamp: str) -> None:
        self.stamp = stamp
        self.rows: list[tuple[Any, ...]] = []
        self.drop: list[str] = []

    def add(self, path: str, made: tuple[Any, ...] | None) -> None:
        """Take the entry ``made`` of the file at the absolute ``path`` (see :func:`made_entries`)."""
        entry = _made_entry(path, made)
        if entry is None:
            self.drop.append(path_key(path))
        else:
            self.rows.append(entry_row(self.stamp, entry))


def made_entries(made: Iterable[tuple[str, tuple[Any, ...] | None]]) -> tuple[list[Entry], list[str]]:
    """The entries to write and the keys to drop for ``made``: ``(absolute path, entry)`` pairs of
    :func:`memzoi.stores.fileentry.make_entry` (:data:`memzoi.stores.firststage.Entry`, ``None`` when none was made).
    A file whose payload is ``None`` (it must not be cached: a secret) or that got no entry loses its stored one."""
    put: list[Entry] = []
    drop: list[str] = []
    for path, e in made:
        entry = _made_entry(path, e)
        if entry is None:
            drop.append(path_key(path))
        else:
            put.append(entry)
    return put, drop


def _made_entry(path: str, e: tuple[Any, ...] | None) -> Entry | None:
    """The entry to write for ``(path, e)`` of :func:`made_entries`, ``None`` when the file's stored one goes."""
    if e is None or e[3] is None:
        return None
    size, mtime_ns, ino, ctime_ns = e[1]
    return Entry(path_key(path), size, mtime_ns, ino, ctime_ns, e[2], e[0], e[3])


def _damaged(db: Path) -> bool:
    """Whether the file ``db`` is not a sound SQLite database (``PRAGMA quick_check`` fails or the file is not one);
    ``False`` when it cannot be looked at now (locked, busy: another process is using it)."""
    try:
        conn = sqlite3.connect(db, timeout=BUSY_TIMEOUT_S)
    except sqlite3.Error:
        return False
    try:
        return bool(conn.execute("PRAGMA quick_check").fetchone()[0] != "ok")
    except sqlite3.OperationalError:
        return False
    except sqlite3.DatabaseError:
        return True
    finally:
        conn.close()


__all__ = [
    "CACHE_FORMAT",
    "Entry",
    "OLD_DATABASES",
    "PAYLOAD_FORMAT",
    "STORE_GENERATION",
    "STORE_VERSION",
    "connect",
    "ensure_schema",
    "entry_sum",
    "forget_old_databases",
    "heal",
    "EntryRows",
    "entry_row",
    "made_entries",
    "path_key",
    "store_path",
    "write_entries",
    "write_rows",
]
