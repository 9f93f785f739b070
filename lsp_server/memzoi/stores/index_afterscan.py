"""What the index's refresh after a long-lived caller's scan re-indexes (the language server's first scan, issue 29:
one walk and one stat per file): :func:`stale_after_scan`, the decisions of :func:`memzoi.stores.index_fresh.stale`
taken from what the scan already has instead of a walk and a stat of its own.

- **The files** are the caller's listing (the files ``memzoi check`` checks, :func:`memzoi.project.checkpaths.expand`)
  narrowed to the records and packets Memzoi's walk takes (:func:`plane_key`: the set
  :func:`memzoi.stores.index_queries.plane_stats` walks), not a second walk of the folders.
- **Each file's stat** is the one the scan took (``stat_of(path)``); a file it has none for (changed since, or not
  seen by it) is stat'ed here (``lstat``). The freshness rule is the one of :mod:`memzoi.base.freshness`, unchanged.
- **The rows** are read in key order one at a time beside the sorted files (a merge), so not every row's stamp is
  held at once (the index's refresh held 11,000 rows' stamps and 11,000 stats, about 20 MB, at the server's peak).
"""

from __future__ import annotations

import os
import sqlite3
import time
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any

from ..base import freshness
from ..base.freshness import Stat
from ..judge.workspace import MEMZOI_DIR, RESERVED_NAMES
from .index_fresh import Plan, git_state, readmitted
from .index_queries import _REDACTED_PREFIX  # the index's key prefix of a path that bore a secret (one copy)

_PLANE_FOLDERS = ("records", "proposals")


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


def stale_after_scan(
    db: sqlite3.Connection,
    root: Path,
    files: Iterable[str],
    stat_of: Callable[[str], Stat | None] | None,
    redacted_key: Callable[[str, dict[str, Any]], str | None],
    key_of: Callable[[Path], str],
    lstat: Callable[[str], Stat | None] | None = None,
) -> Plan:
    """The :class:`memzoi.stores.index_fresh.Plan` of a refresh of the index ``db`` of the project ``root`` after a scan
    (see the module docstring): the same plan :func:`memzoi.stores.index_fresh.stale` makes when the files are
    unchanged since the scan took their stats. ``files``: the absolute paths of the project's listing;
    ``stat_of(path)``: the stat the scan took of the file, ``None`` when it has none (the file is then stat'ed
    with ``lstat``, by default :func:`memzoi.base.freshness.lstat`; with no ``stat_of`` every file is); the stat
    is judged by :func:`memzoi.base.freshness.trusted` under one clock, as ``stale`` does; ``redacted_key`` and
    ``key_of`` as for ``stale``. Raises ``sqlite3.Error``."""
    lstat = lstat or freshness.lstat
    taken = stat_of or (lambda _: None)
    now = time.time_ns()  # one clock for the whole listing, as stale() reads it
    trusted = freshness.trusted
    base = os.path.abspath(root)
    plane = sorted(p for p in files if plane_key(base, p) is not None)  # the keys' order: they share the prefix
    if os.sep != "/":  # there a separator sorts otherwise than the keys' "/"
        plane.sort(key=lambda p: plane_key(base, p) or "")
    plan = Plan(git=git_state(root, {path.rpartition(os.sep)[0] for path in plane}))
    stored = db.execute("SELECT value FROM meta WHERE key = 'git'").fetchone()
    plan.git_changed = stored is None or stored[0] != plan.git
    present: dict[str, str] | None = {} if plan.git_changed else None  # key -> path, for readmitted()
    redacted: dict[str, Any] = {}  # rows under a redacted key: few, matched by key after the merge
    unmatched: list[str] = []  # files without a row under their plain key

    def judge(path: str, key: str, row: Any) -> None:
        if present is not None:
            present[key] = path
        st = taken(path) or lstat(path)
        if st is None and row is not None:  # listed, gone since (its event not taken yet): as the walk, gone
            plan.gone.append(key)
        if st is None or (row is not None and trusted(st.stamp, st.dev, row[:4], row[4], now)):
            return
        read = freshness.confirm(path, row[0], bytes.fromhex(row[5])) if row is not None else None
        if read is None:
            plan.changed.append(Path(path))
        else:
            plan.restamp.append((*read[1], read[2], key))

    pending = _keyed(base, plane)
    nxt = next(pending, None)
    for row in _rows(db):
        key = row[0]
        if key.startswith(_REDACTED_PREFIX):
            redacted[key] = row[1:]
            continue
        while nxt is not None and nxt[0] < key:
            unmatched.append(nxt[1])
            nxt = next(pending, None)
        if nxt is not None and nxt[0] == key:
            judge(nxt[1], key, row[1:])
            nxt = next(pending, None)
        else:
            plan.gone.append(key)
    if nxt is not None:
        unmatched.append(nxt[1])
    unmatched.extend(path for _, path in pending)
    for path in unmatched:  # new files, and files the index holds under a redacted key
        rel = plane_key(base, path) or ""
        key = redacted_key(rel, redacted) or key_of(Path(path))
        judge(path, key, redacted.pop(key, None))
    plan.gone += list(redacted)
    if present is not None:
        again = {str(p) for p in plan.changed}
        plan.changed += [Path(p) for p in readmitted(db, root, present) if p not in again]
    return plan


def _keyed(base: str, plane: list[str]) -> Iterator[tuple[str, str]]:
    """``(key, path)`` of the sorted plane files, made one at a time."""
    for path in plane:
        key = plane_key(base, path)
        if key is not None:
            yield key, path


def _rows(db: sqlite3.Connection) -> Iterator[tuple[Any, ...]]:
    """The index's ``files`` rows ``(path, size, mtime_ns, ino, ctime_ns, checked_ns, sha)`` in key order (SQLite's
    binary order of UTF-8 is Python's order of the keys), read a row at a time."""
    cur = db.cursor()
    cur.row_factory = None
    yield from cur.execute("SELECT path, size, mtime_ns, ino, ctime_ns, checked_ns, sha FROM files ORDER BY path")


__all__ = ["plane_key", "stale_after_scan"]
