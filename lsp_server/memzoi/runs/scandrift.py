"""What changed on disk between the language server's first scan and its watches: the project's files whose state
differs from the one the scan judged them by.

The server sets its ``.memzoi`` watches up once the scan's files are taken in, not before: a watch in place while
the workers read every file is woken by each open (inotify's ``IN_OPEN``, which watchfiles does not let a caller
leave out; about 0.24 s of CPU at 11,000 files, issue 29: cold server scan). A file changed after a worker read it
and before the watches exist is then in no event, so once they exist (:func:`memzoi.base.dirwatch.changed_paths`'
``ready``) the project is listed once and each file's ``lstat`` is compared with the stamp its compact verdict was
made from (:meth:`memzoi.stores.firststage.FirstStage.current`'s rule): every path that differs goes through the
watch pass as an event would. A change after the watches exist is the watcher's.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import TYPE_CHECKING

from ..base.freshness import KEEPS_CTIME, ctime_kept, fs_type, lstat, mount_table, mounted_below, not_racy, racy_window
from ..project.projectfiles import walked

if TYPE_CHECKING:
    from ..stores.firststage import Stamp
    from .projectstate import ProjectState


def held_stamps(state: ProjectState) -> dict[str, Stamp | None]:
    """Absolute path -> the stat stamp ``state`` judged the file by (its compact verdict's), for every file of its
    set; ``None`` where no verdict holds one (the file was analysed otherwise, or not at all: it counts as changed).
    On the state's owner's thread (the server's event loop): a copy the scan thread can compare without a lock. The
    entries the scan met refused (:attr:`memzoi.project.projectfiles.ProjectFiles.refused`) are held without one."""
    held: dict[str, Stamp | None] = dict.fromkeys([*state.tracked.files, *state.tracked.refused])
    for verdict in state.verdicts.values():
        if verdict.path in held:
            held[verdict.path] = verdict.stamp
    return held


def defers_watches(memzoi_dir: str) -> bool:
    """Whether the server may set the watches of ``memzoi_dir`` up after its first scan, leaving the changes made
    meanwhile to :func:`drifted`: only where a stat stamp can vouch for a file's bytes (:mod:`memzoi.base.freshness`),
    on a file system that keeps a ctime that cannot be set back, with nothing mounted below. Elsewhere (sshfs,
    FAT, SMB…) an edit with the mtime put back leaves the stamp whole, so the watches come first, as before."""
    try:
        dev = os.stat(memzoi_dir).st_dev
    except (OSError, ValueError):
        return False
    return fs_type(dev) in KEEPS_CTIME and not mounted_below(memzoi_dir, mount_table())


def drifted(memzoi_dir: str, held: Mapping[str, Stamp | None], since_ns: int) -> list[str]:
    """The absolute paths below ``memzoi_dir`` whose state on disk is not the one ``held`` (:func:`held_stamps`)
    gives: files listed now and not held, or held without a stamp, or whose ``lstat`` stamp differs (an edit, a
    rename over the file), or whose stamp cannot vouch for the bytes the scan read (a file system without a kept
    ctime; racy, git's rule: changed within the timestamp granularity before ``since_ns``, the wall clock when the
    scan began, so possibly written again in the same tick after its read; :func:`memzoi.base.freshness.racy_window`),
    in listing order; then the entries refused listed now (symlinks, names that are not UTF-8:
    :func:`memzoi.project.projectfiles.walked`) and not held; then files and refused entries held and no longer listed
    (gone). Reads only the disk and ``held``, so it may run
    on any thread; never raises (an unreadable folder lists nothing: its files count as gone, and the watch pass
    judges each by its state on disk)."""
    now, refused = walked(memzoi_dir)
    listed_now = {*now, *refused}
    out = [path for path in now if not _vouched(path, held.get(path), since_ns)]
    out += [path for path in refused if path not in held]
    out += [path for path in held if path not in listed_now]
    return out


def _vouched(path: str, stamp: Stamp | None, since_ns: int) -> bool:
    current = lstat(path) if stamp is not None else None
    return (
        current is not None
        and current.stamp == stamp
        and ctime_kept(current)
        and not_racy(stamp, since_ns, racy_window(stamp))
    )


__all__ = ["defers_watches", "drifted", "held_stamps"]
