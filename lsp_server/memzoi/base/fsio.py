"""The building blocks of memzoi's durable writes: the refusals (:class:`UnsafeWriteError`,
:class:`ReadOnlyTarget`, :class:`ExternalChange`), temporary names beside a target, directory fsync, the checks of a
target (regular file, not through a symlink, writable), durable temporary files keeping a file's mode and owner,
and reading a file's exact state (:func:`read_state`) and writing a file memzoi owns outright
(:func:`atomic_write`).

The guarded write of the git plane, :func:`memzoi.base.fsutil.swap_file`, is built on them; :mod:`memzoi.base.fsutil`
re-exports every public name here.
"""

from __future__ import annotations

import errno
import os
import secrets
import stat
from collections.abc import Callable
from pathlib import Path

from .newfolders import make_folders

#: Called with a step name before each durable step of a write (tests inject crashes and I/O errors here).
WriteHook = Callable[[str], None]


class UnsafeWriteError(OSError):
    """The destination (or its directory) is a symlink or not a regular file; nothing was written."""


class ReadOnlyTarget(PermissionError):
    """The destination cannot be written; nothing was written. ``reason`` says why, so the advice can fit:
    ``mode`` (the file has no write bit, e.g. 0444: chmod u+w), ``file_system`` (it is on a read-only file
    system, ``errno`` EROFS: no mode change helps), ``owner`` (its mode allows writing, but not by this user),
    ``directory`` (its folder may not be written by this user, so the file cannot be replaced there) or
    ``special_mode`` (a rewrite could not keep its setuid, setgid or sticky bit: see :func:`special_bits_kept`)."""

    def __init__(self, err: int, strerror: str, filename: str, reason: str = "mode") -> None:
        super().__init__(err, strerror, filename)
        self.reason = reason

    @property
    def advice(self) -> str:
        """What to do about it, for the ``reason``."""
        return {
            "file_system": "remount it read-write (a mode change cannot help)",
            "owner": "run as its owner, or give this user write access (chown or chmod)",
            "directory": "make the folder writable for this user (chmod u+w, or chown)",
            "special_mode": "run as its owner (or as root, or a member of its group for setgid), or clear the bit "
            "if it is not needed (chmod u-s,g-s,-t)",
        }.get(self.reason, "make it writable (chmod u+w)")

    @property
    def code(self) -> str:
        """The refusal code: ``read_only`` (no write bit), ``read_only_file_system`` or ``permission_denied``."""
        return {
            "file_system": "read_only_file_system",
            "owner": "permission_denied",
            "directory": "permission_denied",
            "special_mode": "mode_not_kept",
        }.get(self.reason, "read_only")


class ExternalChange(OSError):
    """The file did not hold the expected bytes at the moment of the switch; nothing was written and the file's
    current bytes are on disk. ``kept`` names a file holding a second concurrent edit that could not be put back
    at the target because a third version appeared there meanwhile (``None`` normally)."""

    def __init__(self, path: Path, kept: Path | None = None) -> None:
        super().__init__(errno.EAGAIN, "changed by another process", str(path))
        self.kept = kept


def temp_name(target: Path) -> Path:
    """A fresh temporary name beside ``target``: ``.<name>.<random>.tmp`` (the pattern reconciliation cleans)."""
    return target.with_name(f".{target.name}.{secrets.token_hex(6)}.tmp")


def temp_pattern(target: Path) -> str:
    """The glob pattern of :func:`temp_name` for ``target``."""
    return f".{target.name}.*.tmp"


def _noop(step: str) -> None:
    pass


