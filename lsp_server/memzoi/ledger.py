"""The change ledger: at-most-once apply and undo of git-plane file changes (SPEC §6, Zuno discipline).

Every lifecycle write (apply, reject, supersede, tombstone, route-local, materialize, re-attest, recovery) is one
**change**: a row in the SQLite ledger of the runtime directory with actor, source (``editor``/``cli``), reason,
timestamps, a status and a diagnostic text, plus, per file, the exact before and after bytes (``NULL`` = absent).

A change runs under the repository lifecycle lock (:mod:`memzoi.lock`):

1. the operation validates everything and computes every file's before and after bytes (:class:`ChangePlan`);
2. the change is recorded durably as ``applying`` with all snapshots (one ``BEGIN IMMEDIATE`` transaction);
3. every file is checked against its before snapshot (external drift refuses the change, nothing written), then
   written atomically (:func:`memzoi.fsutil.atomic_write` / :func:`~memzoi.fsutil.atomic_delete`);
4. the change is recorded ``applied``.

Undo swaps the snapshots (``undoing`` → ``undone``) and is allowed only while every file equals its after bytes.
Reconciliation (:func:`reconcile`, run before every change and by ``memzoi reconcile``) classifies in-flight
changes left by a dead process by comparing the files with the snapshots (Zuno ``MemoryService::reconcile``):

=============  ==================  ============
in flight      files equal         new status
=============  ==================  ============
``applying``   all after           ``applied``
``applying``   all before          ``failed``
``undoing``    all before          ``undone``
``undoing``    all after           ``applied``
either         anything else       ``uncertain``
=============  ==================  ============

Nothing is ever replayed. An ``uncertain`` change is settled only by an explicit, itself ledgered, recovery
(:func:`recover`: restore before, complete after, or accept the files as they are).
"""

from __future__ import annotations

import json
import os
import secrets
import sqlite3
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime, timezone
from functools import lru_cache
from pathlib import Path, PurePosixPath
from typing import Any

from .findings import Finding, finding
from .fsutil import UnsafeWriteError, atomic_delete, atomic_write, read_state
from .lock import DEFAULT_TIMEOUT, LockBusy, lifecycle_lock
from .runtime import LEDGER_DB, memzoi_home, project_runtime_dir

STATUSES = ("applying", "applied", "undoing", "undone", "failed", "uncertain")
SOURCES = ("editor", "cli")
RECOVERY_MODES = ("restore-before", "complete-after", "accept")
RECONCILED = "reconciled after process restart without replay"

_SCHEMA = """
CREATE TABLE IF NOT EXISTS change (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    id TEXT NOT NULL UNIQUE,
    operation TEXT NOT NULL,
    actor TEXT NOT NULL,
    source TEXT NOT NULL CHECK (source IN ('editor', 'cli')),
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
"""
_USER_VERSION = 1


