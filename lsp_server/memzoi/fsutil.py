"""Durable file writes: temporary file in the same directory, fsync, rename, directory fsync, no symlinks.

Every file the core writes goes through :func:`atomic_write`, so a crash leaves either the old bytes or the new
bytes, never a torn file, and a symlink planted at the destination is refused rather than followed.
"""

from __future__ import annotations

import os
import stat
import tempfile
from collections.abc import Callable
from pathlib import Path

#: Called with a step name at each durable step of a write (tests inject crashes here); ``None`` in production.
WriteHook = Callable[[str], None]


class UnsafeWriteError(OSError):
    """The destination (or its directory) is a symlink or not a regular file; nothing was written."""


def fsync_dir(directory: Path) -> None:
    """fsync a directory so a rename or unlink in it is durable (no-op where directories cannot be opened)."""
    try:
        fd = os.open(directory, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def atomic_write(
    path: str | os.PathLike[str], data: bytes, *, mode: int = 0o644, hook: WriteHook | None = None
) -> None:
    """Replace ``path`` with ``data`` atomically and durably.

    Raises :class:`UnsafeWriteError` when ``path`` or its parent directory is a symlink or ``path`` exists and is
    not a regular file; ``OSError`` for other I/O failures (the temporary file is removed). ``hook`` is called
    with ``"temp"`` (temporary file durable, not yet renamed) and ``"renamed"`` (before the directory fsync).
    """
    target = Path(path)
    parent = target.parent
    if parent.is_symlink():
        raise UnsafeWriteError(f"{parent}: refusing to write through a symlinked directory")
    if target.is_symlink() or (target.exists() and not target.is_file()):
        raise UnsafeWriteError(f"{target}: refusing to replace a symlink or non-regular file")
    parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.chmod(tmp, mode)
        if hook:
            hook("temp")
        os.replace(tmp, target)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
    if hook:
        hook("renamed")
    fsync_dir(parent)


def atomic_delete(path: str | os.PathLike[str], *, hook: WriteHook | None = None) -> None:
    """Remove ``path`` durably (unlink, then directory fsync); absent already is fine.

    Raises :class:`UnsafeWriteError` for a symlink or non-regular file, or a symlinked parent directory.
    ``hook`` is called with ``"unlinked"`` before the directory fsync.
    """
    target = Path(path)
    if target.parent.is_symlink():
        raise UnsafeWriteError(f"{target.parent}: refusing to delete through a symlinked directory")
    try:
        st = os.lstat(target)
    except FileNotFoundError:
        return
    if not stat.S_ISREG(st.st_mode):
        raise UnsafeWriteError(f"{target}: refusing to delete a symlink or non-regular file")
    os.unlink(target)
    if hook:
        hook("unlinked")
    fsync_dir(target.parent)


def read_state(path: str | os.PathLike[str]) -> bytes | None:
    """The exact bytes of ``path``, or ``None`` when it is absent (the "absent" state of a snapshot).

    Never follows a symlink: raises :class:`UnsafeWriteError` when ``path``, or its parent, is a symlink or
    ``path`` is not a regular file; ``OSError`` when it cannot be read.
    """
    target = Path(path)
    if target.parent.is_symlink():
        raise UnsafeWriteError(f"{target.parent}: symlinked directory")
    try:
        fd = os.open(target, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_BINARY", 0))
    except FileNotFoundError:
        return None
    except OSError as err:
        if target.is_symlink():
            raise UnsafeWriteError(f"{target}: refusing to read through a symlink") from err
        raise
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise UnsafeWriteError(f"{target}: not a regular file")
        chunks = []
        while True:
            chunk = os.read(fd, 1 << 20)
            if not chunk:
                break
            chunks.append(chunk)
        return b"".join(chunks)
    finally:
        os.close(fd)
