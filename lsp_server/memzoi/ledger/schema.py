"""The ledger's SQLite schema, its migrations, and how a file state is stored (bytes, or digest and size)."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable

from .model import Purged, Refusal

_SCHEMA = (
    """
CREATE TABLE IF NOT EXISTS change (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    id TEXT NOT NULL UNIQUE,
    operation TEXT NOT NULL,
    actor TEXT NOT NULL,
    source TEXT NOT NULL CHECK (source IN ('editor', 'cli', 'mcp')),
    reason TEXT,
    summary TEXT NOT NULL DEFAULT '',
    status TEXT NOT NULL CHECK (status IN ('applying','applied','undoing','undone','failed','uncertain')),
    phase TEXT NOT NULL DEFAULT 'apply' CHECK (phase IN ('apply', 'undo')),
    diagnostic TEXT,
    details_json TEXT NOT NULL DEFAULT '{}',
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    applied_at TEXT,
    undone_at TEXT,
    undo_actor TEXT,
    undo_source TEXT
);
CREATE TABLE IF NOT EXISTS change_file (
    change_id TEXT NOT NULL REFERENCES change(id),
    idx INTEGER NOT NULL,
    path TEXT NOT NULL,
    before BLOB,
    after BLOB,
    before_digest TEXT,
    before_size INTEGER,
    after_digest TEXT,
    after_size INTEGER,
    before_mode INTEGER,
    after_mode INTEGER,
    PRIMARY KEY (change_id, idx)
);
CREATE INDEX IF NOT EXISTS change_file_path ON change_file(path);
CREATE INDEX IF NOT EXISTS change_status ON change(status);
CREATE TABLE IF NOT EXISTS local_record (
    rowid INTEGER PRIMARY KEY AUTOINCREMENT,
    id TEXT NOT NULL,
    change_id TEXT NOT NULL REFERENCES change(id),
    type TEXT NOT NULL,
    lane TEXT NOT NULL,
    title TEXT NOT NULL,
    body TEXT NOT NULL,
    tags_json TEXT NOT NULL DEFAULT '[]',
    applies_to_json TEXT NOT NULL DEFAULT '[]',
    sensitivity TEXT NOT NULL,
    content_class TEXT NOT NULL,
    source_kind TEXT,
    source_ref TEXT,
    proposal_id TEXT,
    created_at TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS local_record_id ON local_record(id);
CREATE TABLE IF NOT EXISTS local_candidate (
    id TEXT PRIMARY KEY,
    type TEXT NOT NULL,
    lane TEXT NOT NULL,
    title TEXT NOT NULL,
    body TEXT NOT NULL,
    body_hash TEXT NOT NULL,
    reason TEXT NOT NULL,
    confidence_bp INTEGER NOT NULL,
    tags_json TEXT NOT NULL DEFAULT '[]',
    applies_to_json TEXT NOT NULL DEFAULT '[]',
    source_ref TEXT,
    actor TEXT NOT NULL,
    source TEXT NOT NULL,
    status TEXT NOT NULL CHECK (status IN ('pending', 'applied', 'rejected')),
    change_id TEXT REFERENCES change(id),
    decided_by TEXT,
    decided_at TEXT,
    decision_reason TEXT,
    created_at TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS local_candidate_hash ON local_candidate(body_hash);
"""
    + """
CREATE TABLE IF NOT EXISTS checkpoint (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    id TEXT NOT NULL UNIQUE,
    change_id TEXT NOT NULL REFERENCES change(id),
    task TEXT NOT NULL,
    title TEXT NOT NULL,
    body TEXT NOT NULL,
    source_kind TEXT NOT NULL CHECK (source_kind IN ('note', 'file', 'session_end')),
    status TEXT NOT NULL CHECK (status IN ('open', 'closed')),
    version INTEGER NOT NULL DEFAULT 1,
    started_at TEXT NOT NULL,
    last_continued_at TEXT,
    closed_at TEXT,
    predecessor_id TEXT,
    generation INTEGER NOT NULL DEFAULT 1,
    lineage_json TEXT NOT NULL DEFAULT '{}',
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS runtime_operation (
    operation_id TEXT PRIMARY KEY,
    command TEXT NOT NULL,
    input_fingerprint TEXT NOT NULL,
    change_id TEXT REFERENCES change(id),
    outcome_json TEXT NOT NULL,
    created_at TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS ledger_checkout (
    id TEXT NOT NULL,
    bound_at TEXT NOT NULL,
    project_root TEXT,
    git_common_dir TEXT
);
CREATE TABLE IF NOT EXISTS change_folder (
    change_id TEXT NOT NULL REFERENCES change(id),
    path TEXT NOT NULL,
    PRIMARY KEY (change_id, path)
);
"""
)
#: 2: the ``mcp`` source and ``local_candidate``; 3: ``change_file`` keeps digest and size instead of bytes
#: that held a secret (:class:`Purged`); 4: local candidates and records keep ``applies_to`` (Memzoi's local
#: records carry paths too: its ``memory_path`` rows); 5: session checkpoints (``checkpoint``) and the recorded
#: outcomes of caller-controlled operation ids (``runtime_operation``); 6: ``change_file`` keeps each state's
#: permission bits (``before_mode``, ``after_mode``; ``NULL`` in older rows: the umask's mode, as before); 7: the
#: checkout the ledger was written for (``ledger_checkout``, one row; :mod:`memzoi.ledger.checkout`); 8: the folders
#: each change creates (``change_folder``; none for older changes), removed again when empty once the change's files
#: are back at their before bytes (:mod:`memzoi.ledger.folders`); 9: where the ledger's checkout was when it bound it
#: (``ledger_checkout.project_root``, ``git_common_dir``; ``NULL`` until its next write), so a ledger left under the
#: key of a moved repository can be told from one a copy of the repository still uses (:mod:`memzoi.base.ledgerfind`).
_USER_VERSION = 9
_PLACE_COLUMNS = ("project_root TEXT", "git_common_dir TEXT")
_MODE_COLUMNS = ("before_mode INTEGER", "after_mode INTEGER")
_APPLIES_TO = "applies_to_json TEXT NOT NULL DEFAULT '[]'"
_DIGEST_COLUMNS = ("before_digest TEXT", "before_size INTEGER", "after_digest TEXT", "after_size INTEGER")
#: Version 1 lacked the ``mcp`` source and ``local_candidate``. SQLite cannot alter a CHECK constraint, so the
#: ``change`` table is copied into a new one (foreign keys off meanwhile, one transaction; no row changes).
_MIGRATE_1_TO_2 = """
CREATE TABLE change_v2 (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    id TEXT NOT NULL UNIQUE,
    operation TEXT NOT NULL,
    actor TEXT NOT NULL,
    source TEXT NOT NULL CHECK (source IN ('editor', 'cli', 'mcp')),
    reason TEXT,
    summary TEXT NOT NULL DEFAULT '',
    status TEXT NOT NULL CHECK (status IN ('applying','applied','undoing','undone','failed','uncertain')),
    phase TEXT NOT NULL DEFAULT 'apply' CHECK (phase IN ('apply', 'undo')),
    diagnostic TEXT,
    details_json TEXT NOT NULL DEFAULT '{}',
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    applied_at TEXT,
    undone_at TEXT,
    undo_actor TEXT,
    undo_source TEXT
);
INSERT INTO change_v2 SELECT * FROM change;
DROP TABLE change;
ALTER TABLE change_v2 RENAME TO change;
CREATE INDEX IF NOT EXISTS change_status ON change(status);
"""


def holds_secret(data: bytes | str) -> bool:
    """:func:`memzoi.safety.redact.holds_secret`, imported at its first use (the detectors are not
    loaded by a check that only reads the ledger's state)."""
    from ..safety.redact import holds_secret as scan  # noqa: PLC0415 lazy: start-up

    return scan(data)


def _migrate_from_1(conn: sqlite3.Connection) -> None:
    """Bring a version-1 ledger to version 2 in one transaction (a concurrent opener waits, then sees 2)."""
    conn.execute("PRAGMA foreign_keys=OFF")
    try:
        conn.execute("BEGIN IMMEDIATE")
        try:
            if conn.execute("PRAGMA user_version").fetchone()[0] == 1:
                for script in (_MIGRATE_1_TO_2, _SCHEMA):  # _SCHEMA: only new tables (all IF NOT EXISTS)
                    for stmt in script.split(";"):
                        if stmt.strip():
                            conn.execute(stmt)
                conn.execute("PRAGMA user_version=2")
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        conn.execute("COMMIT")
    finally:
        conn.execute("PRAGMA foreign_keys=ON")


def migrate(conn: sqlite3.Connection, path: object) -> None:
    """Create the schema in a new ledger, or bring an older one to :data:`_USER_VERSION`. Raises
    :class:`~memzoi.ledger.model.Refusal` (``ledger_schema``) for a newer, unknown version."""
    version = conn.execute("PRAGMA user_version").fetchone()[0]
    if version == 0:
        conn.executescript(_SCHEMA)
        conn.execute(f"PRAGMA user_version={_USER_VERSION}")
    elif 1 <= version < _USER_VERSION:
        if version == 1:
            _migrate_from_1(conn)
        for step in range(max(version, 2), _USER_VERSION):
            _step(conn, step, _STEPS[step])
            if step == 2:  # the purged snapshots' bytes leave the WAL too
                conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    elif version != _USER_VERSION:
        raise Refusal("ledger_schema", f"{path}: unsupported ledger schema version {version}; upgrade memzoi-lsp")


def _state(data: bytes | None, digest: str | None, size: int | None) -> bytes | None | Purged:
    return Purged(digest, size or 0) if data is None and digest is not None else data


def as_stored(data: bytes | None | Purged, purge: bool = False) -> bytes | None | Purged:
    """A file state as the ledger keeps it: bytes that hold a secret (any detector of
    :data:`memzoi.safety.redact.SECRET_CODES`), or that ``purge`` asks to drop, become :class:`Purged`."""
    if isinstance(data, bytes) and (purge or holds_secret(data)):
        return Purged.of(data)
    return data


def stored_state(data: bytes | None | Purged) -> tuple[bytes | None, str | None, int | None]:
    """The ``(bytes, digest, size)`` columns of a state from :func:`as_stored`."""
    if isinstance(data, Purged):
        return None, data.digest, data.size
    return data, None, None


def _step(conn: sqlite3.Connection, version: int, change: Callable[[sqlite3.Connection], None]) -> None:
    """Bring a ledger at schema ``version`` to ``version + 1`` by ``change`` in one ``BEGIN IMMEDIATE``
    transaction: a concurrent opener waits, then sees the new version (and ``change`` is not run twice); a ledger
    already past ``version`` is left alone; any error rolls the whole step back."""
    conn.execute("BEGIN IMMEDIATE")
    try:
        if conn.execute("PRAGMA user_version").fetchone()[0] == version:
            change(conn)
            conn.execute(f"PRAGMA user_version={version + 1}")
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    conn.execute("COMMIT")


def _add_columns(conn: sqlite3.Connection, table: str, columns: tuple[str, ...]) -> None:
    """``ALTER TABLE table ADD COLUMN`` each of ``columns`` (``"name TYPE ..."``) the table does not have yet."""
    have = {r[1] for r in conn.execute(f"PRAGMA table_info({table})")}
    for col in columns:
        if col.split()[0] not in have:
            conn.execute(f"ALTER TABLE {table} ADD COLUMN {col}")


def _new_tables(conn: sqlite3.Connection) -> None:
    """Create the tables of :data:`_SCHEMA` a ledger lacks (every statement is ``IF NOT EXISTS``; no row changes)."""
    for stmt in _SCHEMA.split(";"):
        if stmt.strip():
            conn.execute(stmt)


def _to_3(conn: sqlite3.Connection) -> None:
    """Schema 2 → 3: add the digest columns and purge every stored snapshot that holds a secret (earlier schemas
    kept the exact bytes of rejected secret packets); :func:`migrate` then truncates the WAL, and freed pages are
    zeroed (``secure_delete``), so the bytes are gone from the files."""
    _add_columns(conn, "change_file", _DIGEST_COLUMNS)
    rows = conn.execute("SELECT change_id, idx, before, after FROM change_file").fetchall()
    for r in rows:
        for side in ("before", "after"):
            if r[side] is not None and holds_secret(r[side]):
                _, digest, size = stored_state(Purged.of(r[side]))
                conn.execute(
                    f"UPDATE change_file SET {side} = NULL, {side}_digest = ?, {side}_size = ? "
                    "WHERE change_id = ? AND idx = ?",
                    (digest, size, r["change_id"], r["idx"]),
                )


def _to_4(conn: sqlite3.Connection) -> None:
    """Schema 3 → 4: ``applies_to_json`` on ``local_candidate`` and ``local_record`` (``[]`` for existing rows)."""
    for table in ("local_candidate", "local_record"):
        _add_columns(conn, table, (_APPLIES_TO,))


def _to_6(conn: sqlite3.Connection) -> None:
    """Schema 5 → 6: ``before_mode`` and ``after_mode`` on ``change_file`` (``NULL`` for existing rows, which undo
    and recovery read as "not known": a re-created file gets the umask's mode, as these versions gave it)."""
    _add_columns(conn, "change_file", _MODE_COLUMNS)


def _to_9(conn: sqlite3.Connection) -> None:
    """Schema 8 → 9: ``project_root`` and ``git_common_dir`` on ``ledger_checkout`` (``NULL`` for a bound row: its
    checkout records its place at its next write, :func:`memzoi.ledger.checkout.claimed`)."""
    _add_columns(conn, "ledger_checkout", _PLACE_COLUMNS)


#: The step from each schema version to the next (:func:`_step`): 4 → 5 adds the ``checkpoint`` and
#: ``runtime_operation`` tables, 6 → 7 the ``ledger_checkout`` table (bound to a checkout at the ledger's next write,
#: :func:`memzoi.ledger.checkout.claimed`), 7 → 8 the ``change_folder`` table; all new and empty.
_STEPS: dict[int, Callable[[sqlite3.Connection], None]] = {
    2: _to_3,
    3: _to_4,
    4: _new_tables,
    5: _to_6,
    6: _new_tables,
    7: _new_tables,
    8: _to_9,
}
