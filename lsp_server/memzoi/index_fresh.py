"""Whether the index's rows are still their files' (:meth:`memzoi.index.Index.refresh`), by the one freshness rule
of the project's stores (:mod:`memzoi.freshness`): the stat stamp stored with each row (size, mtime, inode, ctime
and the clock of the read) vouches alone only where that rule lets it; otherwise the file is read and its BLAKE3
hash compared with the row's, and a row whose bytes are unchanged is kept under the new stamp.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from pathlib import Path

from . import freshness
from .index_queries import plane_stats

#: One row's new stat after a confirming read: ``(size, mtime_ns, ino, ctime_ns, checked_ns, path key)``.
Restamp = tuple[int, int, int, int, int, str]


def stale(db: sqlite3.Connection, root: Path, redacted_key: Callable[[str, dict], str | None],
          key_of: Callable[[Path], str]) -> tuple[list[Path], list[str], list[Restamp]]:
    """``(changed, gone, restamp)`` of the index ``db`` of the project ``root``: the absolute paths of the
    files that are new or whose bytes differ from their row's, the keys of rows whose file is gone, and the new
    stamps of rows confirmed by hash. ``redacted_key(rel, known)`` and ``key_of(path)`` give a file's key (only a
    path the index does not hold as it is is scanned for its key). Raises ``sqlite3.Error``."""
    known = {r[0]: tuple(r[1:]) for r in db.execute(
        "SELECT path, size, mtime_ns, ino, ctime_ns, checked_ns, sha FROM files")}
    changed: list[Path] = []
    present: set[str] = set()
    restamp: list[Restamp] = []
    for rel, (path, st) in plane_stats(root).items():
        # A path the index holds as it is was judged free of secrets when its row was written, so only a
        # path it does not hold is scanned for its key (a scan per file was most of a search at 10,000).
        key = rel if rel in known else redacted_key(rel, known) or key_of(Path(path))
        present.add(key)
        row = known.get(key)
        if st is None or (row is not None and freshness.vouches(st, row[:4], row[4])):
            continue
        read = freshness.confirm(path, row[0], bytes.fromhex(row[5])) if row is not None else None
        if read is None:
            changed.append(Path(path))
        else:
            restamp.append((*read[1], read[2], key))
    gone = [rel for rel in known if rel not in present]
    return changed, gone, restamp


__all__ = ["Restamp", "stale"]
