"""Private folders a process owns for its life and leaves nothing of, however it ends.

A long-lived process that needs a scratch folder outside the repository (the MCP server's write barrier,
:mod:`memzoi.stores.changefeed`) takes an :class:`OwnedFolder` under :data:`OWNED` in the memzoi home: a folder
(mode 0700) holding a lock file whose OS lock the process keeps until it closes the folder. A process killed
(SIGKILL) cannot remove its folder, but the kernel drops its lock with its descriptors; the next process that takes
a folder there removes every folder whose lock it can take (:func:`sweep`), and never one whose owner is alive.
Folders are made and swept under the folder's lifecycle lock (:func:`memzoi.base.lock.lifecycle_lock`), so a
folder made but not locked yet (or left so by a kill between the two steps) is told apart: under that lock, a
folder without its lock file is nobody's.
"""

from __future__ import annotations

import contextlib
import os
import shutil
from pathlib import Path

from .lock import LockBusy, hold, lifecycle_lock
from .runtime import HOME_FILE_PREFIX, memzoi_home
from .runtime_errors import RuntimeStateError

#: The folder of the owned folders in the memzoi home (named as the home's other state, so ``memzoi doctor``'s
#: mode check covers it: :func:`memzoi.base.runtime.home_state`).
OWNED = HOME_FILE_PREFIX + "owned"
#: The lock file in each owned folder, locked by its owner for the folder's life.
OWNER_LOCK = "owner.lock"


def owned_root() -> Path:
    """:data:`OWNED` in the memzoi home (created by :class:`OwnedFolder`)."""
    return memzoi_home() / OWNED


class OwnedFolder:
    """A new private folder ``path`` (mode 0700, named ``<prefix><random>``) under ``parent`` (default
    :func:`owned_root`), locked for this object's life; folders there whose owner is gone are removed first
    (:func:`sweep`). :meth:`close` removes it. Raises ``OSError`` when the folder or its lock cannot be made."""

    def __init__(self, prefix: str, parent: Path | None = None) -> None:
        import tempfile  # noqa: PLC0415 lazy: start-up (a server's start sweeps, and makes no folder)

        top = owned_root() if parent is None else parent
        try:
            with lifecycle_lock(top, runtime_dir=top):
                sweep(top, locked=True)
                self.path = tempfile.mkdtemp(prefix=prefix, dir=top)
                try:
                    fd = hold(Path(self.path) / OWNER_LOCK)
                except OSError:
                    shutil.rmtree(self.path, ignore_errors=True)
                    raise
        except (LockBusy, RuntimeStateError) as err:  # the folders' lock: as any other failure to make the folder
            raise OSError(str(err)) from err
        if fd is None:  # nobody else can hold a lock in a folder made just now: its file system does not lock
            shutil.rmtree(self.path, ignore_errors=True)
            raise OSError(f"{self.path}: the owner's lock could not be taken")
        self._fd: int | None = fd

    def close(self) -> None:
        """Remove the folder, then give up its lock. Idempotent; never raises."""
        shutil.rmtree(self.path, ignore_errors=True)
        fd, self._fd = self._fd, None
        if fd is not None:
            with contextlib.suppress(OSError):
                os.close(fd)


def sweep(parent: Path | None = None, *, locked: bool = False) -> list[str]:
    """Remove the folders under ``parent`` (default :func:`owned_root`) whose owner is gone: their lock can be
    taken, or they have no lock file. ``locked``: the caller holds ``parent``'s lifecycle lock (else it is taken
    here). Returns the names removed. Never raises (a folder that cannot be judged or removed is left)."""
    top = owned_root() if parent is None else parent
    if not locked:
        try:
            with lifecycle_lock(top, runtime_dir=top):
                return sweep(top, locked=True)
        except (LockBusy, RuntimeStateError, OSError):
            return []
    removed = []
    try:
        entries = [e for e in os.scandir(top) if e.is_dir(follow_symlinks=False)]
    except OSError:
        return []
    for entry in entries:
        try:
            fd = hold(Path(entry.path) / OWNER_LOCK, create=False)
        except FileNotFoundError:
            fd = -1  # made but never locked (its maker killed between the two steps, under this same lock)
        except OSError:
            continue
        if fd is None:
            continue  # its owner is alive
        shutil.rmtree(entry.path, ignore_errors=True)
        if fd >= 0:
            os.close(fd)
        removed.append(entry.name)
    return removed


__all__ = ["OWNED", "OWNER_LOCK", "OwnedFolder", "owned_root", "sweep"]
