"""The records and packets an index refresh judges, with the stat stamp of each (:class:`Listing`): from a walk of
the git plane (:func:`walk`: what ``memzoi search`` and the agent's recall run before their query), or from a
long-lived caller's listing and the stats its scan took (:func:`from_files`: the language server, issue 29: one
walk and one stat per file). :func:`memzoi.stores.index_fresh.stale` judges a listing from either source by one
decision.

A listing holds plain tuples, not an object per file: at 50,000 records it is 55,000 files, and what a search
costs is mostly this walk (issue 29, target: a search at 50,000 records in 0.25 s).
"""

from __future__ import annotations

import os
import stat as statmod
import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from ..base.freshness import Stamp, Stat
from ..base.statmany import lstat_listed
from ..judge.workspace import MEMZOI_DIR, RESERVED_NAMES, plane_file_name, utf8_name

_PLANE_FOLDERS = ("records", "proposals")


@dataclass
class Listing:
    """The files of a project's git plane (``root``: its absolute root) a refresh judges, by index key
    (``/``-separated, relative to ``root``): ``stamps`` maps each file that has a stat to its stamp ``(size,
    mtime_ns, inode, ctime_ns)`` (:data:`memzoi.base.freshness.Stamp`); ``unstated`` lists the keys of files
    listed without one (gone since, or no longer a regular file). Every file is on the device ``dev`` (``st_dev``,
    which :func:`memzoi.base.freshness.fs_type` asks) but those in ``devs`` (key → device: a mount below
    ``.memzoi``). ``folders``: the absolute folders holding listed files (:func:`memzoi.stores.index_fresh.git_state`
    reads their ``.gitignore``). ``linked``: the keys of files with more than one hard link when stat'ed (a write
    through a link outside the watched folders raises no change notification: :mod:`memzoi.stores.changefeed`
    stats them at every refresh)."""

    root: str
    stamps: dict[str, Stamp] = field(default_factory=dict)
    unstated: list[str] = field(default_factory=list)
    dev: int = -1
    devs: dict[str, int] = field(default_factory=dict)
    folders: set[str] = field(default_factory=set)
    linked: set[str] = field(default_factory=set)

    def path(self, key: str) -> str:
        """The absolute path of the file with index key ``key``."""
        return self.root + os.sep + (key if os.sep == "/" else key.replace("/", os.sep))

    def stat(self, key: str) -> Stat | None:
        """The stamp and device of the listed file ``key``; ``None`` when it was listed without a stat."""
        stamp = self.stamps.get(key)
        return None if stamp is None else Stat(stamp, self.devs.get(key, self.dev))

    def keys(self) -> list[str]:
        """Every listed key, sorted (those without a stat too)."""
        return sorted([*self.stamps, *self.unstated])

    def paths(self) -> list[str]:
        """The absolute paths of the listed files that have a stat, in key order."""
        return [self.path(k) for k in sorted(self.stamps)]

    def add(self, key: str, st: Stat | None) -> None:
        """Take the file ``key`` with its stat ``st`` (``None``: listed without one)."""
        if st is None:
            self.unstated.append(key)
            return
        self.stamps[key] = st.stamp
        if self.dev == -1:
            self.dev = st.dev
        elif st.dev != self.dev:
            self.devs[key] = st.dev


def walk(project_root: str | os.PathLike[str]) -> Listing:
    """The records and packets below ``<root>/.memzoi`` as Memzoi walks them, with their stat: the files the index
    holds (:meth:`memzoi.stores.index.Index.rebuild`, :meth:`~memzoi.stores.index.Index.refresh`); the same files as
    :func:`memzoi.project.crossfile.git_plane_files` (a test holds them equal): below ``records`` and ``proposals``,
    regular ``*.md`` files but ``index.md`` and ``log.md``, no hidden entry, no name that is not UTF-8, none below
    a symlinked folder (:func:`memzoi.judge.workspace.linked_plane`: Memzoi's walk skips a symlinked ``records`` or
    ``proposals``, and a symlinked ``.memzoi`` is never entered), so the index never holds a file read through a
    link. Listed and stat'ed a level of folders at a time (:func:`memzoi.base.statmany.lstat_listed`: a descriptor
    per folder, each entry's ``lstat`` telling a file from a folder, a few threads at 50,000 files). Never raises
    for I/O errors (an unreadable folder is left out, as the walk leaves it)."""
    root = os.path.abspath(project_root)
    out = Listing(root)
    memzoi_dir = os.path.join(root, MEMZOI_DIR)
    if os.path.islink(memzoi_dir):
        return out
    try:
        out.dev = os.stat(memzoi_dir).st_dev
    except OSError:
        return out
    level = [os.path.join(memzoi_dir, name) for name in ("proposals", "records")]
    level = [d for d in level if not os.path.islink(d) and os.path.isdir(d)]
    while level:
        level = _take_level(out, lstat_listed(level))
    return out


