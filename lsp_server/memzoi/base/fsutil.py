"""Durable, guarded file writes: no torn file, no lost concurrent edit, no widened permission, no symlink.

Every file the core writes goes through this module (its building blocks are in :mod:`memzoi.base.fsio`).
:func:`swap_file` is the one write primitive of the git plane: it moves a file from the bytes its caller read
(``expected``) to new bytes (or removes it, or creates it) **only if** the file still holds exactly ``expected`` at
the moment of the switch, with no window between the check and the rename:

* **replace**: the new bytes are written to a temporary file in the same directory (fsync, the target's mode
  and owner), then exchanged with the target atomically (``renameat2(RENAME_EXCHANGE)`` on Linux). The displaced
  file, now under the temporary name, is compared with ``expected``; on a mismatch the two are exchanged back,
  so a hand edit that landed before the switch is back in place and the write is refused. Where the kernel or
  file system cannot exchange, the target is renamed aside, compared, and the new file is linked in with
  ``link()`` (which never replaces a file that appeared meanwhile) or the displaced file is linked back;
* **create**: the temporary file is linked to the target name, which fails if any file appeared meanwhile;
* **delete**: the target is renamed aside, compared, and unlinked, or linked back on a mismatch.

Before the first temporary name is made in a folder, the repository holding it is told to ignore such names
(:func:`memzoi.base.gitexclude.hide_temporaries`): one a killed process leaves never shows in ``git status`` nor
enters a commit made before reconciliation removes it.

An edit that lands *after* the switch lands on the new file (or recreates a deleted one) and stays there. The
one pattern no rename scheme can see is a process that opened the old file before the switch and writes into it
later without truncating; editors truncate (or rename) when they save, so their edits are never lost.

Permissions: a rewrite keeps the file's mode and, where the process may set them, its owner and group; a new
file gets the permission bits its caller gives (the mode of the file it is moved from or restored to), else the
mode the umask gives; a folder it creates is never wider than the folder above it
(:func:`memzoi.base.newfolders.make_folders`); a target without write permission raises :class:`ReadOnlyTarget`
before anything is written. Every step calls ``hook(step)`` first (``"write"``, ``"fsync"``, ``"swap"``,
``"compare"``, ``"unlink"``, ``"dirsync"``, ...), so tests can kill the process there or make the step fail
with ``ENOSPC``/``EIO`` by raising ``OSError`` from the hook.
"""

from __future__ import annotations

import ctypes
import errno
import os
from collections.abc import Callable
from pathlib import Path

# The building blocks, also imported from here.
from .fsio import (
    ExternalChange as ExternalChange,
    ReadOnlyTarget as ReadOnlyTarget,
    UnsafeWriteError as UnsafeWriteError,
    WriteHook as WriteHook,
    _noop as _noop,
    _regular as _regular,
    _unlink_quietly as _unlink_quietly,
    _write_temp as _write_temp,
    atomic_write as atomic_write,
    check_creatable as check_creatable,
    check_writable as check_writable,
    fsync_dir as fsync_dir,
    mount_point as mount_point,
    read_only_mount as read_only_mount,
    read_state as read_state,
    temp_name as temp_name,
    temp_pattern as temp_pattern,
)
from .gitexclude import hide_temporaries
from .newfolders import make_folders

_RENAME_NOREPLACE, _RENAME_EXCHANGE = 1, 2
_AT_FDCWD = -100
#: Errors meaning "this kernel or file system cannot do that": use the portable path.
_UNSUPPORTED = {errno.ENOSYS, errno.EINVAL, errno.ENOTSUP, errno.EOPNOTSUPP, errno.EPERM, errno.EXDEV}


def _libc_renameat2() -> Callable[..., int] | None:
    try:
        fn = ctypes.CDLL(None, use_errno=True).renameat2
    except (OSError, AttributeError):
        return None
    fn.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_uint]
    fn.restype = ctypes.c_int
    return fn


_renameat2 = _libc_renameat2()
#: Tests set this to False to exercise the portable path.
use_exchange = True


def _rename2(src: Path, dst: Path, flags: int) -> bool:
    """``renameat2(src, dst, flags)``; False when the kernel or file system does not support it."""
    if _renameat2 is None or not use_exchange:
        return False
    if _renameat2(_AT_FDCWD, os.fsencode(src), _AT_FDCWD, os.fsencode(dst), flags) == 0:
        return True
    err = ctypes.get_errno()
    if err in _UNSUPPORTED:
        return False
    raise OSError(err, os.strerror(err), str(dst))


def _link(src: Path, dst: Path) -> bool:
    """Hard-link ``src`` to ``dst`` (never replacing). False where the file system has no hard links."""
    try:
        os.link(src, dst, follow_symlinks=False)
        return True
    except FileExistsError:
        raise
    except OSError as err:
        if err.errno in _UNSUPPORTED or err.errno == errno.EMLINK:
            return False
        raise


def _no_replace(src: Path, dst: Path) -> None:
    """Give ``src`` the name ``dst`` unless ``dst`` exists (``FileExistsError``); ``src`` keeps its name when it
    was linked."""
    if _link(src, dst):
        return
    if _rename2(src, dst, _RENAME_NOREPLACE):
        return
    if os.path.lexists(dst):  # no link, no renameat2: the narrowest check this file system allows
        raise FileExistsError(errno.EEXIST, "exists", str(dst))
    os.rename(src, dst)


