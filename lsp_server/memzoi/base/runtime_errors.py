"""Failures of the runtime directory (``${MEMZOI_HOME:-~/.memzoi}``): its SQLite databases and files.

A full disk, a read-only mount, a folder this user may not write, a damaged database: each is a state of the
machine, not a bug, so it is reported as a :class:`RuntimeStateError` with a stable code (the command line's
codes: ``disk_full``, ``read_only_file_system``, ``permission_denied``, ``io_error``, plus ``corrupt_database``
and ``database_busy``) and a message that names the database or folder and says what to do. The command line
prints it as one line (or ``{"error": {"code", "message"}}`` with ``--json``), the language server as a refused
command.

SQLite reports a full disk or a read-only mount in several ways (``SQLITE_FULL``, but also ``SQLITE_IOERR`` when
it cannot grow its shared-memory file, ``SQLITE_CANTOPEN`` or ``SQLITE_READONLY``), so the file system holding
the path is asked (``statvfs``) before an ambiguous error is named.
"""

from __future__ import annotations

import errno
import os
import sqlite3
import stat
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

#: What a runtime file is, for messages: ``kind`` → (name, what to do when it is damaged).
KINDS: dict[str, tuple[str, str]] = {
    "index": (
        "the index database",
        "the index is derived from the .memzoi files: run `memzoi rebuild`, which replaces a damaged index",
    ),
    # Neither is derived data: memzoi never replaces or deletes them, and `memzoi doctor` says how to keep a copy
    # and export what is still readable.
    "ledger": (
        "the ledger database",
        "it holds the change history that undo needs and cannot be rebuilt, so memzoi never replaces or deletes "
        "it: run `memzoi doctor` for what to do (keep a copy first)",
    ),
    "resident": (
        "the resident candidate database",
        "it holds the candidates and their undo snapshots and cannot be rebuilt, so memzoi never replaces or "
        "deletes it: run `memzoi doctor` for what to do (keep a copy first)",
    ),
    "lock": ("the lock file", "remove it (no memzoi process may be running) and run the command again"),
    "directory": ("the runtime directory", "move the damaged files aside and run the command again"),
    "runtime": ("a runtime database", "move the damaged database aside and run the command again"),
}

# SQLite's primary result codes (the low byte of an extended code).
_SQLITE_PERM, _SQLITE_BUSY, _SQLITE_LOCKED, _SQLITE_READONLY = 3, 5, 6, 8
_SQLITE_IOERR, _SQLITE_CORRUPT, _SQLITE_FULL, _SQLITE_CANTOPEN = 10, 11, 13, 14
_SQLITE_AUTH, _SQLITE_NOTADB = 23, 26
#: Messages of errors raised without a result code (fault hooks in tests construct them from the text).
_BY_TEXT = {
    "database or disk is full": _SQLITE_FULL,
    "disk i/o error": _SQLITE_IOERR,
    "attempt to write a readonly database": _SQLITE_READONLY,
    "unable to open database file": _SQLITE_CANTOPEN,
    "file is not a database": _SQLITE_NOTADB,
    "database disk image is malformed": _SQLITE_CORRUPT,
    "database is locked": _SQLITE_BUSY,
    "database table is locked": _SQLITE_LOCKED,
}


class RuntimeStateError(Exception):
    """A runtime database or folder cannot be used; ``code`` and ``message`` (what failed, where, what to do),
    ``path`` the database or folder concerned, ``advice`` what to do (the end of the message)."""

    def __init__(
        self, code: str, message: str, path: str | os.PathLike[str] | None = None, *, advice: str | None = None
    ) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.path = None if path is None else os.fspath(path)
        self.advice = advice

    def to_json(self) -> dict[str, str]:
        """``{"code", "message"}``, the command line's error shape."""
        return {"code": self.code, "message": self.message}


def _existing(path: Path) -> Path:
    """``path`` or its nearest existing ancestor (what ``statvfs`` and ``access`` can be asked about)."""
    p = Path(os.path.abspath(path))
    while not os.path.lexists(p) and p.parent != p:
        p = p.parent
    return p


def file_system_problem(path: str | os.PathLike[str]) -> str | None:
    """``read_only_file_system`` or ``disk_full`` when the file system holding ``path`` (or its nearest existing
    ancestor) is mounted read-only or has no free block or inode left, ``permission_denied`` when this process
    may not write the folder; ``None`` when none of these holds or it cannot be told."""
    p = _existing(Path(path))
    try:
        vfs = os.statvfs(p)
    except (OSError, AttributeError):  # no statvfs (Windows) or an unreadable path: nothing to tell
        return None
    if vfs.f_flag & getattr(os, "ST_RDONLY", 1):
        return "read_only_file_system"
    if vfs.f_bavail == 0 or (vfs.f_files and vfs.f_favail == 0):
        return "disk_full"
    folder = p if p.is_dir() else p.parent
    if not os.access(folder, os.W_OK | os.X_OK) or (p.is_file() and not os.access(p, os.R_OK | os.W_OK)):
        return "permission_denied"
    return None


