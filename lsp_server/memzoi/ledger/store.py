"""The ledger database (schema, connection, rows) and the path helpers every ledger module uses."""

from __future__ import annotations

import json
import os
import secrets
import sqlite3
import stat
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from functools import lru_cache
from pathlib import Path, PurePosixPath
from typing import Any

from ..base.fsutil import UnsafeWriteError, read_state
from ..base.runtime import (
    LEDGER_DB,
    cached_keys,
    database_started,
    drop_empty_database,
    memzoi_home,
    private_dir,
    private_file,
)
from ..base.runtime_errors import RuntimeStateError, guard, runtime_error
from .checkout import claimed
from .model import ChangeRecord, FileChange, Refusal

# Re-exported (schema names stay importable here).
from .schema import (
    _SCHEMA as _SCHEMA,
    _USER_VERSION as _USER_VERSION,
    _state as _state,
    migrate as migrate,
)

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
    t = datetime.now(UTC)
    return t.strftime("%Y-%m-%dT%H:%M:%S.%fZ") if precise else t.strftime("%Y-%m-%dT%H:%M:%SZ")


#: What every change id starts with (``chg_`` then 24 hex digits).
CHANGE_ID_PREFIX = "chg_"


def _new_change_id() -> str:
    # Time-ordered (milliseconds) plus randomness, so ids sort by creation like Memzoi's UUIDv7 ids.
    return f"{CHANGE_ID_PREFIX}{int(time.time() * 1000):012x}{secrets.token_hex(6)}"


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


def file_mode(project_root: Path, rel: str) -> int | None:
    """The permission bits (``st_mode & 0o777``) of the regular file ``rel`` now, or ``None`` when it is absent or
    not a regular file (never following a symlink). A change gives this mode to the file it moves ``rel`` to."""
    try:
        st = os.lstat(safe_path(project_root, rel))
    except OSError:
        return None
    return st.st_mode & 0o777 if stat.S_ISREG(st.st_mode) else None


def _state_or_error(project_root: Path, rel: str) -> bytes | None | Exception:
    try:
        return read_file_state(project_root, rel)
    except Refusal as err:
        return err


@lru_cache(maxsize=64)
def _runtime_dir(root: str, home: str, has_git: bool) -> Path:
    # the keys are shared with the other runtime state of the process (the verdict cache), so git runs once
    return Path(home) / "projects" / cached_keys(root).repository_key


def cached_runtime_dir(project_root: str | os.PathLike[str], *, create: bool = True) -> Path:
    """The project's runtime directory (created when ``create``), cached per root, ``MEMZOI_HOME`` and git
    presence because deriving the repository key runs git. Raises
    :class:`~memzoi.base.runtime_errors.RuntimeStateError` when the directory cannot be created."""
    root = Path(project_root).resolve()
    path = _runtime_dir(str(root), str(memzoi_home()), (root / ".git").exists())
    if create:
        try:
            private_dir(path)
        except OSError as err:  # a full or read-only MEMZOI_HOME is the machine's state, not a bug
            raise runtime_error(err, path, "directory") from err
    return path


