"""Reading a runtime database without write access (a read-only memzoi home: a read-only mount, folders without
write permission on a shared or locked-down machine): a listing must answer there, never need to write.

SQLite's rules (https://sqlite.org/wal.html, "Read-Only Databases"; https://sqlite.org/uri.html, ``immutable``):
a WAL database opened ``mode=ro`` needs its ``-shm`` and ``-wal`` files to exist or to be creatable beside it, so
in a folder it may not write it cannot be opened once the last writer closed (SQLite removes both at that
close); ``immutable=1`` opens it anyway, but takes no lock and ignores any ``-wal``, so a file that changes while
it is read, or committed pages still in a ``-wal``, would give a torn or stale answer.

:func:`read_database` therefore reads a database with no ``-wal`` (no writer has it open) as ``immutable`` and
creates nothing beside it, and takes the file's stamp (inode, size, modification and change times) before and
after the read: a read during which it changed, or a ``-wal`` appeared, is read again; a database with a
``-wal`` is read under SQLite's locks (``mode=ro``, which sees the log's commits), and when that cannot be opened
either (a read-only folder without the ``-shm``) it is refused with an error naming the file, never answered
from the database file alone.
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

from .runtime_errors import RuntimeStateError, describe, runtime_error, sqlite_code

T = TypeVar("T")

#: How many times a read that met a change is made again before it is refused as busy.
ATTEMPTS = 3


def _log_in_use(path: Path) -> bool:
    """Whether a non-empty ``-wal`` or ``-journal`` beside ``path`` may hold commits the file itself lacks."""
    for suffix in ("-wal", "-journal"):
        try:
            if os.stat(f"{path}{suffix}").st_size > 0:
                return True
        except FileNotFoundError:
            continue
    return False


def _stamp(path: Path) -> tuple[int, int, int, int, bool]:
    st = os.stat(path)
    return (st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns, _log_in_use(path))


def _connect(path: Path, mode: str, timeout: float) -> sqlite3.Connection:
    conn = sqlite3.connect(f"{Path(os.path.abspath(path)).as_uri()}?{mode}", uri=True, timeout=timeout)
    conn.row_factory = sqlite3.Row
    return conn


def _run(conn: sqlite3.Connection, read: Callable[[sqlite3.Connection], T]) -> T:
    try:
        return read(conn)
    finally:
        conn.close()


def read_database(
    path: Path, read: Callable[[sqlite3.Connection], T], kind: str = "runtime", *, timeout: float = 5.0
) -> T:
    """``read(conn)`` on a read-only connection (rows as :class:`sqlite3.Row`) to the existing database ``path``
    (a ``kind`` of :data:`~.runtime_errors.KINDS`, for messages), as the module docstring says; nothing is ever
    written, and nothing is created beside a database no writer has open. ``read`` must only read (it may run
    more than once). Raises :class:`~.runtime_errors.RuntimeStateError` naming ``path`` when the database cannot
    be read (damaged, locked, unreadable, its ``-wal`` unreadable without write access, or changing under every
    attempt: ``database_busy``); whatever else ``read`` raises passes unchanged."""
    for _ in range(ATTEMPTS):
        try:
            before = _stamp(path)
            if before[4]:
                return _logged(path, read, kind, timeout)
            try:
                result = _run(_connect(path, "mode=ro&immutable=1", timeout), read)
            except sqlite3.Error:
                if _stamp(path) != before:  # a page torn by a concurrent write: read again
                    continue
                raise
            if _stamp(path) == before:
                return result
        except (OSError, sqlite3.Error) as err:
            raise runtime_error(err, path, kind) from err
    problem, advice = describe("database_busy", path, kind, "it changed while it was read")
    raise RuntimeStateError("database_busy", f"{problem}; {advice}", path, advice=advice)


def _logged(path: Path, read: Callable[[sqlite3.Connection], T], kind: str, timeout: float) -> T:
    """``read`` under SQLite's locks, for a database whose ``-wal`` may hold commits."""
    conn = None
    try:
        conn = _connect(path, "mode=ro", timeout)
        conn.execute("SELECT count(*) FROM sqlite_master").fetchone()  # opens the log and its index, or fails
    except sqlite3.Error as err:
        if conn is not None:
            conn.close()
        if sqlite_code(err) != sqlite3.SQLITE_CANTOPEN:
            raise
        # Its log cannot be read here, and the file alone would be stale: refused, never answered from it.
        detail = f"{err}; its write-ahead log {path}-wal can be read only where {path.parent} can be written"
        code = runtime_error(err, path, kind).code
        problem, advice = describe(code, path, kind, detail)
        raise RuntimeStateError(code, f"{problem}; {advice}", path, advice=advice) from err
    return _run(conn, read)


__all__ = ["ATTEMPTS", "read_database"]