def sqlite_code(err: sqlite3.Error) -> int | None:
    """The primary SQLite result code of ``err`` (from its extended code, else from its message)."""
    code = getattr(err, "sqlite_errorcode", None)
    if isinstance(code, int):
        return code & 0xFF
    return _BY_TEXT.get(str(err).strip().lower())


def classify(err: BaseException, path: str | os.PathLike[str]) -> str:
    """The error code of ``err`` (an ``OSError`` or ``sqlite3.Error``) met on the runtime file ``path``."""
    if isinstance(err, OSError):
        by_errno = {
            errno.ENOSPC: "disk_full",
            errno.EDQUOT: "disk_full",
            errno.EROFS: "read_only_file_system",
            errno.EACCES: "permission_denied",
            errno.EPERM: "permission_denied",
            errno.EIO: "io_error",
        }
        return by_errno.get(err.errno or 0) or file_system_problem(path) or "runtime_unavailable"
    code = sqlite_code(err) if isinstance(err, sqlite3.Error) else None
    if code == _SQLITE_FULL:
        return "disk_full"
    if code in (_SQLITE_CORRUPT, _SQLITE_NOTADB):
        return "corrupt_database"
    if code in (_SQLITE_BUSY, _SQLITE_LOCKED):
        return "database_busy"
    problem = file_system_problem(path)
    if problem:
        return problem
    if code in (_SQLITE_PERM, _SQLITE_AUTH, _SQLITE_READONLY, _SQLITE_CANTOPEN):
        return "permission_denied"
    if code == _SQLITE_IOERR:
        return "io_error"
    return "runtime_unavailable"


def _owner_note(path: Path) -> str:
    """`` (it belongs to uid N)`` when the nearest existing ``path`` belongs to another user."""
    try:
        st = os.lstat(_existing(path))
    except OSError:
        return ""
    if hasattr(os, "geteuid") and st.st_uid != os.geteuid():
        return f" ({_existing(path)} belongs to uid {st.st_uid}, not to this user)"
    if not stat.S_IMODE(st.st_mode) & 0o200:
        return f" ({_existing(path)} has mode {stat.S_IMODE(st.st_mode):04o})"
    return ""


#: The cause each problem starts with: a path fills a one-line display (Neovim's command line, a toast) before
#: the cause after it is seen, so the cause comes first (newuser5 D9).
CAUSES = {
    "disk_full": "disk full",
    "read_only_file_system": "read-only file system",
    "permission_denied": "permission denied",
    "corrupt_database": "damaged database",
    "database_busy": "locked",
    "io_error": "disk I/O error",
}


def after_code(code: str, message: str) -> str:
    """``message`` without the cause :func:`describe` put first when the code is shown just before it (the CLI's
    ``memzoi: disk_full: ...``, where ``disk full: `` again would only repeat it); any other message unchanged."""
    cause = f"{CAUSES.get(code, 'cannot be used')}: "
    return message[len(cause) :] if message.startswith(cause) else message


def describe(code: str, path: str | os.PathLike[str], kind: str = "runtime", detail: str = "") -> tuple[str, str]:
    """``(problem, advice)`` of a runtime failure ``code`` on ``path`` (a ``kind`` of :data:`KINDS`): the cause
    first (:data:`CAUSES`, ``cannot be used`` for another code), then what failed and where, and what to do, e.g.
    ``disk full: the ledger database /h/l.db cannot be written: the disk holding /h is full``. ``detail`` (SQLite's
    or the OS's own short text, never file contents) is added to the problem in parentheses. The message is
    ``problem; advice``."""
    problem, advice = _described(code, path, kind, detail)
    return f"{CAUSES.get(code, 'cannot be used')}: {problem}", advice


def _described(code: str, path: str | os.PathLike[str], kind: str, detail: str) -> tuple[str, str]:
    p = Path(path)
    name, repair = KINDS.get(kind, KINDS["runtime"])
    folder = p if kind == "directory" else p.parent
    what = f"{name} {p}"
    why = f" ({detail})" if detail else ""
    again = "then run the command again"
    if code == "disk_full":
        return (
            f"{what} cannot be written: the disk holding {folder} is full{why}",
            f"free some space on it (or set MEMZOI_HOME to a folder on another disk), {again}",
        )
    if code == "read_only_file_system":
        return (
            f"{what} cannot be written: {folder} is on a read-only file system{why}",
            f"remount it read-write (or set MEMZOI_HOME to a writable folder), {again}",
        )
    if code == "permission_denied":
        return (
            f"{what} cannot be opened or written: permission denied{why}{_owner_note(p)}",
            f"this user needs read and write access to {folder} and its files (e.g. `chmod -R u+rwX {folder}`, "
            "or fix the owner), or set MEMZOI_HOME to a folder of this user",
        )
    if code == "corrupt_database":
        return f"{what} is damaged{why}", repair
    if code == "database_busy":
        return f"{what} is locked by another process{why}", f"wait for it to finish, {again}"
    if code == "io_error":
        return (f"{what} cannot be read or written: the disk reported an I/O error{why}", f"check the disk, {again}")
    return f"{what} cannot be used{why}", f"check MEMZOI_HOME, its free space and its permissions, {again}"


