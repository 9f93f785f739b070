"""The index's full-text tables, filled once from its rows (:meth:`memzoi.stores.index.Index.rebuild`, and the
refresh after rows were put as they came: the language server's scan, :meth:`memzoi.stores.index.Index.put_rows`).

Rows put so are inserted without the triggers that keep ``records_fts`` and ``proposals_fts`` in sync (11,000 rows
took 1.84 s through them, 1.06 s so); until the tables are filled, ``meta`` holds the key ``fts`` and no search is
served from them. :func:`fill_text` fills both tables from the rows in one pass and creates the triggers, inside
the caller's transaction. :func:`fill_beside` does that on a connection of its own while the caller does other work
(the refresh's plan): FTS5 tokenizes in SQLite, which lets the interpreter go, so at 10,000 records the 0.12 s of
the fill and the plan's Python no longer follow one another at the end of a cold scan (issue 29: cold server
scan, to all diagnostics and index).
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

from .index_schema import _split_sql, _Tx, fts_triggers

T = TypeVar("T")

#: The ``meta`` key an index holds while its full-text tables are to be filled.
TO_FILL = "fts"


def text_to_fill(db: sqlite3.Connection) -> bool:
    """Whether the index ``db`` holds rows whose text the full-text tables do not have yet. Raises
    ``sqlite3.Error``."""
    return db.execute("SELECT 1 FROM meta WHERE key = ?", (TO_FILL,)).fetchone() is not None


def fill_text(db: sqlite3.Connection) -> None:
    """Fill the full-text tables of ``db`` from its rows and create the triggers that keep them in sync, inside the
    caller's transaction. Raises ``sqlite3.Error``."""
    db.execute("DELETE FROM meta WHERE key = ?", (TO_FILL,))
    for table in ("records_fts", "proposals_fts"):
        db.execute(f"INSERT INTO {table}({table}) VALUES('rebuild')")
    for stmt in _split_sql(fts_triggers()):
        db.execute(stmt)


def fill_beside(path: Path, work: Callable[[], T], timeout: float = 5.0) -> T:
    """``work()``'s result, with the full-text tables of the index database at ``path`` filled meanwhile
    (:func:`fill_text`, when still to fill once its write lock is held: another process may have filled them) in one
    transaction of a connection of its own, on a thread of its own; returns once both are done. ``work`` must not
    write to the index (it may read it: WAL readers do not wait for the writer). Raises what ``work`` raises, else
    the fill's ``sqlite3.Error`` (its transaction is then rolled back, and the tables stay to fill)."""
    failed: list[BaseException] = []

    def fill() -> None:
        try:
            conn = sqlite3.connect(path, timeout=timeout, isolation_level=None)
            try:
                with _Tx(conn):
                    if text_to_fill(conn):
                        fill_text(conn)
            finally:
                conn.close()
        except BaseException as err:  # noqa: BLE001 - raised in the caller's thread
            failed.append(err)

    filler = threading.Thread(target=fill, name="memzoi-index-text", daemon=True)
    filler.start()
    try:
        result = work()
    finally:
        filler.join()
    if failed:
        raise failed[0]
    return result


__all__ = ["TO_FILL", "fill_beside", "fill_text", "text_to_fill"]
