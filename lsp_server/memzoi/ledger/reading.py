"""Reading the ledger without write access: history, local records and checkpoints answer from a read-only memzoi
home (a read-only mount, folders this user may not write) as they do from a writable one.

A reader's connection (:meth:`~.store.Ledger.connect` with ``create=False``) opens the file for writing: it also
brings an older schema to the current one, and its close folds a log a dead writer left back into the file (which
``check``'s replay and the editor's ledger view follow by the file's and the log's stamps). Where the home can be
written that stays the reading. Where it cannot (the connection is refused ``read_only_file_system`` or
``permission_denied``), a ledger at the current schema is read through :func:`memzoi.base.dbread.read_database`
(nothing written or made beside it, never a stale or torn read) and seen as this checkout's reader sees it (another
checkout's ledger reads empty, :func:`.checkout.claimed`); one that would need its schema upgraded keeps the
refusal.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from typing import TypeVar

from ..base.dbread import read_database
from ..base.runtime_errors import RuntimeStateError
from .checkout import claimed
from .schema import _USER_VERSION
from .store import Ledger, now_utc

T = TypeVar("T")


#: The refusals of a writable connection that a read-only one works around: the home cannot be written.
UNWRITABLE = frozenset({"read_only_file_system", "permission_denied"})


def read_ledger(ledger: Ledger, fn: Callable[[sqlite3.Connection], T]) -> T:
    """``fn(conn)`` on a connection to the existing ``ledger`` (``Ledger.for_project(..., create=False)``, whose
    :attr:`~.store.Ledger.exists` the caller checked), read-only where the home cannot be written (the module
    docstring). ``fn`` must only read (it may run twice). Raises
    :class:`~memzoi.base.runtime_errors.RuntimeStateError` naming the ledger when it cannot be read,
    :class:`~.model.Refusal` ``ledger_schema`` for a newer schema."""
    try:
        with ledger.connect() as conn:
            return fn(conn)
    except RuntimeStateError as err:
        if err.code not in UNWRITABLE:
            raise
        refused = err

    def reading(conn: sqlite3.Connection) -> T:
        if conn.execute("PRAGMA user_version").fetchone()[0] != _USER_VERSION:
            raise refused  # an older schema is read only once upgraded, which needs the write refused
        seen = claimed(conn, ledger.root, ledger.path, write=False, now=now_utc) if ledger.root is not None else conn
        try:
            return fn(seen)
        finally:
            if seen is not conn:  # another checkout's ledger: an empty one in memory
                seen.close()

    return read_database(ledger.path, reading, "ledger")


__all__ = ["UNWRITABLE", "read_ledger"]