def _take_level(out: Listing, listed: list[tuple[str, list[str], list[Any]]]) -> list[str]:
    """Take the records and packets of one level of folders ``listed`` (:func:`memzoi.base.statmany.lstat_listed`)
    into ``out``; returns the folders below them to list next."""
    cut, dev = len(out.root) + 1, out.dev
    stamps, devs, below = out.stamps, out.devs, []
    is_file, is_dir = statmod.S_ISREG, statmod.S_ISDIR
    for folder, names, stats in listed:
        prefix = folder[cut:].replace(os.sep, "/") + "/"
        taken = len(stamps) + len(out.unstated)
        for name, st in zip(names, stats, strict=True):
            if st is None:  # gone since it was listed: a record or packet without a stat, when it looks like one
                if plane_file_name(name):
                    out.unstated.append(prefix + name)
            elif is_file(st.st_mode):
                if plane_file_name(name):
                    key = prefix + name
                    stamps[key] = (st.st_size, st.st_mtime_ns, st.st_ino, st.st_ctime_ns)  # freshness.of_stat's
                    if st.st_dev != dev:
                        devs[key] = st.st_dev
                    if st.st_nlink > 1:
                        out.linked.add(key)
            elif is_dir(st.st_mode) and utf8_name(name):
                below.append(folder + os.sep + name)
        if len(stamps) + len(out.unstated) > taken:
            out.folders.add(folder)
    return below


def walk_ahead(project_root: str | os.PathLike[str]) -> Callable[[], Listing]:
    """:func:`walk` of ``project_root`` started on a thread of its own, for a one-shot caller that has its imports
    to do and the index's stamps to read meanwhile (``memzoi search``: the stats wait on the kernel, not on the
    interpreter). The function returned waits for the walk and gives its listing, or raises what the walk raised."""
    done: list[Listing] = []
    failed: list[BaseException] = []

    def run() -> None:
        try:
            done.append(walk(project_root))
        except BaseException as err:  # noqa: BLE001 - raised again in the caller's thread
            failed.append(err)

    thread = threading.Thread(target=run, name="memzoi-walk", daemon=True)
    thread.start()

    def wait() -> Listing:
        thread.join()
        if failed:
            raise failed[0]
        return done[0]

    return wait


def plane_key(root: str, path: str) -> str | None:
    """The index key (``/``-separated, relative to the absolute ``root``) of ``path``, an absolute path of a file of
    the project's listing, when Memzoi's walk takes it as a record or packet
    (:func:`memzoi.judge.workspace.plane_entries`: below ``.memzoi/records`` or ``.memzoi/proposals``, Markdown, no hidden
    part, not ``index.md``/``log.md``); ``None`` otherwise. The listing holds no symlink and no name that is not
    UTF-8, and enters no symlinked folder (:func:`memzoi.project.checkpaths.expand`), so its plane files are exactly the
    walk's (``tests/test_index_afterscan.py`` holds them equal on a tree of odd entries)."""
    prefix = root.rstrip(os.sep) + os.sep
    if not path.startswith(prefix) or not path.endswith(".md"):
        return None
    parts = path[len(prefix) :].split(os.sep)
    if len(parts) < 3 or parts[0] != MEMZOI_DIR or parts[1] not in _PLANE_FOLDERS or parts[-1] in RESERVED_NAMES:
        return None
    if any(not p or p.startswith(".") for p in parts[1:]):
        return None
    return "/".join(parts)


def from_files(
    project_root: str | os.PathLike[str],
    files: Iterable[str],
    stat_of: Callable[[str], Stat | None],
    lstat: Callable[[str], Stat | None],
) -> Listing:
    """The :class:`Listing` of a caller's listing ``files`` (absolute paths: the files ``memzoi check`` checks,
    :func:`memzoi.project.checkpaths.expand`) narrowed to the records and packets (:func:`plane_key`), each with the
    stat the caller took (``stat_of(path)``) or, where it has none, ``lstat(path)``."""
    root = os.path.abspath(project_root)
    out = Listing(root)
    for path in files:
        key = plane_key(root, path)
        if key is not None:
            out.folders.add(os.path.dirname(path))
            out.add(key, stat_of(path) or lstat(path))
    return out


__all__ = ["Listing", "from_files", "plane_key", "walk", "walk_ahead"]
