"""Folders a write creates inside a project: never more open than the folder they are made in.

``Path.mkdir(parents=True)`` gives every new folder the umask's mode (0755 under umask 022), so the first
``proposals/resolved/applied/`` made under a ``.memzoi`` kept at 0750 or 0700 would show its file names to users
the owner had kept out. :func:`make_folders` is the one rule for every folder memzoi makes in a project (the
ledger's writes, the guarded and atomic writes of :mod:`memzoi.base.fsio`, a resident file's folder, ``memzoi
init``): each new folder takes the permission bits of the nearest existing folder above it, within what the umask
allows (``os.mkdir(path, bits)``: the kernel applies the umask), so it is never wider than that folder and never
wider than the umask's mode. Only permission bits are passed: a new folder never gets a setuid or sticky bit, and
the kernel's own setgid inheritance on a group-shared folder is kept (Linux ``mkdir(2)``: a folder made in a setgid
folder is setgid and owned by its group). A default ACL on the folder above, where there is one, governs as the
kernel decides. The runtime folders under the memzoi home are private whatever this rule gives
(:data:`memzoi.base.runtime.DIR_MODE`).
"""

from __future__ import annotations

import os
import stat
from pathlib import Path


def nearest_existing(path: str | os.PathLike[str]) -> Path:
    """The nearest folder at or above the absolute form of ``path`` that exists (the file system's root at
    worst)."""
    folder = Path(os.path.abspath(path))
    while not os.path.lexists(folder) and folder.parent != folder:
        folder = folder.parent
    return folder


def folder_bits(path: str | os.PathLike[str]) -> int:
    """The permission bits (``& 0o777``) a folder made at the absent ``path`` asks for: those of the nearest
    existing folder above it (:func:`nearest_existing`, followed where it is a symlink, as ``mkdir`` follows it),
    with the owner's own ``rwx`` (this user makes the folder and writes in it; it opens nothing to anyone else).
    ``0o700`` when that folder cannot be looked at, so an unknown mode never opens anything."""
    try:
        return (stat.S_IMODE(os.stat(nearest_existing(path)).st_mode) & 0o777) | 0o700
    except OSError:
        return 0o700


def make_folders(path: str | os.PathLike[str]) -> list[Path]:
    """Create the folder ``path`` and its missing parents (as ``mkdir(parents=True, exist_ok=True)``), each with
    :func:`folder_bits` (the nearest existing folder's permission bits, narrowed by the umask). Returns the
    folders this call created, outermost first (``[]`` when ``path`` already was a folder); a folder another
    process creates meanwhile is left with its own mode and not returned. Raises ``FileExistsError`` when a part
    of ``path`` exists and is not a folder, ``OSError`` when one cannot be made (the folders made before it
    stay)."""
    target = Path(os.path.abspath(path))
    missing: list[Path] = []
    d = target
    while not os.path.lexists(d) and d.parent != d:
        missing.append(d)
        d = d.parent
    if not missing:
        if not target.is_dir():
            raise FileExistsError(f"{target}: exists and is not a folder")
        return []
    bits = folder_bits(target)
    made: list[Path] = []
    for folder in reversed(missing):
        try:
            os.mkdir(folder, bits)
        except FileExistsError:
            if not folder.is_dir():
                raise
            continue
        made.append(folder)
    return made


__all__ = ["folder_bits", "make_folders", "nearest_existing"]