def may_hold_changes(project_root: Path) -> bool:
    """Whether the project at ``project_root`` (resolved) may have a ledger: False only when it is known to have none
    (:attr:`Ledger.exists`; nothing is created to find out). A runtime folder that cannot be looked at counts as
    True, so the writer's own path (the lock, the database) meets the problem and names it as a refusal."""
    try:
        return Ledger.for_project(project_root, create=False).exists
    except OSError:
        return True


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

    def __init__(self, path: Path, root: Path | None = None, *, claim: bool = False) -> None:
        self.path = path
        #: The project whose ledger this is: its connections are this checkout's (:mod:`memzoi.ledger.checkout`);
        #: ``claim``: a writer's, which sets another checkout's ledger aside (a reader's sees it empty).
        self.root = root
        self.claim = claim

    @classmethod
    def for_project(
        cls, project_root: str | os.PathLike[str], runtime_dir: Path | None = None, *, create: bool = True
    ) -> Ledger:
        """The ledger of ``project_root`` (``<runtime dir>/memzoi-lsp-ledger.db``); the database is created on
        first connection, the directory here unless ``create`` is false (readers never create anything). Its
        connections belong to the project's checkout: a writer's (``create``) sets a ledger another checkout at
        the same path wrote aside, a reader's sees such a ledger empty (:func:`~memzoi.ledger.checkout.claimed`)."""
        path = (runtime_dir or cached_runtime_dir(project_root, create=create)) / LEDGER_DB
        return cls(path, Path(project_root), claim=create)

    @contextmanager
    def connect(self) -> Iterator[sqlite3.Connection]:
        """A connection in autocommit mode (transactions are explicit ``BEGIN IMMEDIATE``).

        A database that cannot be opened or used (full disk, read-only mount, permissions, damaged file) raises
        :class:`~memzoi.base.runtime_errors.RuntimeStateError` naming it, also for SQLite errors of the ``with``
        block; other exceptions of the block pass unchanged. A ledger this call created and could not write because the
        disk is full (at the first change) is removed again, not left as an empty file
        (:func:`~memzoi.base.runtime.drop_empty_database`)."""
        made = not os.path.lexists(self.path)
        try:
            with self._opened() as conn:
                yield conn
        except RuntimeStateError as err:
            # Only a full disk: then no other process can have written the file either, so nothing is lost.
            if made and err.code == "disk_full":
                drop_empty_database(self.path)
            raise

    @property
    def exists(self) -> bool:
        """Whether there is a ledger to read: its file exists and holds something
        (:func:`~memzoi.base.runtime.database_started`: an empty file a failed first write left is no ledger)."""
        return database_started(self.path)

    @contextmanager
    def _opened(self) -> Iterator[sqlite3.Connection]:
        """:meth:`connect`'s connection, set up and guarded."""
        try:
            private_dir(self.path.parent)
            private_file(self.path)
            conn = sqlite3.connect(self.path, isolation_level=None, timeout=30)
        except (OSError, sqlite3.Error) as err:
            raise runtime_error(err, self.path, "ledger") from err
        try:
            with guard(self.path, "ledger"):
                conn.row_factory = sqlite3.Row
                conn.execute("PRAGMA journal_mode=WAL")
                conn.execute("PRAGMA synchronous=FULL")
                conn.execute("PRAGMA foreign_keys=ON")
                # Freed pages are zeroed, so bytes a migration purges do not linger in the file.
                conn.execute("PRAGMA secure_delete=ON")
                migrate(conn, self.path)
            try:
                private_file(self.path)  # the -wal and -shm files SQLite just created
            except OSError as err:
                raise runtime_error(err, self.path, "ledger") from err
            with guard(self.path, "ledger"):
                if self.root is not None:
                    conn = claimed(conn, self.root, self.path, write=self.claim, now=now_utc)
                yield conn
        finally:
            conn.close()

    @contextmanager
    def transaction(self, conn: sqlite3.Connection) -> Iterator[sqlite3.Connection]:
        """``BEGIN IMMEDIATE`` … ``COMMIT`` (rolled back on any exception)."""
        with immediate(conn):
            yield conn

    def get(self, conn: sqlite3.Connection, change_id: str) -> ChangeRecord | None:
        """The change with ``change_id``, or ``None``: the full id or a unique prefix of it, with or without the
        ``chg_`` that starts every id. Raises :class:`Refusal` (``ambiguous_change_id``, with the number of
        matches) for a prefix several changes share: ids are time-ordered, so a short prefix often does."""
        wanted = change_id.strip()
        if wanted and not wanted.startswith(CHANGE_ID_PREFIX):
            wanted = CHANGE_ID_PREFIX + wanted
        row = conn.execute("SELECT * FROM change WHERE id = ?", (wanted,)).fetchone()
        if row is None and len(wanted) > len(CHANGE_ID_PREFIX):
            rows = conn.execute("SELECT * FROM change WHERE substr(id, 1, ?) = ?", (len(wanted), wanted)).fetchall()
            if len(rows) > 1:
                raise Refusal(
                    "ambiguous_change_id",
                    f"`{change_id}` is an ambiguous prefix ({len(rows)} matches): "
                    "give the full change id from `memzoi history`",
                )
            row = rows[0] if rows else None
        return None if row is None else self._record(conn, row)

    def _record(self, conn: sqlite3.Connection, row: sqlite3.Row) -> ChangeRecord:
        files = [
            FileChange(
                f["path"],
                _state(f["before"], f["before_digest"], f["before_size"]),
                _state(f["after"], f["after_digest"], f["after_size"]),
                f["before_mode"],
                f["after_mode"],
            )
            for f in conn.execute("SELECT * FROM change_file WHERE change_id = ? ORDER BY idx", (row["id"],))
        ]
        return ChangeRecord(
            id=row["id"],
            seq=row["seq"],
            operation=row["operation"],
            actor=row["actor"],
            source=row["source"],
            reason=row["reason"],
            summary=row["summary"],
            status=row["status"],
            phase=row["phase"],
            diagnostic=row["diagnostic"],
            details=json.loads(row["details_json"] or "{}"),
            created_at=row["created_at"],
            updated_at=row["updated_at"],
            applied_at=row["applied_at"],
            undone_at=row["undone_at"],
            undo_actor=row["undo_actor"],
            undo_source=row["undo_source"],
            files=files,
        )

    def history(
        self, conn: sqlite3.Connection, path: str | None = None, limit: int | None = None
    ) -> list[ChangeRecord]:
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

    def set_status(
        self,
        conn: sqlite3.Connection,
        change_id: str,
        status: str,
        *,
        diagnostic: str | None = None,
        phase: str | None = None,
    ) -> None:
        """Move ``change_id`` to ``status`` in one transaction (with its side effects on recovered changes)."""
        with self.transaction(conn):
            self._set_status(conn, change_id, status, diagnostic=diagnostic, phase=phase)

    def _set_status(
        self,
        conn: sqlite3.Connection,
        change_id: str,
        status: str,
        *,
        diagnostic: str | None = None,
        phase: str | None = None,
    ) -> None:
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