def _displaced(aside: Path, hook: WriteHook) -> bytes | None | OSError:
    hook("compare")
    try:
        return read_state(aside)
    except OSError as err:
        return err


def swap_file(
    path: str | os.PathLike[str],
    expected: object,
    data: bytes | None,
    *,
    hook: WriteHook | None = None,
    mode: int | None = None,
) -> None:
    """Move ``path`` from ``expected`` to ``data`` atomically and durably, only if it holds ``expected`` at the
    moment of the switch (see the module docstring).

    ``expected`` and ``data`` are the exact bytes, ``None`` meaning absent; ``expected`` is compared with ``==``
    (so it may be any object comparing equal to the right bytes, e.g. a digest). Missing parent folders of a
    new file are created, each never wider than the folder above it (:func:`~memzoi.base.newfolders.make_folders`).
    ``mode``: the permission bits (``& 0o777``) a file this call creates is given, whatever the umask (a move keeps
    its source's mode); ``None`` gives the umask's mode; a rewrite ignores it and keeps the file's own mode. Raises :class:`ExternalChange` when the file held something else (nothing written,
    the other bytes on disk), :class:`ReadOnlyTarget`, :class:`UnsafeWriteError`, or ``OSError`` when a step
    fails (the file then holds ``expected`` or ``data``, never a mix; a temporary file may remain, named by
    :func:`temp_pattern`, holding one of them).
    """
    target = Path(path)
    step = hook or _noop
    st = _regular(target)
    if (st is None) != (expected is None):
        raise ExternalChange(target)
    if st is not None:
        check_writable(target)
    if data is None:
        if st is not None:
            hide_temporaries(target.parent)  # the displaced file is set aside under a temporary name
            _delete(target, expected, step)
        return
    if st is None:
        make_folders(target.parent)
        hide_temporaries(target.parent)
        _create(target, data, step, mode)
    else:
        hide_temporaries(target.parent)
        _replace(target, st, expected, data, step)


def _create(target: Path, data: bytes, hook: WriteHook, mode: int | None) -> None:
    tmp = _write_temp(target, data, None, hook, mode)
    try:
        hook("swap")
        _no_replace(tmp, target)
    except FileExistsError:
        _unlink_quietly(tmp)
        raise ExternalChange(target) from None
    except BaseException:
        _unlink_quietly(tmp)
        raise
    if tmp.exists():  # linked: drop the temporary name
        hook("unlink")
        os.unlink(tmp)
    fsync_dir(target.parent, hook)


def _put_back(aside: Path, target: Path, hook: WriteHook) -> Path | None:
    """Return the displaced file at ``aside`` to ``target``; when a new file appeared at ``target`` meanwhile,
    both are kept and ``aside`` is returned."""
    hook("restore")
    try:
        _no_replace(aside, target)
    except FileExistsError:
        return aside
    if aside.exists():
        os.unlink(aside)
    return None


def _delete(target: Path, expected: object, hook: WriteHook) -> None:
    aside = temp_name(target)
    hook("swap")
    os.rename(target, aside)
    got = _displaced(aside, hook)
    if got == expected:
        hook("unlink")
        os.unlink(aside)
        fsync_dir(target.parent, hook)
        return
    kept = _put_back(aside, target, hook)
    fsync_dir(target.parent, hook)
    if isinstance(got, OSError):
        raise got
    raise ExternalChange(target, kept)


def _replace(target: Path, st: os.stat_result, expected: object, data: bytes, hook: WriteHook) -> None:
    tmp = _write_temp(target, data, st, hook)
    try:
        hook("swap")
        exchanged = _rename2(tmp, target, _RENAME_EXCHANGE)
    except BaseException:
        _unlink_quietly(tmp)
        raise
    if not exchanged:
        _replace_portable(target, tmp, expected, hook)
        return
    # ``tmp`` now names the displaced file.
    got = _displaced(tmp, hook)
    if got == expected:
        hook("unlink")
        os.unlink(tmp)
        fsync_dir(target.parent, hook)
        return
    hook("restore")
    _rename2(tmp, target, _RENAME_EXCHANGE)
    # ``tmp`` names our new file again, unless an edit replaced or rewrote it at the target in between: then
    # that second edit is kept beside the file rather than lost.
    kept = None if read_state(tmp) == data else tmp
    if kept is None:
        os.unlink(tmp)
    fsync_dir(target.parent, hook)
    if isinstance(got, OSError):
        raise got
    raise ExternalChange(target, kept)


def _replace_portable(target: Path, tmp: Path, expected: object, hook: WriteHook) -> None:
    aside = temp_name(target)
    try:
        os.rename(target, aside)
    except BaseException:
        _unlink_quietly(tmp)
        raise
    try:
        got = _displaced(aside, hook)
        if got != expected:
            _unlink_quietly(tmp)
            kept = _put_back(aside, target, hook)
            fsync_dir(target.parent, hook)
            if isinstance(got, OSError):
                raise got
            raise ExternalChange(target, kept)
        try:
            hook("link")
            _no_replace(tmp, target)
        except FileExistsError:  # an edit created the file meanwhile: it stays, the displaced bytes were ours
            os.unlink(aside)
            raise ExternalChange(target) from None
    except BaseException:
        # The target must not stay absent: the displaced file goes back unless something else is there now.
        _unlink_quietly(tmp)
        if aside.exists():
            _put_back(aside, target, _noop)
        raise
    _unlink_quietly(tmp)
    hook("unlink")
    os.unlink(aside)
    fsync_dir(target.parent, hook)