def fsync_dir(directory: Path, hook: WriteHook = _noop) -> None:
    """fsync a directory so a rename or unlink in it is durable; a directory that cannot be opened or fsynced by
    design (``EINVAL``, Windows) is skipped, a real I/O error raises ``OSError``."""
    hook("dirsync")
    try:
        fd = os.open(directory, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError as err:
        if err.errno not in (errno.EINVAL, errno.ENOTSUP, errno.EBADF):
            raise
    finally:
        os.close(fd)


def _regular(target: Path) -> os.stat_result | None:
    """``lstat`` of ``target`` (``None`` when absent); raises :class:`UnsafeWriteError` for a symlink, a symlinked
    parent or a non-regular file."""
    if target.parent.is_symlink():
        raise UnsafeWriteError(f"{target.parent}: refusing to write through a symlinked directory")
    try:
        st = os.lstat(target)
    except FileNotFoundError:
        return None
    if not stat.S_ISREG(st.st_mode):
        raise UnsafeWriteError(f"{target}: refusing to replace a symlink or non-regular file")
    return st


def check_writable(path: str | os.PathLike[str]) -> None:
    """Raise :class:`ReadOnlyTarget` when ``path`` cannot be replaced or removed, with the ``reason`` that fits:
    its file system is mounted read-only (asked first: then no mode change helps), the file has no write bit at
    all (checked by mode, so it holds for root too), it is not writable by this user (owner or group), or its
    folder is not (a rewrite renames in it). An absent file passes when a file can be created in the nearest
    existing folder (:func:`check_creatable`)."""
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        check_creatable(path)
        return
    if not stat.S_ISREG(st.st_mode):
        return
    name, mode = os.fspath(path), stat.S_IMODE(st.st_mode)
    if read_only_mount(name):
        raise ReadOnlyTarget(
            errno.EROFS, f"on a read-only file system (mounted at {mount_point(name)})", name, "file_system"
        )
    if not mode & 0o222:
        raise ReadOnlyTarget(errno.EACCES, f"read-only (mode {mode:04o})", name, "mode")
    if not os.access(name, os.W_OK):
        raise ReadOnlyTarget(errno.EACCES, f"not writable by this user (mode {mode:04o}, {_owner(st)})", name, "owner")
    if (
        mode & _SPECIAL
        and hasattr(os, "geteuid")
        and not special_bits_kept(st, os.geteuid(), {os.getegid(), *os.getgroups()})
    ):
        raise ReadOnlyTarget(
            errno.EPERM,
            f"a rewrite cannot keep its mode {mode:04o} (setuid, setgid or sticky bit; {_owner(st)})",
            name,
            "special_mode",
        )
    _check_folder(Path(name).parent, name)


#: The setuid, setgid and sticky bits: a rewrite keeps them, or refuses.
_SPECIAL = stat.S_ISUID | stat.S_ISGID | stat.S_ISVTX


def special_bits_kept(st: os.stat_result, euid: int, groups: set[int]) -> bool:
    """Whether a rewrite by the user ``euid`` (in ``groups``) can give the new file ``st``'s setuid, setgid and
    sticky bits with the same owner and group. Its temporary copy is this user's until it is given ``st``'s owner,
    which only root may do: a setuid bit kept on a copy owned by another user would run as that user, so it needs
    root or the file's owner; a setgid bit is set only by root or a member of the file's group (Linux clears it
    otherwise, ``chmod(2)``), and likewise needs the group kept. The sticky bit needs nothing more."""
    mode = stat.S_IMODE(st.st_mode)
    if euid == 0:
        return True
    if mode & stat.S_ISUID and st.st_uid != euid:
        return False
    return not (mode & stat.S_ISGID and st.st_gid not in groups)


def check_creatable(path: str | os.PathLike[str]) -> None:
    """Raise :class:`ReadOnlyTarget` (``file_system`` or ``directory``) when no file can be created at the absent
    ``path``: the nearest existing folder above it is on a read-only file system or not writable by this user."""
    name = os.fspath(path)
    folder = Path(os.path.abspath(name)).parent
    while not folder.exists() and folder.parent != folder:
        folder = folder.parent
    if read_only_mount(folder):
        raise ReadOnlyTarget(
            errno.EROFS, f"on a read-only file system (mounted at {mount_point(folder)})", name, "file_system"
        )
    _check_folder(folder, name)


def _check_folder(folder: Path, name: str) -> None:
    if folder.is_dir() and not os.access(folder, os.W_OK | os.X_OK):
        try:
            st = os.stat(folder)
        except OSError:
            return
        raise ReadOnlyTarget(
            errno.EACCES,
            f"in a folder this user may not write ({folder}: mode {stat.S_IMODE(st.st_mode):04o}, {_owner(st)})",
            name,
            "directory",
        )


def _owner(st: os.stat_result) -> str:
    mine = hasattr(os, "geteuid") and st.st_uid == os.geteuid()
    return "owned by this user" if mine else f"owned by uid {st.st_uid}"


def read_only_mount(path: str | os.PathLike[str]) -> bool:
    """True when the file system holding ``path`` is mounted read-only (``statvfs``; False where it cannot
    tell)."""
    try:
        return bool(os.statvfs(path).f_flag & getattr(os, "ST_RDONLY", 1))
    except (OSError, AttributeError):
        return False


def mount_point(path: str | os.PathLike[str]) -> Path:
    """The mount point of the file system holding ``path``: its highest ancestor on the same device."""
    p = Path(os.path.abspath(path))
    try:
        dev = os.stat(p).st_dev
        while p.parent != p and os.stat(p.parent).st_dev == dev:
            p = p.parent
    except OSError:
        pass
    return p


def _write_temp(
    target: Path, data: bytes, like: os.stat_result | None, hook: WriteHook, mode: int | None = None
) -> Path:
    """A durable temporary file beside ``target`` holding ``data``, with ``like``'s mode and owner (or, with no
    ``like``, the permission bits ``mode & 0o777``, or else the mode the umask gives a new file). Removed again
    when any step fails."""
    tmp = temp_name(target)
    # A rewrite, or a new file given a mode, starts private and gets its mode once written, so a 0600 file is
    # never readable by others through its temporary copy; a new file simply gets the umask's mode.
    fd = os.open(
        tmp,
        os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_BINARY", 0),
        0o600 if like or mode is not None else 0o666,
    )
    try:
        try:
            hook("write")
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view) :]
            if like is not None:
                hook("chmod")
                if hasattr(os, "fchown"):
                    try:
                        os.fchown(fd, like.st_uid, like.st_gid)
                    except PermissionError:  # only root may give a file away; keep what we may
                        try:
                            os.fchown(fd, -1, like.st_gid)
                        except PermissionError:
                            pass
                # after the owner: a chown clears the setuid and setgid bits (chown(2))
                _keep_mode(fd, stat.S_IMODE(like.st_mode), target, like)
            elif mode is not None:
                hook("chmod")
                os.fchmod(fd, mode & 0o777)  # only permission bits: a moved file never gains a special bit
            hook("fsync")
            os.fsync(fd)
        finally:
            os.close(fd)
    except BaseException:
        _unlink_quietly(tmp)
        raise
    return tmp


