"""Private cache files written whole, and no temporary file left for ever by a writer that was killed.

The caches memzoi keeps between runs (the tool stamp's digests, :mod:`memzoi.stores.toolstamp`; the kept
``initialize`` answer, :mod:`memzoi.base.answercache`; the code caches, :mod:`memzoi.base.codecache`,
:mod:`memzoi.base.regexcache`, :mod:`memzoi.safety.prefilter_cache`) are each written by :func:`write_private`: a
new temporary file beside the target (mode 0600, created exclusively, named by :func:`temp_path`), renamed over
the target (``os.replace``, atomic: a reader sees the old file or the new one, never a torn one). Nothing is
fsynced: a cache lost to a crash is only made again.

A writer killed between the two steps (an editor closing its language server with SIGKILL) leaves its temporary
file. The writer holds the OS lock of its temporary file (:func:`memzoi.base.lock.try_lock`) from before its first
byte until after the rename, so the next writer of the same cache family (:func:`sweep_temps`, run by each write)
can tell: a temporary file whose lock it can take and that holds bytes, or that is older than :data:`GRACE_NS`, is
a dead writer's and goes; one whose lock is held is a live writer's and stays. Where the file system cannot lock,
and for the names earlier versions used (``<target>.<pid>.tmp``, never locked), the writer's process id decides: a
file goes when its writer's process is gone (and the file is older than :data:`GRACE_NS`), or when it is older
than :data:`STALE_NS` whatever its process id (a process id used again by another process). Nothing but names of
this pattern for the cache family asked for is ever removed.
"""

from __future__ import annotations

import os
import stat
import sys
import time
from pathlib import Path

#: A temporary file whose lock is free and that holds no byte is left this long (ns) to its writer: the window
#: between its creation and its lock (a writer in another process-id namespace cannot be told by its pid).
GRACE_NS = 10 * 10**9
#: A temporary file not locked by a live writer and last written this long ago (ns) goes whatever its pid says.
STALE_NS = 3600 * 10**9
_SUFFIX = ".tmp"
#: How long a writer asks for its temporary file's lock while a sweep holds it (seconds; a sweep holds it for the
#: few system calls of its judgement).
LOCK_WAIT_S = 1.0


def temp_path(target: Path) -> Path:
    """A fresh temporary name beside ``target``: ``.<name>.<pid>.<8 hex>.tmp`` (the process id tells a dead writer
    where locks do not; the random part keeps two threads of one process apart)."""
    return target.with_name(f".{target.name}.{os.getpid()}.{os.urandom(4).hex()}{_SUFFIX}")


def _parse(name: str, family: str | tuple[str, ...]) -> tuple[int, bool] | None:
    """``(pid, locked)`` of a temporary name of a target whose name starts with ``family`` (or one of them): ``locked`` for
    :func:`temp_path`'s names (their writer locks them), not for the names earlier versions used
    (``[.]<target>.<pid>.tmp``); ``None`` for any other name."""
    if not name.endswith(_SUFFIX):
        return None
    body = name[1:] if name.startswith(".") else name
    if not body.startswith(family):
        return None
    parts = body[: -len(_SUFFIX)].split(".")  # the target's name (``family`` and more), then the pid, the token
    if len(parts) >= 3 and name.startswith(".") and _number(parts[-2]) and _hex8(parts[-1]):
        return int(parts[-2]), True
    if len(parts) >= 2 and _number(parts[-1]):
        return int(parts[-1]), False
    return None


def _number(token: str) -> bool:
    return 0 < len(token) <= 10 and token.isascii() and token.isdigit()


def _hex8(token: str) -> bool:
    return len(token) == 8 and all(c in "0123456789abcdef" for c in token)


def _gone(pid: int) -> bool:
    """True when no process ``pid`` exists (another user's counts as existing; unknowable on Windows: False)."""
    if sys.platform == "win32" or pid <= 0:  # os.kill there ends the process
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    except (OSError, OverflowError):  # another user's, or no pid at all: the age decides
        return False
    return False


def _stale(path: str, pid: int, locked: bool, now_ns: int) -> bool:
    """Whether the temporary file ``path`` (named by ``pid``; ``locked``: its writer locks it) is no live
    writer's, by the rules of the module docstring."""
    from .lock import try_lock  # noqa: PLC0415 lazy: start-up

    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0))
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            return False
        age = now_ns - st.st_mtime_ns
        try:
            free: bool | None = try_lock(fd)
        except OSError:
            free = None  # this file system cannot lock: the pid decides
        if free is False:
            return False  # its writer holds it
        if free and locked:
            return st.st_size > 0 or age > GRACE_NS
        return age > STALE_NS or (age > GRACE_NS and _gone(pid))
    finally:
        os.close(fd)  # the lock goes with it


def sweep_temps(directory: Path, family: str | tuple[str, ...]) -> list[str]:
    """Remove from ``directory`` the temporary files (:func:`temp_path`'s, and earlier versions') of targets whose
    name starts with ``family`` (or one of a tuple of them) that no live writer holds (module docstring). Returns
    the names removed. Never raises: a name that cannot be judged or removed stays."""
    removed: list[str] = []
    try:
        with os.scandir(directory) as it:
            found = [(e.name, e.path, got) for e in it if (got := _parse(e.name, family)) is not None]
    except OSError:
        return removed
    now = time.time_ns()
    for name, path, (pid, locked) in found:
        try:
            if _stale(path, pid, locked, now):
                os.unlink(path)
                removed.append(name)
        except OSError:  # gone meanwhile (renamed by its writer, removed by another sweep), or unreadable
            continue
    return removed


def _lock(fd: int) -> None:
    """Take the lock of the new temporary file ``fd``: a sweep judging it holds it for a moment, so it is asked
    again (for at most :data:`LOCK_WAIT_S`); where the file system cannot lock, the pid in the name speaks for the
    writer."""
    from .lock import try_lock  # noqa: PLC0415 lazy: start-up

    deadline = time.monotonic() + LOCK_WAIT_S
    try:
        while not try_lock(fd) and time.monotonic() < deadline:
            time.sleep(0.001)
    except OSError:
        pass


def write_private(path: Path, data: bytes, *, family: str | None = None) -> bool:
    """Replace or create ``path`` with ``data`` atomically, as a private file (mode 0600), after removing the
    temporary files dead writers of the same ``family`` of caches left there (:func:`sweep_temps`; default: those
    of ``path`` itself). The target is never followed if a symbolic link (it is replaced). Returns whether it was
    written; a failure (a full or read-only disk) leaves the old file, no temporary file, and raises nothing."""
    sweep_temps(path.parent, path.name if family is None else family)
    tmp = temp_path(path)
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o600)
    except OSError:
        return False
    try:
        _lock(fd)  # held until after the rename: a sweep never takes a live writer's file
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view) :]
        if sys.platform == "win32":  # a file open there cannot be renamed: closed first, unlocked
            os.close(fd)
            fd = -1
        os.replace(tmp, path)
        return True
    except OSError:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        return False
    finally:
        if fd >= 0:
            os.close(fd)


__all__ = ["GRACE_NS", "STALE_NS", "sweep_temps", "temp_path", "write_private"]
