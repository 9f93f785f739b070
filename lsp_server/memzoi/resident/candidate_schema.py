"""The ``memory_candidate`` table of the resident candidate database (:mod:`.candidates`; columns after Zuno's,
reference ``zuno-memory.md`` §1, §8): its schema, its version (``PRAGMA user_version``) and the upgrades from each
older version, applied once per database in one transaction.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

from ..ledger import Refusal
from ..ledger.store import immediate as transaction

#: The table and its indexes at :data:`USER_VERSION`.
SCHEMA = """
CREATE TABLE IF NOT EXISTS memory_candidate (
    id TEXT PRIMARY KEY,
    scope TEXT NOT NULL CONSTRAINT memory_candidate_target CHECK (scope IN ('global', 'project')),
    target_path TEXT NOT NULL,
    action TEXT NOT NULL CONSTRAINT memory_candidate_action CHECK (action IN ('add', 'replace', 'remove', 'recover')),
    content TEXT,
    old_text TEXT,
    reason TEXT NOT NULL,
    confidence INTEGER NOT NULL CHECK (confidence BETWEEN 0 AND 10000),
    source TEXT NOT NULL CONSTRAINT memory_candidate_source CHECK (source IN ('user', 'foreground_tool', 'reflection')),
    source_session_id TEXT,
    source_message_id TEXT,
    fingerprint TEXT,
    actor TEXT NOT NULL,
    decided_by TEXT,
    decision_reason TEXT,
    undone_by TEXT,
    recovers TEXT,
    recovery_mode TEXT,
    status TEXT NOT NULL CONSTRAINT memory_candidate_status CHECK (status IN
        ('pending', 'applying', 'undoing', 'applied', 'rejected', 'undone', 'failed', 'uncertain')),
    before_entries TEXT,
    after_entries TEXT,
    error TEXT,
    time_created INTEGER NOT NULL,
    time_updated INTEGER NOT NULL,
    time_applied INTEGER,
    layout TEXT,
    original_content TEXT
);
CREATE INDEX IF NOT EXISTS memory_candidate_path_status_time_idx
    ON memory_candidate (target_path, status, time_created);
CREATE INDEX IF NOT EXISTS memory_candidate_session_time_idx ON memory_candidate (source_session_id, time_created);
CREATE UNIQUE INDEX IF NOT EXISTS memory_candidate_reflection_source_fingerprint_idx
    ON memory_candidate (source_session_id, source_message_id, fingerprint)
    WHERE source = 'reflection' AND fingerprint IS NOT NULL;
"""
USER_VERSION = 3
#: Upgrades from an older schema version, applied in order in the connection's first transaction.
MIGRATIONS = {
    1: "ALTER TABLE memory_candidate ADD COLUMN layout TEXT",
    2: "ALTER TABLE memory_candidate ADD COLUMN original_content TEXT",
}


def ensure_schema(conn: sqlite3.Connection, path: Path) -> None:
    """Create the table in a new database (``path``, named in errors), or upgrade an older one. Raises
    :class:`Refusal` ``resident_schema`` for a version this code does not know (a newer memzoi-lsp wrote it)."""
    version = conn.execute("PRAGMA user_version").fetchone()[0]
    if version == 0:
        conn.executescript(SCHEMA)
        conn.execute(f"PRAGMA user_version={USER_VERSION}")
    elif version in MIGRATIONS:
        _migrate(conn, version)
    elif version != USER_VERSION:
        raise Refusal("resident_schema", f"{path}: unsupported candidate schema version {version}; upgrade memzoi-lsp")


def _migrate(conn: sqlite3.Connection, version: int) -> None:
    """Upgrade the schema from ``version`` to :data:`USER_VERSION` in one transaction (another process may have
    upgraded it meanwhile: the version is read again inside)."""
    with transaction(conn):
        version = conn.execute("PRAGMA user_version").fetchone()[0]
        while version in MIGRATIONS:
            conn.execute(MIGRATIONS[version])
            version += 1
        conn.execute(f"PRAGMA user_version={version}")
