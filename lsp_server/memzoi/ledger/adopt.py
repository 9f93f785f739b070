"""Bring a ledger of this checkout found in another runtime folder (:mod:`memzoi.base.ledgerfind`: a moved
repository's, or the one kept while git refused the repository) into this checkout's own ledger
(``memzoi reconcile --adopt RUNTIME-DIR``).

Safe by construction: only a ledger :func:`~memzoi.base.ledgerfind.find_ledgers` lists is taken, never one a copy of
the repository still uses (a ``cp -a`` copy carries the same checkout id: the ledger records where its checkout was,
and that place still holding the id is a copy, not a move), and never one that records no place unless the caller
says the repository was moved. The source is copied with SQLite's backup from a read-only connection into a private
temporary file beside this ledger (the old ledger and its WAL are only read; SQLite may refresh the ``-shm``
index of one a crashed process left with a WAL), brought to the current schema there, then its
rows are inserted into this checkout's ledger in one ``BEGIN IMMEDIATE`` transaction under the lifecycle lock,
which also checks that this ledger holds nothing yet, and binds it to this checkout. Any failure leaves this ledger
as it was.
"""

from __future__ import annotations

import os
import secrets
import sqlite3
from dataclasses import dataclass
from pathlib import Path

from ..base.checkout import checkout_id, read_only
from ..base.ledgerfind import FoundLedger, find_ledgers
from ..base.lock import LockBusy, lifecycle_lock
from ..base.runtime import DB_COMPANIONS, LEDGER_DB, private_file
from ..base.runtime_errors import guard
from ..judge.pathsafety import shown_local_path
from .checkout import bind
from .model import Refusal
from .schema import migrate
from .store import Ledger, cached_runtime_dir, immediate, now_utc

#: The one table whose rows are this checkout's own, not the adopted ledger's.
_OWN = "ledger_checkout"


@dataclass(frozen=True)
class Adopted:
    """What :func:`adopt_ledger` brought over: from ``source`` (a runtime folder) into the ledger file ``ledger``,
    ``changes`` changes."""

    source: Path
    ledger: Path
    changes: int


def _found(root: Path, runtime_dir: Path) -> FoundLedger:
    """The finding of :func:`find_ledgers` for ``runtime_dir``; refuses (``ledger_not_found``) any other folder."""
    wanted = os.path.realpath(runtime_dir)
    for f in find_ledgers(root).found:
        if os.path.realpath(f.runtime_dir) == wanted:
            return f
    raise Refusal.of_local_path(
        "ledger_not_found",
        f"{runtime_dir} holds no ledger of this checkout to bring over (`memzoi doctor` lists the ones found: "
        "a moved repository's, bound to this checkout, or the one kept while git refused this folder); nothing "
        "was changed",
        runtime_dir,
    )


def _check(found: FoundLedger, assume_moved: bool) -> None:
    """Refuse a ledger a copy of the repository uses, or one of unknown place without ``assume_moved``."""
    if found.copy_of is not None:
        raise Refusal.of_local_path(
            "ledger_of_a_copy",
            f"the ledger in {found.runtime_dir} is used by a copy of this repository at "
            f"{shown_local_path(found.copy_of)} (a copy "
            "carries the same checkout id); a copy never takes its original's ledger, so nothing was changed",
            found.runtime_dir,
        )
    if not found.place_known and not assume_moved:
        raise Refusal.of_local_path(
            "ledger_place_unknown",
            f"the ledger in {found.runtime_dir} records no place (an earlier version wrote it), so a copy of this "
            "repository cannot be told from a move; nothing was changed. If this repository was moved and no copy "
            "uses that ledger, run again with --assume-moved",
            found.runtime_dir,
        )


def _snapshot(source: Path, dest: Path) -> None:
    """Copy the ledger ``source`` whole into the new private file ``dest`` (SQLite backup from a read-only
    connection, so nothing is written beside ``source``) and bring the copy to the current schema."""
    src = read_only(source)
    try:
        out = sqlite3.connect(dest)
        try:
            src.backup(out)
        finally:
            out.close()
    finally:
        src.close()
    conn = sqlite3.connect(dest, isolation_level=None)
    try:
        conn.row_factory = sqlite3.Row
        migrate(conn, dest)
    finally:
        conn.close()


def _tables(conn: sqlite3.Connection, schema: str) -> list[str]:
    rows = conn.execute(f"SELECT name FROM {schema}.sqlite_master WHERE type = 'table' ORDER BY rowid")
    return [r[0] for r in rows if not r[0].startswith("sqlite_") and r[0] != _OWN]


