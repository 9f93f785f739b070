"""The listing of a walk's folders kept with a stored report (:mod:`memzoi.stores.replay`), so that a replay of
``memzoi check`` whose folders did not change skips the walk (issue 29, "Replay": what runs besides the stat of
every file and the print).

A folder's mtime and ctime change whenever an entry is added to it, removed from it or renamed in it, and its ctime
when its permissions change, so a folder whose stat stamp the one freshness rule trusts
(:func:`memzoi.base.freshness.trusted`) lists what it listed when the stamp was taken (git's untracked cache relies
on the same). A listing is kept only for a walk whose findings follow from its folders' listings alone
(:attr:`memzoi.project.checkpaths.Expanded.listed_only`: directory arguments, no symlink met, no file outside
``.memzoi`` sniffed); each folder is stat'ed before it is listed, with the wall clock read just before.
"""

from __future__ import annotations

import os
import stat
import time
from typing import Any

from ..base import freshness

#: What a walk's folders were as it listed them: ``[[the real path of each argument], {folder: [size, mtime_ns, inode,
#: ctime_ns, checked_ns]}]`` (:attr:`memzoi.project.checkpaths.Expanded.folders`).
Listing = list[Any]


def listing_current(listing: Listing | None, args: list[str]) -> bool:
    """Whether a walk of ``args`` would find what it found when ``listing`` was taken, without walking: every
    argument still resolves to the folder it did, and every folder listed keeps a stat stamp the one freshness
    rule trusts (:func:`memzoi.base.freshness.trusted`: the same stamp, taken at least the racy window after the
    folder last changed, on a file system that keeps its ctime, and not drawn for a re-check)
    (see the module docstring). ``False`` means: walk. Never raises."""
    if not listing or len(listing) != 2:
        return False
    reals, folders = listing
    try:
        if [os.path.realpath(a) for a in args] != reals or not isinstance(folders, dict):
            return False
        trusted, now = freshness.trusted, time.time_ns()
        for path, stored in folders.items():
            st = os.lstat(path)
            if not stat.S_ISDIR(st.st_mode):
                return False
            now_stat = freshness.of_stat(st)
            if not trusted(now_stat.stamp, now_stat.dev, stored[:4], stored[4], now):
                return False
    except (OSError, ValueError, TypeError, IndexError):
        return False
    return True


def listing_gains(stored: Listing | None, fresh: Listing | None) -> bool:
    """Whether keeping ``fresh`` (a walk's :data:`Listing` that found what ``stored``'s did) instead of ``stored``
    lets :func:`listing_current` skip a walk where ``stored`` would not (:func:`memzoi.base.freshness.restamp_gains`
    for each folder: another stamp, a racy or an old one). A listing only drawn for a re-check is not written again."""
    if fresh is None:
        return False
    if not stored or len(stored) != 2 or stored[0] != fresh[0] or not isinstance(stored[1], dict):
        return True
    old = stored[1]
    if old.keys() != fresh[1].keys():
        return True
    try:
        return any(freshness.restamp_gains(old[p][:4], old[p][4], new[:4], new[4]) for p, new in fresh[1].items())
    except (TypeError, IndexError):
        return True


__all__ = ["Listing", "listing_current", "listing_gains"]