def _keep_mode(fd: int, mode: int, target: Path, like: os.stat_result | None = None) -> None:
    """Give the open temporary file ``fd`` the whole ``mode`` (setuid, setgid and sticky bits included) and check
    it took: raise :class:`ReadOnlyTarget` (``special_mode``) when the system dropped a bit, or when a setuid or
    setgid bit would now belong to another owner or group than ``like``'s (nothing is written then)."""
    os.fchmod(fd, mode)
    got = os.fstat(fd)
    moved = like is not None and (
        (mode & stat.S_ISUID and got.st_uid != like.st_uid) or (mode & stat.S_ISGID and got.st_gid != like.st_gid)
    )
    if stat.S_IMODE(got.st_mode) != mode or moved:
        raise ReadOnlyTarget(
            errno.EPERM,
            f"a rewrite cannot keep its mode {mode:04o} (setuid, setgid or sticky bit)",
            os.fspath(target),
            "special_mode",
        )


def _unlink_quietly(path: Path) -> None:
    try:
        os.unlink(path)
    except OSError:
        pass


def atomic_write(
    path: str | os.PathLike[str], data: bytes, *, mode: int | None = None, hook: WriteHook | None = None
) -> None:
    """Replace or create ``path`` with ``data`` atomically and durably, whatever it holds now (for files memzoi
    owns outright, such as a new ``config.toml`` or a resident file under its own lock; git-plane rewrites use
    :func:`swap_file`). An existing file keeps its mode and owner and a new one gets the umask's mode, unless
    ``mode`` is given; a missing folder is made as :func:`~memzoi.base.newfolders.make_folders` makes it (never
    wider than the folder above it). ``hook`` is called with ``"temp"`` (temporary file durable, not yet renamed) and
    ``"renamed"`` (before the directory fsync). Raises :class:`UnsafeWriteError`, :class:`ReadOnlyTarget` or
    ``OSError`` (the temporary file is removed)."""
    target = Path(path)
    step = hook or _noop
    st = _regular(target)
    if st is not None:
        check_writable(target)
    make_folders(target.parent)
    tmp = _write_temp(target, data, st, _noop)
    try:
        if mode is not None:
            fd = os.open(tmp, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
            try:
                _keep_mode(fd, mode, target)
            finally:
                os.close(fd)
        step("temp")
        os.replace(tmp, target)
    except BaseException:
        _unlink_quietly(tmp)
        raise
    step("renamed")
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


__all__ = [
    "ExternalChange",
    "ReadOnlyTarget",
    "UnsafeWriteError",
    "WriteHook",
    "atomic_write",
    "check_creatable",
    "check_writable",
    "fsync_dir",
    "mount_point",
    "read_only_mount",
    "read_state",
    "special_bits_kept",
    "temp_name",
    "temp_pattern",
]
