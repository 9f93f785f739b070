"""The ledger database (schema, connection, rows) and the path helpers every ledger module uses."""

from __future__ import annotations

import json
import os
import secrets
import sqlite3
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import datetime, timezone
from functools import lru_cache
from pathlib import Path, PurePosixPath
from typing import Any

from ..fsutil import UnsafeWriteError, read_state
from ..runtime import LEDGER_DB, memzoi_home, private_dir, private_file, project_runtime_dir
from ..safety.redact import holds_secret
from .model import ChangeRecord, FileChange, Purged, Refusal

_SCHEMA = """
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
#: 2: the ``mcp`` source and ``local_candidate``; 3: ``change_file`` keeps digest and size instead of bytes
#: that held a secret (:class:`Purged`).
_USER_VERSION = 3
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


# --- test seam -----------------------------------------------------------------------------------------------

_fault_hook: Callable[[str], None] | None = None


def set_fault_hook(hook: Callable[[str], None] | None) -> None:
    """Install a function called with the name of every numbered durable step (crash and concurrency tests
    use it to kill the process or log progress); ``None`` removes it."""
    global _fault_hook
    _fault_hook = hook


def _step(name: str) -> None:
    if _fault_hook is not None:
        _fault_hook(name)


@contextmanager
def immediate(conn: sqlite3.Connection) -> Iterator[sqlite3.Connection]:
    """``BEGIN IMMEDIATE`` … ``COMMIT`` on an autocommit connection, rolled back on any exception (the ledger's
    and the resident candidates' write transactions)."""
    conn.execute("BEGIN IMMEDIATE")
    try:
        yield conn
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    conn.execute("COMMIT")


# --- helpers -------------------------------------------------------------------------------------------------


def now_utc(*, precise: bool = True) -> str:
    """Current UTC instant as RFC 3339 with ``Z`` (microseconds when ``precise``)."""
    t = datetime.now(timezone.utc)
    return t.strftime("%Y-%m-%dT%H:%M:%S.%fZ") if precise else t.strftime("%Y-%m-%dT%H:%M:%SZ")


def _new_change_id() -> str:
    # Time-ordered (milliseconds) plus randomness, so ids sort by creation like Memzoi's UUIDv7 ids.
    return f"chg_{int(time.time() * 1000):012x}{secrets.token_hex(6)}"


def safe_path(project_root: Path, rel: str) -> Path:
    """The absolute path of ``rel`` under ``project_root``; refuses traversal and symlinked components.

    Raises :class:`Refusal` (``unsafe_path``).
    """
    pure = PurePosixPath(rel)
    if pure.is_absolute() or not pure.parts or any(p in ("", ".", "..") for p in pure.parts):
        raise Refusal("unsafe_path", f"{rel}: not a relative path inside the project", rel)
    cur = project_root
    for part in pure.parts:
        cur = cur / part
        if cur.is_symlink():
            raise Refusal("unsafe_path", f"{rel}: `{part}` is a symlink; memzoi never writes through symlinks", rel)
    return cur


def read_file_state(project_root: Path, rel: str) -> bytes | None:
    """The current bytes of ``rel`` (``None`` when absent), never following symlinks.

    Raises :class:`Refusal` (``unsafe_path`` / ``unreadable``).
    """
    path = safe_path(project_root, rel)
    try:
        return read_state(path)
    except UnsafeWriteError as err:
        raise Refusal("unsafe_path", f"{rel}: {err}; replace it with a regular file", rel) from err
    except OSError as err:
        raise Refusal("unreadable", f"{rel}: cannot read ({err.strerror or err}); check permissions", rel) from err


def _state_or_error(project_root: Path, rel: str) -> bytes | None | Exception:
    try:
        return read_file_state(project_root, rel)
    except Refusal as err:
        return err


@lru_cache(maxsize=64)
def _runtime_dir(root: str, home: str, has_git: bool) -> Path:
    return project_runtime_dir(root, create=False)


def cached_runtime_dir(project_root: str | os.PathLike[str], *, create: bool = True) -> Path:
    """The project's runtime directory (created when ``create``), cached per root, ``MEMZOI_HOME`` and git
    presence because deriving the repository key runs git."""
    root = Path(project_root).resolve()
    path = _runtime_dir(str(root), str(memzoi_home()), (root / ".git").exists())
    if create:
        private_dir(path)
    return path


def _root(project_root: str | os.PathLike[str]) -> Path:
    return Path(project_root).resolve()


class _Drift(Exception):
    def __init__(self, path: str, written: int, kept: Path | None = None) -> None:
        super().__init__(path)
        self.path = path
        self.written = written
        self.kept = kept


class Ledger:
    """The SQLite ledger file (WAL mode, synchronous FULL) of one repository's runtime directory."""

    def __init__(self, path: Path) -> None:
        self.path = path

    @classmethod
    def for_project(cls, project_root: str | os.PathLike[str], runtime_dir: Path | None = None, *,
                    create: bool = True) -> Ledger:
        """The ledger of ``project_root`` (``<runtime dir>/memzoi-lsp-ledger.db``); the database is created on
        first connection, the directory here unless ``create`` is false (readers never create anything)."""
        return cls((runtime_dir or cached_runtime_dir(project_root, create=create)) / LEDGER_DB)

    @contextmanager
    def connect(self) -> Iterator[sqlite3.Connection]:
        """A connection in autocommit mode (transactions are explicit ``BEGIN IMMEDIATE``)."""
        private_dir(self.path.parent)
        private_file(self.path)
        conn = sqlite3.connect(self.path, isolation_level=None, timeout=30)
        try:
            conn.row_factory = sqlite3.Row
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute("PRAGMA synchronous=FULL")
            conn.execute("PRAGMA foreign_keys=ON")
            # Freed pages are zeroed, so bytes a migration purges do not linger in the file.
            conn.execute("PRAGMA secure_delete=ON")
            version = conn.execute("PRAGMA user_version").fetchone()[0]
            if version == 0:
                conn.executescript(_SCHEMA)
                conn.execute(f"PRAGMA user_version={_USER_VERSION}")
            elif version == 1:
                _migrate_from_1(conn)
                _migrate_v2(conn)
            elif version == 2:
                _migrate_v2(conn)
            elif version != _USER_VERSION:
                raise Refusal(
                    "ledger_schema",
                    f"{self.path}: unsupported ledger schema version {version}; upgrade memzoi-lsp",
                )
            private_file(self.path)  # the -wal and -shm files SQLite just created
            yield conn
        finally:
            conn.close()

    @contextmanager
    def transaction(self, conn: sqlite3.Connection) -> Iterator[sqlite3.Connection]:
        """``BEGIN IMMEDIATE`` … ``COMMIT`` (rolled back on any exception)."""
        with immediate(conn):
            yield conn

    def get(self, conn: sqlite3.Connection, change_id: str) -> ChangeRecord | None:
        """The change with ``change_id`` (a unique prefix is accepted), or ``None``."""
        row = conn.execute("SELECT * FROM change WHERE id = ?", (change_id,)).fetchone()
        if row is None and change_id:
            rows = conn.execute("SELECT * FROM change WHERE id LIKE ? LIMIT 2", (change_id + "%",)).fetchall()
            row = rows[0] if len(rows) == 1 else None
        return None if row is None else self._record(conn, row)

    def _record(self, conn: sqlite3.Connection, row: sqlite3.Row) -> ChangeRecord:
        files = [
            FileChange(f["path"], _state(f["before"], f["before_digest"], f["before_size"]),
                       _state(f["after"], f["after_digest"], f["after_size"]))
            for f in conn.execute("SELECT * FROM change_file WHERE change_id = ? ORDER BY idx", (row["id"],))
        ]
        return ChangeRecord(
            id=row["id"], seq=row["seq"], operation=row["operation"], actor=row["actor"], source=row["source"],
            reason=row["reason"], summary=row["summary"], status=row["status"], phase=row["phase"],
            diagnostic=row["diagnostic"], details=json.loads(row["details_json"] or "{}"),
            created_at=row["created_at"], updated_at=row["updated_at"], applied_at=row["applied_at"],
            undone_at=row["undone_at"], undo_actor=row["undo_actor"], undo_source=row["undo_source"], files=files,
        )

    def history(self, conn: sqlite3.Connection, path: str | None = None, limit: int | None = None) -> list[ChangeRecord]:
        """Changes newest first; only those touching ``path`` (project-relative, ``/``-separated) when given."""
        sql = "SELECT * FROM change"
        args: list[Any] = []
        if path:
            sql += " WHERE id IN (SELECT change_id FROM change_file WHERE path = ?)"
            args.append(path)
        sql += " ORDER BY seq DESC"
        if limit:
            sql += " LIMIT ?"
            args.append(limit)
        return [self._record(conn, r) for r in conn.execute(sql, args).fetchall()]

    def by_status(self, conn: sqlite3.Connection, *statuses: str) -> list[ChangeRecord]:
        """Changes in any of ``statuses``, oldest first."""
        marks = ",".join("?" * len(statuses))
        rows = conn.execute(f"SELECT * FROM change WHERE status IN ({marks}) ORDER BY seq", statuses).fetchall()
        return [self._record(conn, r) for r in rows]

    def set_status(self, conn: sqlite3.Connection, change_id: str, status: str, *, diagnostic: str | None = None,
                   phase: str | None = None) -> None:
        """Move ``change_id`` to ``status`` in one transaction (with its side effects on recovered changes)."""
        with self.transaction(conn):
            self._set_status(conn, change_id, status, diagnostic=diagnostic, phase=phase)

    def _set_status(self, conn: sqlite3.Connection, change_id: str, status: str, *, diagnostic: str | None = None,
                    phase: str | None = None) -> None:
        ts = now_utc()
        sets = ["status = ?", "updated_at = ?"]
        args: list[Any] = [status, ts]
        if diagnostic is not None:
            sets.append("diagnostic = ?")
            args.append(diagnostic)
        if phase is not None:
            sets.append("phase = ?")
            args.append(phase)
        if status == "applied":
            sets.append("applied_at = COALESCE(applied_at, ?)")
            args.append(ts)
        if status == "undone":
            sets.append("undone_at = ?")
            args.append(ts)
        conn.execute(f"UPDATE change SET {', '.join(sets)} WHERE id = ?", (*args, change_id))
        row = conn.execute("SELECT details_json FROM change WHERE id = ?", (change_id,)).fetchone()
        details = json.loads(row["details_json"] or "{}") if row else {}
        target = details.get("recovers")
        if target and status in ("applied", "undone"):
            # A recovery settles (or, when undone, un-settles) the uncertain change it names, atomically with
            # its own status.
            if status == "applied":
                settled = details.get("settles_to", "failed")
                note = f"settled by recovery change {change_id} ({details.get('mode')})"
            else:
                settled, note = "uncertain", f"recovery change {change_id} was undone; choose a recovery again"
            conn.execute(
                "UPDATE change SET status = ?, diagnostic = ?, updated_at = ? WHERE id = ?",
                (settled, note, ts, target),
            )
            if settled == "applied":
                conn.execute("UPDATE change SET applied_at = COALESCE(applied_at, ?) WHERE id = ?", (ts, target))
            if settled == "undone":
                conn.execute("UPDATE change SET undone_at = ? WHERE id = ?", (ts, target))


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


def _migrate_v2(conn: sqlite3.Connection) -> None:
    """Schema 2 → 3: add the digest columns and purge every stored snapshot that holds a secret (earlier schemas
    kept the exact bytes of rejected secret packets); freed pages are zeroed (``secure_delete``) and the WAL is
    truncated, so the bytes are gone from the files. One transaction; a concurrent opener waits, then sees 3."""
    conn.execute("BEGIN IMMEDIATE")
    try:
        if conn.execute("PRAGMA user_version").fetchone()[0] == 2:
            have = {r["name"] for r in conn.execute("PRAGMA table_info(change_file)")}
            for col in _DIGEST_COLUMNS:
                if col.split()[0] not in have:
                    conn.execute(f"ALTER TABLE change_file ADD COLUMN {col}")
            rows = conn.execute("SELECT change_id, idx, before, after FROM change_file").fetchall()
            for r in rows:
                for side in ("before", "after"):
                    if r[side] is not None and holds_secret(r[side]):
                        _, digest, size = stored_state(Purged.of(r[side]))
                        conn.execute(f"UPDATE change_file SET {side} = NULL, {side}_digest = ?, {side}_size = ? "
                                     "WHERE change_id = ? AND idx = ?", (digest, size, r["change_id"], r["idx"]))
            conn.execute(f"PRAGMA user_version={_USER_VERSION}")
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    conn.execute("COMMIT")
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
