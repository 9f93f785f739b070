"""The one reader of the small files memzoi reads as configuration (``.memzoi/config.toml``, the user's
``memzoi.toml``) and of a file whose size nothing else bounds: bounded, never blocking, never through a link where
links are refused.

A configuration file is committed with the repository, and git stores symlinks, so a clone can carry
``.memzoi/config.toml -> /dev/zero`` (a read without end) or, made locally, a FIFO (an ``open`` that waits forever
for a writer). :func:`read_small` therefore:

* opens with ``O_NONBLOCK`` (a FIFO opens at once and is then refused) and, unless ``follow`` is set, with
  ``O_NOFOLLOW``: below ``.memzoi`` Memzoi refuses symlinks (its ``canonical_path`` rule), so a link there is not
  read. The user's own ``memzoi.toml`` in Zuno's configuration folder is read with ``follow=True``: no repository
  can place it, and dotfile managers (stow, home-manager) commonly make it a link;
* takes ``fstat`` of the open descriptor (not of the path, which could change in between) and reads only a regular
  file;
* reads at most ``cap + 1`` bytes (default :data:`CONFIG_CAP`) and refuses a longer file.

A refusal is :class:`UnsafeFile` (an ``OSError``, so a caller that handles an unreadable file handles it too) whose
text says what the file is and what to do; an absent file is ``FileNotFoundError`` as before.
"""

from __future__ import annotations

import errno
import os
import stat

#: The largest configuration file read (bytes): far above any real one (a few hundred bytes), far below memory.
CONFIG_CAP = 1024 * 1024

_KINDS = (
    (stat.S_ISDIR, "a folder"),
    (stat.S_ISFIFO, "a FIFO (named pipe)"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISSOCK, "a socket"),
)


class UnsafeFile(OSError):
    """A file :func:`read_small` refuses to read: a symlink (where links are refused), not a regular file, or over
    its cap. ``str()`` is the reason and what to do, without the path (the caller names the file)."""

    def __str__(self) -> str:
        return str(self.strerror)


def read_small(path: str | os.PathLike[str], *, cap: int = CONFIG_CAP, follow: bool = False) -> bytes:
    """The bytes of the regular file ``path``, at most ``cap`` of them (see the module docstring).

    ``follow``: follow a symlink at the last component (the user's own files); otherwise a link is refused.
    Raises ``FileNotFoundError`` when absent, :class:`UnsafeFile` for a link, a file that is not regular or one
    over ``cap`` bytes, and ``OSError`` for any other failure to open or read. Never blocks on a FIFO."""
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_BINARY", 0)
    if not follow:
        flags |= getattr(os, "O_NOFOLLOW", 0)
    try:
        fd = os.open(path, flags)
    except OSError as err:
        if not follow and err.errno in (errno.ELOOP, errno.EMLINK) and os.path.islink(path):
            raise UnsafeFile(
                errno.ELOOP, "is a symlink, which memzoi never follows here; replace it with a regular file"
            ) from None
        raise
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            kind = next((name for test, name in _KINDS if test(mode)), "not a regular file")
            raise UnsafeFile(errno.EINVAL, f"is {kind}, not a regular file; replace it with a regular file")
        chunks: list[bytes] = []
        size = 0
        while size <= cap:
            chunk = os.read(fd, min(cap + 1 - size, 1024 * 1024))
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
    finally:
        os.close(fd)
    if size > cap:
        raise UnsafeFile(errno.EFBIG, f"is larger than {cap} bytes, more than any such file needs; shorten it")
    return b"".join(chunks)


def why_unread(err: BaseException) -> str:
    """A short reason a read failed, for a message that names the file: a refusal's own words (what the file is
    and what to do), else the error's kind (its text may hold a path, which the caller shows its own way)."""
    return str(err) if isinstance(err, UnsafeFile) else type(err).__name__


__all__ = ["CONFIG_CAP", "UnsafeFile", "read_small", "why_unread"]
