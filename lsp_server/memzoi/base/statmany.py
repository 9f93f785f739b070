"""The stat of many files at once (:func:`lstat_listed`): what a store's freshness check of a whole project costs
is mostly one ``lstat`` per file (55,000 at 50,000 records), so it is made as cheap as the kernel allows.

- Each name is looked up relative to its folder's descriptor (``fstatat(dirfd, name, AT_SYMLINK_NOFOLLOW)``): one
  path component per lookup instead of the whole absolute path.
- ``os.stat`` releases the GIL while the kernel works, so a large batch is split over a few threads (at most
  :data:`MAX_THREADS`, never more than the CPUs), which shortens the wall time on an idle machine and costs no more
  CPU time. Every thread is joined before the function returns; none is left running.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

#: A batch smaller than this is stat'ed on the calling thread: starting threads would cost more than they save.
THREAD_THRESHOLD = 8192
#: Threads of a large batch, at most (and at most one per CPU).
MAX_THREADS = 4

_DIR_FLAGS = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)


def _each_at(fd: int, names: Sequence[str]) -> list[os.stat_result | None]:
    """``os.lstat(name, dir_fd=fd)`` of each name, of any type (``None`` where it fails), written out: the loop runs
    55,000 times at 50,000 records."""
    out: list[os.stat_result | None] = []
    lstat = os.lstat
    for name in names:
        try:
            out.append(lstat(name, dir_fd=fd))
        except (OSError, ValueError):
            out.append(None)
    return out


def _workers(total: int, threads: int | None) -> int:
    workers = min(MAX_THREADS, os.cpu_count() or 1) if threads is None else max(1, threads)
    return 1 if total < THREAD_THRESHOLD else workers


def _split(
    batches: Sequence[tuple[Any, Sequence[str]]],
    stat: Callable[[Any, Sequence[str]], list[os.stat_result | None]],
    workers: int,
) -> list[list[os.stat_result | None]]:
    """``stat(where, names)`` of every ``(where, names)`` of ``batches``, in order (one list per batch), on
    ``workers`` threads: the names cut into parts of about equal size, a large batch into several."""
    if workers == 1:
        return [stat(where, names) for where, names in batches]
    size = -(-sum(len(names) for _, names in batches) // workers)
    parts: list[tuple[int, Any, Sequence[str]]] = []
    for i, (where, names) in enumerate(batches):
        parts += [(i, where, names[k : k + size]) for k in range(0, len(names), size)]
    with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="memzoi-stat") as pool:
        done = list(pool.map(lambda part: stat(part[1], part[2]), parts))
    out: list[list[os.stat_result | None]] = [[] for _ in batches]
    for (i, _, _), got in zip(parts, done, strict=True):
        out[i] += got
    return out


def lstat_listed(folders: Sequence[str], *, threads: int | None = None) -> list[tuple[str, list[str], list[Any]]]:
    """Each of ``folders`` (absolute) listed and every entry stat'ed, through one descriptor per folder opened
    without following a symlink: ``(folder, names, stats)``, the names but those starting with ``.`` (hidden) in
    the order the folder lists them, each with its ``lstat`` (``os.stat_result`` of any type: a regular file, a
    folder, a link …; ``None`` where the entry is gone since). A folder that cannot be opened or listed (or is a
    symlink) is left out. A batch of :data:`THREAD_THRESHOLD` entries or more is cut into parts stat'ed by ``threads`` threads (default:
    the CPUs, at most :data:`MAX_THREADS`; 1 = on the calling thread).
    Never raises ``OSError``. Listing by name (``os.listdir``) and one ``lstat`` per entry costs less than
    ``os.scandir``'s entry objects when every file is stat'ed anyway."""
    opened: list[tuple[str, int, list[str]]] = []
    try:
        for folder in folders:
            try:
                fd = os.open(folder, _DIR_FLAGS)
            except OSError:
                continue
            try:
                names = [n for n in os.listdir(fd) if not n.startswith(".")]
            except OSError:
                os.close(fd)
                continue
            opened.append((folder, fd, names))
        whole = os.stat not in os.supports_dir_fd  # no fstatat: the whole path each time
        batches: list[tuple[Any, Sequence[str]]] = [(folder if whole else fd, names) for folder, fd, names in opened]
        stat = _each_path if whole else _each_at
        stats = _split(batches, stat, _workers(sum(len(n) for _, n in batches), threads))
        return [(folder, names, got) for (folder, _, names), got in zip(opened, stats, strict=True)]
    finally:
        for _, fd, _ in opened:
            os.close(fd)


def _each_path(folder: str, names: Sequence[str]) -> list[os.stat_result | None]:
    """``os.lstat`` of each name by its whole path (``None`` where it fails), of any type."""
    out: list[os.stat_result | None] = []
    for name in names:
        try:
            out.append(os.lstat(os.path.join(folder, name)))
        except (OSError, ValueError):
            out.append(None)
    return out


__all__ = ["MAX_THREADS", "THREAD_THRESHOLD", "lstat_listed"]
