"""The ledger knows which checkout it was written for (:mod:`memzoi.base.checkout`), and another checkout at the same
path neither reads its changes nor writes into them.

Every connection of :meth:`~memzoi.ledger.store.Ledger.connect` made for a project goes through :func:`claimed`, so
``check``, the editor, the MCP tools and every lifecycle command follow one rule: a reader of a ledger written for
another checkout sees an empty ledger (nothing is written: ``check`` stays read-only); a writer first sets that
ledger aside, a complete copy under a name saying when and why, then empties the live one and binds it to this
checkout, in one transaction. Nothing is deleted before its copy is durable.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from pathlib import Path

from ..base.checkout import checkout_id, foreign, set_aside_path
from ..base.runtime import cached_keys, private_file
from .schema import _SCHEMA


def bound(conn: sqlite3.Connection) -> str | None:
    """The checkout id the ledger of ``conn`` was written for; ``None`` when it records none."""
    row = conn.execute("SELECT id FROM ledger_checkout LIMIT 1").fetchone()
    return str(row[0]) if row else None


def claimed(
    conn: sqlite3.Connection, root: Path, db: Path, *, write: bool, now: Callable[[], str]
) -> sqlite3.Connection:
    """The connection a caller of ``root``'s ledger ``db`` (open as ``conn``, migrated) should use.

    A ledger of this checkout, or one outside git, is ``conn`` itself. A reader (``write`` false) of another
    checkout's ledger gets a new, empty in-memory ledger (``conn`` is closed). A writer binds an unbound ledger
    (one made before checkout ids: it is taken as this checkout's, the only reading that loses nothing) and sets
    another checkout's ledger aside (:func:`set_aside`). ``now`` gives the binding's time (RFC 3339)."""
    current = checkout_id(root)
    if current is None:
        return conn
    was = bound(conn)
    if was is not None and was == current:
        if write:
            _record_place(conn, root)
        return conn
    if not write:
        if foreign(was, current):
            conn.close()
            return empty_ledger()
        return conn
    mine = current or checkout_id(root, create=True)
    if not mine:  # the git folder cannot take an id: nothing to bind to
        return conn
    conn.execute("BEGIN IMMEDIATE")
    try:
        was = bound(conn)  # again, under the write lock: another process may have done it meanwhile
        if was != mine:
            if was is not None:
                set_aside(conn, db)
            bind(conn, root, mine, now())
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    conn.execute("COMMIT")
    return conn


def place(root: Path) -> tuple[str, str]:
    """Where the checkout of ``root`` is: its resolved project root and git common dir (empty outside git), as
    ``ledger_checkout`` records them (schema 9), so a ledger left under the key of a moved repository can later be
    told from one a copy of the repository still uses (:mod:`memzoi.base.ledgerfind`)."""
    resolved = Path(root).resolve()
    return str(resolved), cached_keys(resolved).git_common_dir


def bind(conn: sqlite3.Connection, root: Path, checkout: str, at: str) -> None:
    """Make ``checkout`` (an id) the one the ledger of ``conn`` is written for, bound at ``at`` (RFC 3339), with the
    place of ``root`` (:func:`place`); the caller holds the write transaction."""
    conn.execute("DELETE FROM ledger_checkout")
    conn.execute(
        "INSERT INTO ledger_checkout (id, bound_at, project_root, git_common_dir) VALUES (?, ?, ?, ?)",
        (checkout, at, *place(root)),
    )


def _record_place(conn: sqlite3.Connection, root: Path) -> None:
    """Record the place of ``root``'s checkout in its ledger bound before schema 9 (``NULL`` there), once: a writer's
    connection asks, and writes only when it is missing."""
    row = conn.execute("SELECT 1 FROM ledger_checkout WHERE project_root IS NULL LIMIT 1").fetchone()
    if row is None:
        return
    with_place = place(root)
    conn.execute("BEGIN IMMEDIATE")
    try:
        conn.execute(
            "UPDATE ledger_checkout SET project_root = ?, git_common_dir = ? WHERE project_root IS NULL", with_place
        )
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    conn.execute("COMMIT")


def set_aside(conn: sqlite3.Connection, db: Path) -> Path:
    """Copy the ledger ``db`` whole (SQLite's backup, from a second, read-only connection: ``conn`` holds the write
    lock, so the copy is the last committed state) to :func:`~memzoi.base.checkout.set_aside_path`, mode 0600, then
    empty every table of ``conn``; the caller commits. Returns the copy's path."""
    dest = private_file(set_aside_path(db))
    try:
        src = sqlite3.connect(f"{db.as_uri()}?mode=ro", uri=True, timeout=30)
        out = sqlite3.connect(dest)
        try:
            src.backup(out)
        finally:
            out.close()
            src.close()
    except BaseException:  # a copy cut short (a full disk) is no audit trail: the live ledger stays as it was
        dest.unlink(missing_ok=True)
        raise
    conn.execute("PRAGMA defer_foreign_keys=ON")  # emptied together: no order among the references
    tables = [r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
    for table in tables:
        if not table.startswith("sqlite_"):
            conn.execute(f'DELETE FROM "{table}"')
    return dest


def empty_ledger() -> sqlite3.Connection:
    """An in-memory ledger with the current schema and no rows (what a reader of another checkout's ledger sees)."""
    conn = sqlite3.connect(":memory:", isolation_level=None)
    conn.row_factory = sqlite3.Row
    conn.executescript(_SCHEMA)
    return conn
