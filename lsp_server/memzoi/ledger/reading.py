"""Reading the ledger without write access: history, local records and checkpoints answer from a read-only memzoi
home (a read-only mount, folders this user may not write) as they do from a writable one.

A reader's connection (:meth:`~.store.Ledger.connect` with ``create=False``) opens the file for writing, because
it also brings an older schema to the current one; on a home it cannot write, every reading then failed. Here a
ledger at the current schema is read through :func:`memzoi.base.dbread.read_database` (nothing written or made
beside it, never a stale or torn read) and seen as this checkout's reader sees it (another checkout's ledger reads
empty, :func:`.checkout.claimed`); one that needs its schema brought up to date still goes through
:meth:`~.store.Ledger.connect`, which migrates it, so that only a reading that needs a write asks for one.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from typing import TypeVar

from ..base.dbread import read_database
from .checkout import claimed
from .schema import _USER_VERSION
from .store import Ledger, now_utc

T = TypeVar("T")


class _NeedsMigration(Exception):
    """The ledger's schema is older than this code's: reading it needs :meth:`Ledger.connect`."""


def read_ledger(ledger: Ledger, fn: Callable[[sqlite3.Connection], T]) -> T:
    """``fn(conn)`` on a read-only connection to the existing ``ledger`` (``Ledger.for_project(..., create=False)``,
    whose :attr:`~.store.Ledger.exists` the caller checked), as the module docstring says. ``fn`` must only read
    (it may run twice). Raises :class:`~memzoi.base.runtime_errors.RuntimeStateError` naming the ledger when it
    cannot be read, :class:`~.model.Refusal` ``ledger_schema`` for a newer schema (from :meth:`Ledger.connect`)."""

    def reading(conn: sqlite3.Connection) -> T:
        if conn.execute("PRAGMA user_version").fetchone()[0] != _USER_VERSION:
            raise _NeedsMigration
        seen = claimed(conn, ledger.root, ledger.path, write=False, now=now_utc) if ledger.root is not None else conn
        try:
            return fn(seen)
        finally:
            if seen is not conn:  # another checkout's ledger: an empty one in memory
                seen.close()

    try:
        return read_database(ledger.path, reading, "ledger")
    except _NeedsMigration:
        with ledger.connect() as conn:
            return fn(conn)


__all__ = ["read_ledger"]
