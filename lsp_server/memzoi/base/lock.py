"""The repository lifecycle lock: one OS file lock per repository, shared by every process (CLI and server).

Memzoi takes ``repo-lifecycle.lock`` with ``try_lock`` retried for about 5 s (reference §7.1); we use our own
file name (``runtime.LOCK_FILE``) in the same runtime directory, so our writers exclude each other and every
ledger change runs alone. ``flock`` locks belong to an open file description, so two threads of one process
exclude each other too, and a killed process releases its lock with its file descriptors.
"""

from __future__ import annotations

import os
import stat
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from .runtime import LOCK_FILE, private_dir, private_file, project_runtime_dir
from .runtime_errors import runtime_error

#: How long to wait for another process's change before refusing (seconds).
DEFAULT_TIMEOUT = 10.0


class LockBusy(Exception):
    """Another process held the lifecycle lock for longer than the timeout."""


def try_lock(fd: int) -> bool:
    """Take the OS lock of the open file ``fd`` without waiting (``flock``, which belongs to the open file
    description; ``msvcrt.locking`` on Windows): True when taken, False when another open file holds it. Raises
    ``OSError`` where the file system cannot lock (``ENOLCK``, ``EOPNOTSUPP``: some network and FUSE mounts)."""
    if sys.platform == "win32":  # pragma: no cover - Windows
        import msvcrt  # noqa: PLC0415 lazy: platform

        try:
            msvcrt.locking(fd, msvcrt.LK_NBLCK, 1)
            return True
        except OSError:
            return False
    import fcntl  # noqa: PLC0415 lazy: platform

    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        return True
    except BlockingIOError:
        return False


def _unlock(fd: int) -> None:
    if sys.platform == "win32":  # pragma: no cover - Windows
        import msvcrt  # noqa: PLC0415 lazy: platform

        os.lseek(fd, 0, os.SEEK_SET)
        msvcrt.locking(fd, msvcrt.LK_UNLCK, 1)
        return
    import fcntl  # noqa: PLC0415 lazy: platform

    fcntl.flock(fd, fcntl.LOCK_UN)


@contextmanager
def lifecycle_lock(
    project_root: str | os.PathLike[str], *, timeout: float = DEFAULT_TIMEOUT, runtime_dir: Path | None = None
) -> Iterator[Path]:
    """Hold the repository lifecycle lock for the ``with`` block; yields the runtime directory.

    Retries every 20 ms up to ``timeout`` seconds, then raises :class:`LockBusy`. A lock file that cannot be
    created or opened (full disk, read-only mount, permissions) raises
    :class:`~memzoi.base.runtime_errors.RuntimeStateError` naming it.
    """
    rdir = runtime_dir or project_runtime_dir(project_root, create=False)
    try:
        private_dir(rdir)
        fd = os.open(private_file(rdir / LOCK_FILE), os.O_RDWR | getattr(os, "O_NOFOLLOW", 0))
    except OSError as err:
        raise runtime_error(err, rdir / LOCK_FILE, "lock") from err
    try:
        deadline = time.monotonic() + timeout
        while not try_lock(fd):
            if time.monotonic() >= deadline:
                raise LockBusy(
                    f"another memzoi process has held the lifecycle lock for {timeout:.0f} s; "
                    "wait for it to finish and retry"
                )
            time.sleep(0.02)
        try:
            yield rdir
        finally:
            _unlock(fd)
    finally:
        os.close(fd)


@contextmanager
def path_lock(lock_path: Path, *, timeout: float = DEFAULT_TIMEOUT) -> Iterator[None]:
    """Hold the OS lock (``flock``; ``msvcrt.locking`` on Windows) of the lock file ``lock_path`` for the ``with``
    block: a file other programs lock too, so it is created if needed (mode ``0o666`` less the umask, as Rust's
    ``OpenOptions`` does), never replaced or unlinked (another writer would then lock a different inode), and
    refused unless it is a regular file (a symlink is not followed).

    Retries every 20 ms up to ``timeout`` seconds (``0``: one try), then raises :class:`LockBusy`; raises
    :class:`OSError` when the file cannot be opened or is not a regular file.
    """
    fd = os.open(lock_path, os.O_RDWR | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0), 0o666)
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise OSError(f"{lock_path}: a writer lock must be a regular file")
        deadline = time.monotonic() + timeout
        while not try_lock(fd):
            if time.monotonic() >= deadline:
                raise LockBusy(f"another writer holds {lock_path}; wait for it to finish and retry")
            time.sleep(0.02)
        try:
            yield
        finally:
            _unlock(fd)
    finally:
        os.close(fd)


def hold(lock_path: Path, *, create: bool = True) -> int | None:
    """Take the OS lock of the private lock file ``lock_path`` without waiting, for as long as the caller keeps the
    returned descriptor open: the lock ends when it is closed or its process ends, however it ends (a SIGKILL
    included), so another process can tell a live owner from a gone one. ``create`` makes the file (mode 0600,
    :func:`~memzoi.base.runtime.private_file`) when it is missing. ``None`` when another open file holds the lock;
    raises ``OSError`` when the file cannot be opened (``FileNotFoundError`` when missing and not ``create``)."""
    if create:
        private_file(lock_path)
    fd = os.open(lock_path, os.O_RDWR | getattr(os, "O_NOFOLLOW", 0))
    try:
        if try_lock(fd):
            return fd
    except BaseException:
        os.close(fd)
        raise
    os.close(fd)
    return None


def held(lock_path: Path) -> bool:
    """Whether another open file holds the OS lock of the lock file ``lock_path`` now (a live writer): the lock is
    taken and let go at once, without waiting (an open, a ``flock`` and a close), and the file is never created
    (missing: False). A file that cannot be opened or locked counts as held, so nothing is decided as if no writer
    could be there. Never raises."""
    try:
        fd = hold(lock_path, create=False)
    except FileNotFoundError:
        return False
    except OSError:
        return True
    if fd is None:
        return True
    os.close(fd)
    return False
