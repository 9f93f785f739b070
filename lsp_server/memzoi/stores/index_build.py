"""Filling the index (:class:`memzoi.stores.index.Index`): the rows of a batch of files, made by the caller
(``premade``) or made here with each file's store entry by the one routine :mod:`memzoi.stores.fileentry` (in worker
processes for many files), and their insertion in batches.
"""

from __future__ import annotations

import functools
import json
import os
import sqlite3
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .index_schema import COLUMNS, STAGED, file_checksum, staging_script

if TYPE_CHECKING:
    from .fileentry import Row
    from .firststage import Entry
    from .index_rows import Premade

#: From this many files on, (re)indexing analyses files in worker processes.
PARALLEL_THRESHOLD = 400
#: :func:`analyse_rows` asks git the visibility of this many files first, and of the others once the workers have
#: the first chunk (guided: 687 files at 11,000): asking for all 11,000 kept both workers waiting 0.1 s at 10,000
#: records (``memzoi rebuild``, issue 29), where ``memzoi check`` starts its workers while it lists.
FIRST_ASKED = 1024
#: Progress callback: ``(files done, files total)``.
Progress = Callable[[int, int], None]
#: How many rows are inserted by one statement of each table.
INSERT_BATCH = 100
#: The columns of a ``files`` row a caller gives, in the table's order: all but the checksum, taken here.
FILE_VALUES = COLUMNS["files"][:-1]


@dataclass
class RebuildResult:
    """Outcome of :meth:`memzoi.stores.index.Index.rebuild` / ``refresh`` / ``update_paths``: the ids indexed
    (sorted), the number of files, the refused files (``{path, refusals}``) and the time taken in seconds."""

    record_ids: list[str] = field(default_factory=list)
    proposal_ids: list[str] = field(default_factory=list)
    files: int = 0
    refused: list[dict[str, Any]] = field(default_factory=list)  # {path, refusals}
    seconds: float = 0.0