class Refusal(Exception):
    """An operation refused to run; nothing was written.

    ``code`` is a stable snake_case reason (a SPEC §4 finding code where one fits, e.g.
    ``sensitivity_not_repo_safe``, or a lifecycle code such as ``external_drift``, ``target_missing``);
    ``message`` says what is wrong and what to do; ``path`` names the file when there is one.
    """

    def __init__(self, code: str, message: str, path: str | None = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.path = path

    def to_json(self) -> dict[str, Any]:
        """``{"error": {"code", "message"}}`` (SPEC §8), plus ``path`` when known."""
        err: dict[str, Any] = {"code": self.code, "message": self.message}
        if self.path:
            err["path"] = self.path
        return {"error": err}


@dataclass(frozen=True)
class FileChange:
    """One file of a change: ``path`` is ``/``-separated and relative to the project root; ``before`` and
    ``after`` are the exact bytes, ``None`` meaning the file is absent."""

    path: str
    before: bytes | None
    after: bytes | None

    def to_json(self) -> dict[str, str]:
        """``{"path", "before": "present|absent", "after": "present|absent"}`` (SPEC §8)."""
        return {
            "path": self.path,
            "before": "absent" if self.before is None else "present",
            "after": "absent" if self.after is None else "present",
        }


@dataclass
class ChangePlan:
    """Everything a change will do, computed and validated before anything is recorded.

    ``db_effects(conn, change_id)`` runs inside the transaction that records the change ``applying`` (runtime
    rows, e.g. a private local record, whose visibility follows the change's status). ``details`` is small JSON
    kept with the change (proposal id, record id, …) for history and hovers.
    """

    operation: str
    files: list[FileChange]
    reason: str | None = None
    summary: str = ""
    details: dict[str, Any] = field(default_factory=dict)
    db_effects: Callable[[sqlite3.Connection, str], None] | None = None


@dataclass
class ChangeResult:
    """The outcome of a change or an undo: its id, final status and files."""

    change_id: str
    status: str
    files: list[FileChange]
    operation: str = ""
    details: dict[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        """``{"change_id", "status", "files": [...]}`` (SPEC §8), plus ``operation`` and ``details``."""
        return {
            "change_id": self.change_id,
            "status": self.status,
            "files": [f.to_json() for f in self.files],
            "operation": self.operation,
            "details": self.details,
        }


@dataclass
class ChangeRecord:
    """A ledger row with its files (history, hover, recovery)."""

    id: str
    seq: int
    operation: str
    actor: str
    source: str
    reason: str | None
    summary: str
    status: str
    phase: str
    diagnostic: str | None
    details: dict[str, Any]
    created_at: str
    updated_at: str
    applied_at: str | None
    undone_at: str | None
    undo_actor: str | None
    undo_source: str | None
    files: list[FileChange]

    def to_json(self) -> dict[str, Any]:
        """History entry: the SPEC §8 change fields plus actor, source, reason and timestamps."""
        return {
            "change_id": self.id,
            "status": self.status,
            "files": [f.to_json() for f in self.files],
            "operation": self.operation,
            "actor": self.actor,
            "source": self.source,
            "reason": self.reason,
            "summary": self.summary,
            "diagnostic": self.diagnostic,
            "created_at": self.created_at,
            "updated_at": self.updated_at,
            "applied_at": self.applied_at,
            "undone_at": self.undone_at,
            "undo_actor": self.undo_actor,
            "undo_source": self.undo_source,
            "details": self.details,
        }


@dataclass(frozen=True)
class Reconciled:
    """One in-flight change classified by :func:`reconcile`."""

    change_id: str
    previous: str
    status: str


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
        path.mkdir(parents=True, exist_ok=True, mode=0o700)
    return path


class _Drift(Exception):
    def __init__(self, path: str, written: int) -> None:
        super().__init__(path)
        self.path = path
        self.written = written


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
        self.path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        conn = sqlite3.connect(self.path, isolation_level=None, timeout=30)
        try:
            conn.row_factory = sqlite3.Row
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute("PRAGMA synchronous=FULL")
            conn.execute("PRAGMA foreign_keys=ON")
            version = conn.execute("PRAGMA user_version").fetchone()[0]
            if version == 0:
                conn.executescript(_SCHEMA)
                conn.execute(f"PRAGMA user_version={_USER_VERSION}")
            elif version != _USER_VERSION:
                raise Refusal(
                    "ledger_schema",
                    f"{self.path}: unsupported ledger schema version {version}; upgrade memzoi-lsp",
                )
            yield conn
        finally:
            conn.close()

    @contextmanager
    def transaction(self, conn: sqlite3.Connection) -> Iterator[sqlite3.Connection]:
        """``BEGIN IMMEDIATE`` … ``COMMIT`` (rolled back on any exception)."""
        conn.execute("BEGIN IMMEDIATE")
        try:
            yield conn
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        conn.execute("COMMIT")

    def get(self, conn: sqlite3.Connection, change_id: str) -> ChangeRecord | None:
        """The change with ``change_id`` (a unique prefix is accepted), or ``None``."""
        row = conn.execute("SELECT * FROM change WHERE id = ?", (change_id,)).fetchone()
        if row is None and change_id:
            rows = conn.execute("SELECT * FROM change WHERE id LIKE ? LIMIT 2", (change_id + "%",)).fetchall()
            row = rows[0] if len(rows) == 1 else None
        return None if row is None else self._record(conn, row)

    def _record(self, conn: sqlite3.Connection, row: sqlite3.Row) -> ChangeRecord:
        files = [
            FileChange(f["path"], f["before"], f["after"])
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


# --- the change engine ---------------------------------------------------------------------------------------


def _write_files(root: Path, files: list[FileChange], *, forward: bool, prefix: str) -> None:
    """Guarded atomic writes of every file from its ``from`` state to its ``to`` state.

    All files are checked first, then each one again right before its write; a mismatch raises
    :class:`_Drift` (with how many files were already written).
    """
    pairs = [(f, f.before, f.after) if forward else (f, f.after, f.before) for f in files]
    for f, src, _ in pairs:
        if _state_or_error(root, f.path) != src:
            raise _Drift(f.path, 0)
    _step(f"{prefix}:checked")
    for i, (f, src, dst) in enumerate(pairs):
        if src == dst:
            continue
        if _state_or_error(root, f.path) != src:
            raise _Drift(f.path, i)
        path = safe_path(root, f.path)

        def hook(name: str, i: int = i) -> None:
            _step(f"{prefix}:file{i}:{name}")

        if dst is None:
            atomic_delete(path, hook=hook)
        else:
            atomic_write(path, dst, hook=hook)
        _step(f"{prefix}:file{i}:done")


def _rollback(root: Path, files: list[FileChange], count: int, *, forward: bool) -> bool:
    """Undo the first ``count`` writes of :func:`_write_files` (guarded); True when every file is back."""
    ok = True
    for f in reversed(files[:count]):
        src, dst = (f.before, f.after) if forward else (f.after, f.before)
        if src == dst:
            continue
        cur = _state_or_error(root, f.path)
        if cur == src:
            continue
        if cur != dst:
            ok = False
            continue
        try:
            path = safe_path(root, f.path)
            atomic_delete(path) if src is None else atomic_write(path, src)
        except (OSError, Refusal):
            ok = False
    return ok


def _classify(root: Path, files: list[FileChange], phase: str) -> str:
    states = [_state_or_error(root, f.path) for f in files]
    all_after = all(s == f.after for s, f in zip(states, files))
    all_before = all(s == f.before for s, f in zip(states, files))
    if phase == "apply":
        return "applied" if all_after else "failed" if all_before else "uncertain"
    return "undone" if all_before else "applied" if all_after else "uncertain"


def _cleanup_temps(root: Path, files: list[FileChange]) -> None:
    """Remove temporary files an interrupted :func:`atomic_write` left beside the change's files."""
    for f in files:
        try:
            path = safe_path(root, f.path)
        except Refusal:
            continue
        parent = path.parent
        if not parent.is_dir() or parent.is_symlink():
            continue
        for entry in parent.glob(f".{path.name}.*.tmp"):
            try:
                if entry.is_file() and not entry.is_symlink():
                    entry.unlink()
            except OSError:
                pass


def _reconcile_locked(root: Path, ledger: Ledger, conn: sqlite3.Connection) -> list[Reconciled]:
    out = []
    for change in ledger.by_status(conn, "applying", "undoing"):
        phase = "apply" if change.status == "applying" else "undo"
        _cleanup_temps(root, change.files)
        status = _classify(root, change.files, phase)
        diagnostic = RECONCILED
        if status == "uncertain":
            diagnostic = (
                f"{RECONCILED}: the files match neither the before nor the after snapshot; choose a recovery "
                f"(`memzoi reconcile --recover {change.id} restore-before|complete-after|accept`)"
            )
        ledger.set_status(conn, change.id, status, diagnostic=diagnostic, phase=phase)
        out.append(Reconciled(change.id, change.status, status))
    return out


@contextmanager
def _locked(project_root: Path, timeout: float) -> Iterator[tuple[Ledger, sqlite3.Connection]]:
    try:
        with lifecycle_lock(project_root, timeout=timeout, runtime_dir=cached_runtime_dir(project_root)) as rdir:
            _step("locked")
            ledger = Ledger.for_project(project_root, rdir)
            with ledger.connect() as conn:
                _reconcile_locked(project_root, ledger, conn)
                yield ledger, conn
            _step("unlocking")
    except LockBusy as err:
        raise Refusal("lock_busy", str(err)) from err


def _root(project_root: str | os.PathLike[str]) -> Path:
    return Path(project_root).resolve()


def run_change(
    project_root: str | os.PathLike[str],
    build: Callable[[Path], ChangePlan],
    *,
    actor: str,
    source: str = "cli",
    lock_timeout: float = DEFAULT_TIMEOUT,
) -> ChangeResult:
    """Run one ledgered change. ``build(project_root)`` is called under the lock, after reconciliation: it reads
    the files (their bytes become the before snapshots), validates, and returns the :class:`ChangePlan`, or
    raises :class:`Refusal`.

    Returns the result (status ``applied``); raises :class:`Refusal` when the build refuses, on external drift
    (``external_drift``: the change is recorded ``failed``, no file changed) or when the write fails
    (``write_failed``: recorded ``failed`` or ``uncertain`` after comparing the files).
    """
    if source not in SOURCES:
        raise ValueError(f"source must be one of {SOURCES}")
    root = _root(project_root)
    with _locked(root, lock_timeout) as (ledger, conn):
        plan = build(root)
        _step("planned")
        paths = [f.path for f in plan.files]
        if len(set(paths)) != len(paths):
            raise ValueError("a change lists the same file twice")
        change_id = _new_change_id()
        ts = now_utc()
        with ledger.transaction(conn):
            conn.execute(
                "INSERT INTO change (id, operation, actor, source, reason, summary, status, phase, details_json,"
                " created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, 'applying', 'apply', ?, ?, ?)",
                (change_id, plan.operation, actor, source, plan.reason, plan.summary,
                 json.dumps(plan.details, sort_keys=True), ts, ts),
            )
            conn.executemany(
                "INSERT INTO change_file (change_id, idx, path, before, after) VALUES (?, ?, ?, ?, ?)",
                [(change_id, i, f.path, f.before, f.after) for i, f in enumerate(plan.files)],
            )
            if plan.db_effects:
                plan.db_effects(conn, change_id)
        _step("recorded")
        _perform(root, ledger, conn, change_id, plan.files, phase="apply")
        _step("committed")
        return ChangeResult(change_id, "applied", plan.files, plan.operation, plan.details)


def _perform(root: Path, ledger: Ledger, conn: sqlite3.Connection, change_id: str, files: list[FileChange],
             *, phase: str) -> None:
    forward = phase == "apply"
    done, undone_back = ("applied", "failed") if forward else ("undone", "applied")
    try:
        _write_files(root, files, forward=forward, prefix=phase)
    except _Drift as drift:
        clean = _rollback(root, files, drift.written, forward=forward)
        what = "applying" if forward else "undoing"
        message = (
            f"{drift.path}: the file changed after memzoi read it, so {what} change {change_id} was refused and "
            "nothing was written; review the file and retry"
        )
        status = undone_back if clean else "uncertain"
        ledger.set_status(conn, change_id, status, diagnostic=message, phase=phase)
        raise Refusal("external_drift", message, drift.path) from None
    except (OSError, Refusal) as err:
        _cleanup_temps(root, files)
        status = _classify(root, files, phase)
        reason = err.message if isinstance(err, Refusal) else (err.strerror or str(err))
        message = f"writing change {change_id} failed: {reason}"
        ledger.set_status(conn, change_id, status, diagnostic=message, phase=phase)
        if status == done:
            return
        raise Refusal("write_failed", message + f"; the change is now {status}") from err
    _step(f"{phase}:written")
    ledger.set_status(conn, change_id, done, phase=phase)


def undo_change(
    project_root: str | os.PathLike[str],
    change_id: str,
    *,
    actor: str,
    source: str = "cli",
    lock_timeout: float = DEFAULT_TIMEOUT,
) -> ChangeResult:
    """Undo an ``applied`` change: restore every file's before bytes, at most once (``undoing`` → ``undone``).

    Refuses (``change_not_found``, ``not_undoable``, ``undo_drift``) unless the change is applied and every file
    still equals its after snapshot.
    """
    root = _root(project_root)
    with _locked(root, lock_timeout) as (ledger, conn):
        change = ledger.get(conn, change_id)
        if change is None:
            raise Refusal("change_not_found", f"no change {change_id} in the ledger; see `memzoi history`")
        if change.status != "applied":
            raise Refusal(
                "not_undoable",
                f"change {change.id} is {change.status}; only an applied change can be undone"
                + (f"; recover it first with `memzoi reconcile --recover {change.id} "
                   "restore-before|complete-after|accept`" if change.status == "uncertain" else ""),
            )
        for f in change.files:
            if read_file_state(root, f.path) != f.after:
                raise Refusal(
                    "undo_drift",
                    f"{f.path}: edited after change {change.id} was applied, so undo is unavailable; restore the "
                    "file or make the change by hand",
                    f.path,
                )
        _step("planned")
        ts = now_utc()
        with ledger.transaction(conn):
            conn.execute(
                "UPDATE change SET status = 'undoing', phase = 'undo', updated_at = ?, undo_actor = ?, "
                "undo_source = ? WHERE id = ? AND status = 'applied'",
                (ts, actor, source, change.id),
            )
        _step("recorded")
        _perform(root, ledger, conn, change.id, change.files, phase="undo")
        _step("committed")
        return ChangeResult(change.id, "undone", change.files, change.operation, change.details)


def reconcile(project_root: str | os.PathLike[str], *, lock_timeout: float = DEFAULT_TIMEOUT) -> list[Reconciled]:
    """Classify every in-flight change left by a dead process (table in the module docstring); never writes a
    git-plane file (only removes temporary files of interrupted atomic writes)."""
    root = _root(project_root)
    try:
        with lifecycle_lock(root, timeout=lock_timeout, runtime_dir=cached_runtime_dir(root)) as rdir:
            ledger = Ledger.for_project(root, rdir)
            with ledger.connect() as conn:
                return _reconcile_locked(root, ledger, conn)
    except LockBusy as err:
        raise Refusal("lock_busy", str(err)) from err


def recover(
    project_root: str | os.PathLike[str],
    change_id: str,
    mode: str,
    *,
    actor: str,
    source: str = "cli",
    reason: str | None = None,
) -> ChangeResult:
    """Settle an ``uncertain`` change explicitly, as a new ledgered change (operation ``recover``).

    ``mode``: ``restore-before`` writes every file's before bytes (the change becomes ``failed``, or ``undone``
    when an undo was in flight), ``complete-after`` writes the after bytes (``applied``), ``accept`` keeps the files
    as they are (``failed``; only the decision is recorded). Raises :class:`Refusal` for another status.
    """
    if mode not in RECOVERY_MODES:
        raise Refusal("invalid_recovery", f"recovery mode must be one of {', '.join(RECOVERY_MODES)}")

    def build(root: Path) -> ChangePlan:
        ledger = Ledger.for_project(root)
        with ledger.connect() as conn:
            change = ledger.get(conn, change_id)
        if change is None:
            raise Refusal("change_not_found", f"no change {change_id} in the ledger; see `memzoi history`")
        if change.status != "uncertain":
            raise Refusal("not_uncertain", f"change {change.id} is {change.status}; only uncertain changes need recovery")
        files = []
        for f in change.files:
            cur = read_file_state(root, f.path)
            target = {"restore-before": f.before, "complete-after": f.after, "accept": cur}[mode]
            files.append(FileChange(f.path, cur, target))
        if mode == "complete-after":
            settles = "applied"
        elif mode == "restore-before":
            settles = "undone" if change.phase == "undo" else "failed"
        else:
            settles = "failed"
        return ChangePlan(
            "recover",
            files,
            reason=reason or f"{mode} for uncertain change {change.id}",
            summary=f"recover {change.id}: {mode}",
            details={"recovers": change.id, "mode": mode, "settles_to": settles},
        )

    return run_change(project_root, build, actor=actor, source=source)


def history(project_root: str | os.PathLike[str], path: str | None = None, *, limit: int | None = None) -> list[ChangeRecord]:
    """Changes newest first, optionally only those touching ``path`` (project-relative); never takes the lock."""
    ledger = Ledger.for_project(_root(project_root), create=False)
    if not ledger.path.exists():
        return []
    with ledger.connect() as conn:
        return ledger.history(conn, path, limit)


def get_change(project_root: str | os.PathLike[str], change_id: str) -> ChangeRecord | None:
    """One change by id (or unique prefix), or ``None``."""
    ledger = Ledger.for_project(_root(project_root), create=False)
    if not ledger.path.exists():
        return None
    with ledger.connect() as conn:
        return ledger.get(conn, change_id)


def file_ledger_state(project_root: str | os.PathLike[str], rel_path: str, current: bytes | None) -> dict[str, Any]:
    """What the ledger knows about one file, for the ``ledger_uncertain``/``ledger_drift`` diagnostics and hover.

    Returns ``{"uncertain": [change ids], "last": ChangeRecord | None, "undo_available": bool, "drift": bool}``:
    ``drift`` is True when the last applied change's after bytes differ from ``current``.
    """
    root = _root(project_root)
    out: dict[str, Any] = {"uncertain": [], "last": None, "undo_available": False, "drift": False}
    for change in history(root, rel_path):
        if change.status == "uncertain":
            out["uncertain"].append(change.id)
        if out["last"] is None and change.status == "applied":
            out["last"] = change
            after = next(f.after for f in change.files if f.path == rel_path)
            out["drift"] = after != current
            # Undo needs every file of the change at its after bytes, not only this one.
            out["undo_available"] = not out["drift"] and all(
                _state_or_error(root, f.path) == f.after for f in change.files if f.path != rel_path
            )
    return out


def ledger_findings(uncertain: list[ChangeRecord], last: ChangeRecord | None, rel_path: str,
                    current: bytes | None, text: str) -> list[Finding]:
    """``ledger_uncertain`` for each uncertain change touching a file, and ``ledger_drift`` when the file's bytes
    (``current``, ``None`` = absent) differ from what its ``last`` applied change wrote (SPEC §4, §6).

    ``rel_path`` is the file's project-relative ``/`` path; findings are anchored on the first line of ``text``
    (the analysed text) and carry ``change_id`` in their data.
    """
    end = len(text.split("\n", 1)[0].rstrip("\r"))
    out: list[Finding] = []
    for change in uncertain:
        out.append(finding(
            "ledger_uncertain",
            f"change {change.id[:12]} ({change.operation}) touching this file could not be classified after a "
            "crash: recover it explicitly (restore before, complete after, or accept as is)",
            0, end, change_id=change.id,
        ))
    if last is not None:
        after = next((f.after for f in last.files if f.path == rel_path), None)
        if after != current:
            out.append(finding(
                "ledger_drift",
                f"this file was edited after change {last.id[:12]} ({last.operation}) wrote it, so that change "
                "can no longer be undone; re-attest the record if the edit is intended",
                0, end, change_id=last.id,
            ))
    return out
