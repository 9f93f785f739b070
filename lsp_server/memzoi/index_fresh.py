"""Whether the index's rows are still their files' (:meth:`memzoi.index.Index.refresh`).

**The index's stamp** (:func:`index_stamp`, kept in ``meta`` under ``stamp``): the schema version, the tool
(:func:`memzoi.toolstamp.tool_stamp`: version and a digest of the installed code) and the project's configuration
(the bytes of ``.memzoi/config.toml``: the project id and ``[rules]`` change every row's verdict). An index made
under another stamp is rebuilt, never served.

**Each row** by the one freshness rule of the project's stores (:mod:`memzoi.freshness`): the stat stamp stored
with each row (size, mtime, inode, ctime and the clock of the read) vouches alone only where that rule lets it;
otherwise the file is read and its BLAKE3 hash compared with the row's, and a row whose bytes are unchanged is kept
under the new stamp.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from pathlib import Path

import blake3

from . import freshness

from .index_queries import plane_stats
from .workspace import MEMZOI_DIR

#: One row's new stat after a confirming read: ``(size, mtime_ns, ino, ctime_ns, checked_ns, path key)``.
Restamp = tuple[int, int, int, int, int, str]


def index_stamp(root: Path) -> str:
    """The stamp an index of the project ``root`` is made under (see the module docstring): hex BLAKE3."""
    from .index_schema import SCHEMA_VERSION
    from .toolstamp import tool_stamp

    try:
        config = (root / MEMZOI_DIR / "config.toml").read_bytes()  # memzoi.config.CONFIG_NAME, without pydantic
    except FileNotFoundError:
        config = b"absent"
    except OSError as err:  # unreadable: a stamp of its own, so it never passes for another configuration
        config = f"unreadable: {err.errno}".encode()
    return blake3.blake3(b"\n".join([str(SCHEMA_VERSION).encode(), tool_stamp().encode(), config])).hexdigest()


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


__all__ = ["Restamp", "index_stamp", "stale"]