def analyse_rows(
    root: Path,
    files: Sequence[str | os.PathLike[str]],
    progress: Progress | None,
    *,
    premade: Premade | None = None,
    workers: int | None = None,
    helper: bool = False,
    sink: Callable[[Row], None] | None = None,
    entry_sink: Callable[[str, Entry | None], None] | None = None,
) -> tuple[list[Row], list[tuple[str, Entry | None]]]:
    """Rows for ``files`` of the project ``root``, and the store entries made with them: those the caller made
    (``premade``; their entries are the caller's), then for the others git visibility (two batches from
    :data:`FIRST_ASKED` files on: the workers start on the first while git is asked about the rest) and each file's
    one entry (:func:`memzoi.stores.fileentry.row_chunk`: read, analyse, store entry and
    rows), in worker processes from :data:`PARALLEL_THRESHOLD` files on (``workers``: their number, ``None`` one per
    CPU up to 8; ``helper``: from a fork server, for a threaded caller). A file that cannot be read gets no row.
    The entries are ``(absolute path, entry)`` pairs, ``None`` for a file whose entry must not be kept. With
    ``sink`` (a rebuild's :meth:`Staging.add`) each row is given to it as it comes and none is returned; with
    ``entry_sink`` (a rebuild's :meth:`memzoi.stores.store.EntryRows.add`) so is each ``(path, entry)`` pair. Raises
    what git or the pool raises (and what ``sink`` or ``entry_sink`` raises)."""
    total = len(files)
    if progress:
        progress(0, total)
    if not files:
        return [], []
    from ..base.parallel import ChunkPool, cpu_count  # noqa: PLC0415 lazy: start-up
    from ..project.admission import GitVisibility, git_visibility  # noqa: PLC0415 lazy: start-up
    from .fileentry import Made, row_chunk  # noqa: PLC0415 lazy: start-up

    rows: list[Row] = []
    entries: list[tuple[str, Entry | None]] = []
    if premade is not None:
        rows, files = premade([Path(p) for p in files])
        if sink is not None:
            for row in rows:
                sink(row)
            rows = []
        if not files:
            if progress:
                progress(total, total)
            return rows, entries
    step = max(1, total // 100)
    n = workers if workers is not None else min(cpu_count(), 8)
    pool: ChunkPool[tuple[str, str], Made | None] = ChunkPool(
        functools.partial(row_chunk, now=None, root=str(root)),
        workers=n,
        chunksize=max(16, len(files) // (n * 8)),
        start_at=PARALLEL_THRESHOLD,
        helper=helper,
        total=len(files),  # guided: the last chunks are small, so both workers end together
        join=False,  # the rows are written while the workers exit
    )
    # git's answers for the first files, then the workers start on them while the others' are asked
    for part in (files[:FIRST_ASKED], files[FIRST_ASKED:]) if len(files) > FIRST_ASKED else (files,):
        vis = git_visibility(root, part)
        for p in part:
            pool.add((os.fspath(p), vis.get(os.path.abspath(p), GitVisibility.UNKNOWN).value))
    for i, made in enumerate(pool.iter_results(), total - len(files) + 1):
        if made is not None:
            path, entry, searched = made
            if entry_sink is not None:
                entry_sink(path, entry)
            else:
                entries.append((path, entry))
            if searched is not None:
                if sink is not None:
                    sink(searched)
                else:
                    rows.append(searched)
        if progress and (i % step == 0 or i == total):
            progress(i, total)
    return rows, entries


def insert_rows(db: sqlite3.Connection, rows: Sequence[Row]) -> RebuildResult:
    """Insert ``rows`` (:func:`memzoi.stores.index_rows.index_row`) into the index ``db``, inside the caller's
    transaction, :data:`INSERT_BATCH` at a time, with each file's checksum, and sum them up. Raises
    ``sqlite3.Error``."""
    res = RebuildResult()
    for i in range(0, len(rows), INSERT_BATCH):
        _insert(db, rows[i : i + INSERT_BATCH], "", res)
    res.record_ids.sort()
    res.proposal_ids.sort()
    return res


def _insert(db: sqlite3.Connection, batch: Sequence[Row], prefix: str, res: RebuildResult) -> None:
    """Insert one ``batch`` of rows into the tables ``prefix`` + name, each file with the checksum of its values
    (:func:`memzoi.stores.index_schema.file_checksum`: the values inserted are the values stored, so no second
    pass over the stored rows takes it), and add them to ``res``. The checksum is the one the rows carry
    (:func:`memzoi.stores.index_rows.seal`, taken in the worker that made them), else taken here."""
    res.files += len(batch)
    files = [
        (
            *map(r["file"].get, FILE_VALUES),
            r["file"].get("checksum") or file_checksum(r["file"], r.get("record"), r.get("proposal")),
        )
        for r in batch
    ]
    db.executemany(f"INSERT INTO {prefix}files VALUES ({', '.join('?' * len(COLUMNS['files']))})", files)
    for kind, table in (("record", "records"), ("proposal", "proposals")):
        part = [tuple(map(r[kind].get, COLUMNS[table])) for r in batch if r.get(kind)]
        if part:  # positional values: 15 % cheaper to bind than named ones; a column a row leaves out is NULL
            db.executemany(f"INSERT INTO {prefix}{table} VALUES ({', '.join('?' * len(COLUMNS[table]))})", part)
    for r in batch:
        if r.get("record") and r["record"]["id"]:
            res.record_ids.append(r["record"]["id"])
        if r.get("proposal") and r["proposal"]["id"]:
            res.proposal_ids.append(r["proposal"]["id"])
        if r["file"]["refusals"] != "[]":  # the usual case parses nothing
            refusals = json.loads(r["file"]["refusals"])
            if refusals:
                res.refused.append({"path": r["file"]["path"], "refusals": refusals})


#: The page cache of ``memzoi rebuild``'s connection while it rebuilds, in KiB (SQLite's default: 2,000). Its one
#: transaction writes the whole store (44 MB at 10,000 files); with the default cache its pages spill into the WAL
#: and are written again (issue 29: ``memzoi rebuild`` ≤ 1.2× a cold check; the transaction's CPU at 10,000
#: files 0.53–0.62 s → 0.44–0.49 s). The page cache grows only as pages are used; a server keeps the default.
REBUILD_CACHE_KIB = 65536


class Staging:
    """The rows of a rebuild, streamed as they are made into temporary tables of the connection ``db``
    (:func:`memzoi.stores.index_schema.staging_script`) instead of held in memory (issue 29, Build 4: "Stream index
    rows in batches, without holding the write lock while files are analysed"), then copied into the index in the
    caller's one transaction (:meth:`copy`): readers never see a half-filled index. Temporary tables take no lock
    of the index's database. Use as a context manager (the temporary tables are dropped on leaving); raises
    ``sqlite3.Error``. ``cache_kib``: the connection's page cache within the context, in KiB
    (:data:`REBUILD_CACHE_KIB`; ``None``: as it is). ``closing``: the caller closes the connection right after
    the context (``memzoi rebuild``), so a context left without an error keeps the temporary tables: closing the
    connection discards the temporary database whole, where dropping its tables freed their pages one by one
    (0.06 s at 10,000 files, after the commit); a context left by an error drops them as always, and so does the
    next staging on the same connection before it starts."""

    PREFIX = "staged_"

    def __init__(self, db: sqlite3.Connection, cache_kib: int | None = None, *, closing: bool = False):
        self.db = db
        self.closing = closing
        self.result = RebuildResult()
        self._held: list[Row] = []
        self._cache: tuple[int, int] | None = None  # (the page cache asked for in KiB, the connection's setting)
        if cache_kib is not None:
            self._cache = (cache_kib, int(db.execute("PRAGMA cache_size").fetchone()[0]))

    def __enter__(self) -> Staging:
        if self._cache is not None:  # until the context is left (memzoi rebuild: REBUILD_CACHE_KIB)
            self.db.execute(f"PRAGMA cache_size=-{self._cache[0]:d}")
        self._drop()
        for stmt in staging_script(self.PREFIX):
            self.db.execute(stmt)
        self.db.execute("BEGIN")  # deferred; it writes only the temporary database: the index stays unlocked
        return self

    def __exit__(self, *exc: object) -> None:
        if self._cache is not None:
            self.db.execute(f"PRAGMA cache_size={self._cache[1]:d}")
        if self.db.in_transaction:
            self.db.execute("ROLLBACK")
        if not (self.closing and exc[0] is None):
            self._drop()

    def _drop(self) -> None:
        for table in STAGED:
            self.db.execute(f"DROP TABLE IF EXISTS temp.{self.PREFIX}{table}")

    def add(self, row: Row) -> None:
        """Stage one file's rows; they are written :data:`INSERT_BATCH` at a time, in one transaction of the
        temporary database (one per batch cost 0.6 s of system time at 10,000 files, its journal written each
        time)."""
        self._held.append(row)
        if len(self._held) >= INSERT_BATCH:
            self.flush()

    def flush(self) -> None:
        """Write the rows held so far, each file with its checksum (the values staged are the values copied, so
        the checksums hold once copied), while the workers go on analysing."""
        if not self._held:
            return
        _insert(self.db, self._held, self.PREFIX, self.result)
        self._held = []

    def finish(self) -> RebuildResult:
        """Write what is held (:meth:`flush`), still outside the index's write lock; returns what was staged, ids
        sorted."""
        self.flush()
        self.db.execute("COMMIT")
        self.result.record_ids.sort()
        self.result.proposal_ids.sort()
        return self.result

    def copy(self) -> None:
        """Copy the staged rows into the index's (emptied) tables, inside the caller's transaction."""
        for table in STAGED:
            self.db.execute(f"INSERT INTO main.{table} SELECT * FROM temp.{self.PREFIX}{table}")


__all__ = [
    "PARALLEL_THRESHOLD",
    "REBUILD_CACHE_KIB",
    "Progress",
    "RebuildResult",
    "Staging",
    "analyse_rows",
    "insert_rows",
]
