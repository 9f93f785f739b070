"""Durable file writes: temporary file in the same directory, fsync, rename, directory fsync, no symlinks.

Every file the core writes goes through :func:`atomic_write`, so a crash leaves either the old bytes or the new
bytes, never a torn file, and a symlink planted at the destination is refused rather than followed.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path


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


def atomic_write(path: str | os.PathLike[str], data: bytes, *, mode: int = 0o644) -> None:
    """Replace ``path`` with ``data`` atomically and durably.

    Raises :class:`UnsafeWriteError` when ``path`` or its parent directory is a symlink or ``path`` exists and is
    not a regular file; ``OSError`` for other I/O failures (the temporary file is removed).
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
        os.replace(tmp, target)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
    fsync_dir(parent)