def runtime_error(err: BaseException, path: str | os.PathLike[str], kind: str = "runtime") -> RuntimeStateError:
    """The :class:`RuntimeStateError` for ``err`` (an ``OSError`` or ``sqlite3.Error``) on the runtime file or
    folder ``path``."""
    if isinstance(err, RuntimeStateError):
        return err
    code = classify(err, path)
    # The OS's text only repeats what the code says ("No space left on device"); SQLite's adds how it failed.
    detail = "" if isinstance(err, OSError) else str(err)
    problem, advice = describe(code, path, kind, detail)
    return RuntimeStateError(code, f"{problem}; {advice}", path, advice=advice)


def damaged(db: str | os.PathLike[str], problem: str, kind: str = "runtime") -> RuntimeStateError:
    """The ``corrupt_database`` error of the database ``db`` (a ``kind`` of :data:`KINDS`) that :func:`damage` found
    damaged; ``problem`` is its verdict (SQLite's own text). The message names the file, quotes the problem and ends
    with the kind's advice, as :func:`runtime_error` does for a damaged page met by a query."""
    text, advice = describe("corrupt_database", db, kind, problem)
    return RuntimeStateError("corrupt_database", f"{text}; {advice}", db, advice=advice)


def damage(db: str | os.PathLike[str], *, timeout: float = 5.0) -> str | None:
    """SQLite's own verdict on the existing database file ``db``: ``None`` when ``PRAGMA quick_check`` passes,
    else what SQLite says is wrong (the check's first line, and how many more it reported; or the error that kept
    it from reading the file, such as "file is not a database" or "database disk image is malformed").

    Nothing is written to the file. Without a ``-wal`` beside it no process has it open (SQLite removes the WAL at
    the last close), so it is read as it is (``immutable``: no lock taken, no ``-wal``/``-shm`` made, so the
    ledger's stamp, an input of ``check``'s replay, stays as it was); a verdict of damage is then confirmed under
    SQLite's locks, since a process may have begun writing meanwhile. With a ``-wal`` it is read under those locks
    (``mode=ro``), holding a read lock only while the check runs, so a writer goes on meanwhile. Raises
    ``sqlite3.Error`` when the file cannot be checked now (locked, cannot be opened: see :func:`classify`);
    ``timeout`` is SQLite's busy wait in seconds."""
    uri = Path(os.path.abspath(db)).as_uri()
    if not os.path.lexists(f"{os.fspath(db)}-wal") and _quick_check(f"{uri}?immutable=1", timeout) is None:
        return None
    return _quick_check(f"{uri}?mode=ro", timeout)


def _quick_check(uri: str, timeout: float) -> str | None:
    """:func:`damage` of the database at the SQLite ``uri``."""
    try:
        conn = sqlite3.connect(uri, uri=True, timeout=timeout)
        try:
            lines = [str(row[0]) for row in conn.execute("PRAGMA quick_check")]
        finally:
            conn.close()
    except sqlite3.DatabaseError as err:
        if sqlite_code(err) in (_SQLITE_CORRUPT, _SQLITE_NOTADB):
            return str(err)
        raise
    if lines == ["ok"]:
        return None
    more = f" (and {len(lines) - 1} more problem(s))" if len(lines) > 1 else ""
    # A line may span several ("*** in database main ***\nPage 8: …"): messages are one line.
    return " ".join(lines[0].split()) + more


@contextmanager
def guard(path: str | os.PathLike[str], kind: str = "runtime") -> Iterator[None]:
    """Turn a ``sqlite3.Error`` raised in the ``with`` block into a :class:`RuntimeStateError` on the database
    ``path`` (an ``OSError`` passes: it names its own file, which need not be a runtime one)."""
    try:
        yield
    except sqlite3.Error as err:
        raise runtime_error(err, path, kind) from err


__all__ = [
    "KINDS",
    "RuntimeStateError",
    "classify",
    "damage",
    "damaged",
    "describe",
    "file_system_problem",
    "guard",
    "runtime_error",
    "sqlite_code",
]
