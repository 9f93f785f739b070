"""The stat of many files at once (:func:`lstat_folders`): what a store's freshness check of a whole project costs
is mostly one ``lstat`` per file (55,000 at 50,000 records), so it is made as cheap as the kernel allows.

- Each name is looked up relative to its folder's descriptor (``fstatat(dirfd, name, AT_SYMLINK_NOFOLLOW)``): one
  path component per lookup instead of the whole absolute path.
- ``os.stat`` releases the GIL while the kernel works, so a large batch is split over a few threads (at most
  :data:`MAX_THREADS`, never more than the CPUs), which shortens the wall time on an idle machine and costs no more
  CPU time. Every thread is joined before the function returns; none is left running.
"""

from __future__ import annotations

import os
import stat as statmod
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor

#: A batch smaller than this is stat'ed on the calling thread: starting threads would cost more than they save.
THREAD_THRESHOLD = 8192
#: Threads of a large batch, at most (and at most one per CPU).
MAX_THREADS = 4

_DIR_FLAGS = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)


def lstat_names(folder: str, names: Sequence[str]) -> list[os.stat_result | None]:
    """The ``lstat`` of each of ``names`` in ``folder`` (absolute), in order: ``None`` where the entry is gone,
    cannot be stat'ed or is not a regular file (a symlink, a folder). Never raises ``OSError``: a folder that
    cannot be opened (or is a symlink) gives ``None`` for every name."""
    if not names:
        return []
    if os.stat not in os.supports_dir_fd:  # no fstatat: the whole path each time
        return _each(lambda name: os.lstat(os.path.join(folder, name)), names)
    try:
        fd = os.open(folder, _DIR_FLAGS)
    except OSError:
        return [None] * len(names)
    try:
        return _each_at(fd, names)
    finally:
        os.close(fd)


def _each_at(fd: int, names: Sequence[str]) -> list[os.stat_result | None]:
    """:func:`_each` of ``os.lstat(name, dir_fd=fd)``, written out: the loop runs 55,000 times at 50,000 records."""
    out: list[os.stat_result | None] = []
    lstat, regular = os.lstat, statmod.S_ISREG
    for name in names:
        try:
            st = lstat(name, dir_fd=fd)
        except (OSError, ValueError):
            out.append(None)
            continue
        out.append(st if regular(st.st_mode) else None)
    return out


def _each(stat: Callable[[str], os.stat_result], names: Sequence[str]) -> list[os.stat_result | None]:
    out: list[os.stat_result | None] = []
    regular = statmod.S_ISREG
    for name in names:
        try:
            st = stat(name)
        except (OSError, ValueError):
            out.append(None)
            continue
        out.append(st if regular(st.st_mode) else None)
    return out


def lstat_folders(
    folders: Sequence[tuple[str, Sequence[str]]], *, threads: int | None = None
) -> list[list[os.stat_result | None]]:
    """:func:`lstat_names` of every ``(folder, names)`` of ``folders``, in order (one list per folder). A batch
    of :data:`THREAD_THRESHOLD` names or more is cut into parts stat'ed by ``threads`` threads (default: the
    CPUs, at most :data:`MAX_THREADS`; 1 = on the calling thread). Never raises ``OSError``."""
    total = sum(len(names) for _, names in folders)
    workers = min(MAX_THREADS, os.cpu_count() or 1) if threads is None else max(1, threads)
    if workers == 1 or total < THREAD_THRESHOLD:
        return [lstat_names(folder, names) for folder, names in folders]
    size = -(-total // workers)  # parts of about equal size, a large folder cut into several
    parts: list[tuple[int, str, Sequence[str]]] = []
    for i, (folder, names) in enumerate(folders):
        parts += [(i, folder, names[k : k + size]) for k in range(0, len(names), size)]
    with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="memzoi-stat") as pool:
        done = list(pool.map(lambda part: lstat_names(part[1], part[2]), parts))
    out: list[list[os.stat_result | None]] = [[] for _ in folders]
    for (i, _, _), got in zip(parts, done, strict=True):
        out[i] += got
    return out


__all__ = ["MAX_THREADS", "THREAD_THRESHOLD", "lstat_folders", "lstat_names"]