def _columns(conn: sqlite3.Connection, schema: str, table: str) -> list[str]:
    return [r[1] for r in conn.execute(f'PRAGMA {schema}.table_info("{table}")')]


def _copy_rows(conn: sqlite3.Connection, root: Path) -> int:
    """In the open write transaction of ``conn`` (this ledger, with the copy attached as ``src``): refuse unless this
    ledger holds no row (``ledger_not_empty``), insert every row of the copy, bind the ledger to this checkout.
    Returns the number of changes brought over."""
    mine = _tables(conn, "main")
    held = sum(conn.execute(f'SELECT count(*) FROM main."{t}"').fetchone()[0] for t in mine)
    if held:
        raise Refusal(
            "ledger_not_empty",
            "this checkout's ledger already holds changes or local candidates, and two histories are never merged: "
            "the other ledger stays where it is, as its audit trail; nothing was changed",
        )
    conn.execute("PRAGMA defer_foreign_keys=ON")  # rows referring to each other arrive table by table
    for table in _tables(conn, "src"):
        if table not in mine:
            continue
        cols = ", ".join(f'"{c}"' for c in _columns(conn, "src", table) if c in _columns(conn, "main", table))
        conn.execute(f'INSERT INTO main."{table}" ({cols}) SELECT {cols} FROM src."{table}"')
    current = checkout_id(root, create=True)
    if current:  # outside git there is no id: the ledger stays unbound, as every ledger there
        bind(conn, root, current, now_utc())
    return int(conn.execute("SELECT count(*) FROM main.change").fetchone()[0])


def adopt_ledger(
    project_root: str | os.PathLike[str], runtime_dir: str | os.PathLike[str], *, assume_moved: bool = False
) -> Adopted:
    """Bring the ledger in ``runtime_dir`` (one :func:`~memzoi.base.ledgerfind.find_ledgers` lists for
    ``project_root``) into ``project_root``'s ledger (see the module docstring). Raises :class:`Refusal`
    (``ledger_not_found``, ``ledger_of_a_copy``, ``ledger_place_unknown``, ``ledger_not_empty``, ``ledger_schema``)
    with nothing changed, or :class:`~memzoi.base.runtime_errors.RuntimeStateError` naming a database that cannot be
    read or written."""
    root = Path(project_root).resolve()
    found = _found(root, Path(runtime_dir))
    _check(found, assume_moved)
    source = found.runtime_dir / LEDGER_DB
    rdir = cached_runtime_dir(root)
    try:
        return _adopt_locked(root, found, source, rdir)
    except LockBusy as err:
        raise Refusal("lock_busy", str(err)) from err


def _adopt_locked(root: Path, found: FoundLedger, source: Path, rdir: Path) -> Adopted:
    """:func:`adopt_ledger`'s copy, under the lifecycle lock of ``root`` (its runtime folder ``rdir``)."""
    with lifecycle_lock(root, runtime_dir=rdir):
        for stale in rdir.glob(f".{LEDGER_DB}.adopt-*.tmp*"):  # a killed adoption's; the lock says none runs now
            stale.unlink(missing_ok=True)
        tmp = private_file(rdir / f".{LEDGER_DB}.adopt-{secrets.token_hex(6)}.tmp")
        try:
            try:
                with guard(source, "ledger"):
                    _snapshot(source, tmp)
            except Refusal as err:  # a newer schema: named by the ledger it was read from, not the copy
                raise Refusal.of_local_path(err.code, err.message.replace(str(tmp), str(source)), source) from err
            ledger = Ledger.for_project(root, rdir)
            with ledger.connect() as conn:
                conn.execute("ATTACH DATABASE ? AS src", (str(tmp),))
                try:
                    with immediate(conn):
                        changes = _copy_rows(conn, root)
                finally:
                    conn.execute("DETACH DATABASE src")
        finally:
            for p in (tmp, *(Path(f"{tmp}{s}") for s in DB_COMPANIONS)):
                p.unlink(missing_ok=True)
    return Adopted(found.runtime_dir, ledger.path, changes)


def shown_adopted(adopted: Adopted) -> dict[str, object]:
    """``adopted`` as JSON, paths as :func:`~memzoi.judge.pathsafety.shown_local_path` shows them."""
    return {
        "from": shown_local_path(adopted.source),
        "ledger": shown_local_path(adopted.ledger),
        "changes": adopted.changes,
    }


__all__ = ["Adopted", "adopt_ledger", "shown_adopted"]
