"""The workspace index: a disposable SQLite (WAL) database of records and proposal packets with FTS5 search.

Location: the tables ``files``, ``records``, ``proposals``, their FTS5 tables and ``meta`` of the project's store
(:mod:`memzoi.stores.store`: ``${MEMZOI_HOME:-~/.memzoi}/projects/<repository-key>/worktrees/<worktree-key>/memzoi-lsp-store.db``,
Memzoi's key derivation and layout, reference §7.1/§7.3; the file name is ours, so Memzoi's own ``index.db`` and
``shared.db`` are never touched), beside the store entries ``memzoi check`` reads. It is derived from the git plane only and can always be rebuilt
(:meth:`Index.rebuild`, ``memzoi rebuild``). :meth:`Index.update_paths` keeps it current per file (a missing file's
rows are dropped); :meth:`Index.refresh` re-indexes exactly the files whose bytes or presence changed (by the
freshness rule of :mod:`memzoi.base.freshness`); :meth:`Index.drift` compares it with the files (``memzoi doctor``),
like Memzoi's ``derived_index/drift.rs`` (``missing_from_index``, ``stale_in_index``, ``changed_in_index``,
``fts_out_of_sync``).

Tables: ``files`` (every indexed path with its byte hash, admission and findings), ``records``, ``proposals``, and
external-content FTS5 tables ``records_fts`` / ``proposals_fts`` over ``title`` and ``body`` kept in sync by
triggers (as Memzoi's ``memory_fts``). Every batch of writes is one transaction.

This module opens, builds and updates the database; the schema is in :mod:`memzoi.stores.index_schema`, the rows of one
file in :mod:`memzoi.stores.index_rows` and the reading queries in :mod:`memzoi.stores.index_queries`.
"""

from __future__ import annotations

import contextlib
import os
import random
import sqlite3
import time
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..base.runtime import private_dir, private_file
from ..base.runtime_errors import RuntimeStateError, runtime_error
from .index_build import REBUILD_CACHE_KIB, Progress, RebuildResult, Staging, analyse_rows, insert_rows
from .index_queries import Drift, IndexQueries, SearchHit
from .index_schema import _SCHEMA, GEN_KEY, SCHEMA_VERSION, _opening, _split_sql, _Tx, generation, row_checksum
from .index_text import TO_FILL, fill_beside, fill_text, text_to_fill
from .store import STORE_VERSION, EntryRows, ensure_schema, forget_old_databases, store_path, write_rows

if TYPE_CHECKING:
    from ..base.freshness import Stat
    from ..project.filefacts import FileFacts
    from .fileentry import Row
    from .findlisting import Found
    from .firststage import Entry
    from .index_rows import Premade
    from .planelisting import Listing
    from .refreshplan import Plan

# What analyses a file (admission, index_rows, the detectors behind shown_path) is imported where a file is
# analysed: `memzoi search` on an up-to-date index opens, stats and queries, and loads none of it.


class IndexUnavailable(RuntimeStateError):
    """The index cannot be opened or written (message says where and what to do; ``code`` is a runtime error
    code of :mod:`memzoi.base.runtime_errors`, ``index_unavailable`` for a schema of another version)."""

    def __init__(
        self,
        message: str,
        code: str = "index_unavailable",
        path: str | os.PathLike[str] | None = None,
        advice: str | None = None,
    ):
        super().__init__(code, message, path, advice=advice)


class Index(IndexQueries):
    """An open index database for one project root. Use as a context manager or call :meth:`close`.

    ``path`` overrides the database location (tests, or an explicit ``--index``); ``workers`` the number of
    analysis processes for large batches (default: CPUs, at most 8). ``premade`` is where a caller that already
    holds files' rows supplies them instead (the language server, whose scan analysed each file once):
    ``premade(files) -> (rows, rest)`` gives the rows (:func:`memzoi.stores.index_rows.index_row`, without ledger or
    cross-file findings) of those of ``files`` it holds as they are on disk, and the files it does not, which
    the index analyses itself; nothing is analysed twice. ``helper`` lets a threaded caller's analysis use worker
    processes from a fork server (:class:`memzoi.base.parallel.ChunkPool`). One ``Index`` is not for concurrent use
    from several threads (give each thread its own; SQLite WAL lets them read while one writes). Opening never
    scans files; call :meth:`rebuild` or :meth:`refresh`. Raises :class:`IndexUnavailable` when the database cannot
    be opened."""

    def __init__(
        self,
        project_root: str | os.PathLike[str],
        *,
        path: str | os.PathLike[str] | None = None,
        workers: int | None = None,
        premade: Premade | None = None,
        helper: bool = False,
    ):
        self.root = Path(project_root).resolve()
        self.workers = workers  # analysis processes; None = one per CPU (at most 8), 1 = in-process
        self.premade = premade
        self.helper = helper
        self.path = Path(path) if path is not None else store_path(self.root)
        self._judged: tuple[str | None, bool] | None = None  # the last refresh's (Plan.gen, re-indexed any)
        self._wrote: tuple[str | None, str | None] | None = None  # files generation around the last update_paths
        try:
            private_dir(self.path.parent)
            private_file(self.path)
            self.db = sqlite3.connect(self.path, timeout=5.0, isolation_level=None, check_same_thread=False)
            self.db.row_factory = sqlite3.Row
            self.db.create_function("row_checksum", -1, row_checksum, deterministic=True)  # index_schema.checksum_sql
            try:
                self.schema_problem = _opening(self.db, self._check_schema)
            except sqlite3.Error:  # a full disk while creating the schema, a damaged file (named: rebuild replaces it)
                self.db.close()
                raise
        except (OSError, sqlite3.Error) as err:
            state = runtime_error(err, self.path, "index")
            raise IndexUnavailable(state.message, state.code, self.path, state.advice) from err

    # -- lifecycle ----------------------------------------------------------------------------------------------

    def __enter__(self) -> Index:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Close the connection."""
        self.db.close()

    def _check_schema(self) -> str | None:
        ensure_schema(self.db)  # another version, or a missing table: dropped and made anew (memzoi.stores.store)
        forget_old_databases(self.path.parent)
        return self._stamp_problem()

    def _stamp_problem(self) -> str | None:
        """A message when the built index was made under another stamp (:func:`memzoi.stores.index_fresh.index_stamp`:
        another build of the tool, another configuration); such an index is rebuilt, never served."""
        from .index_fresh import index_stamp  # noqa: PLC0415 lazy: start-up

        row = self.db.execute("SELECT value FROM meta WHERE key = 'stamp'").fetchone()
        built = self.db.execute("SELECT 1 FROM meta WHERE key = 'built_at'").fetchone()
        if built is None or (row is not None and row[0] == index_stamp(self.root)):
            return None
        return (
            "the index was made by another build of memzoi-lsp or under another .memzoi/config.toml; "
            "run `memzoi rebuild` to recreate it"
        )

    @property
    def exists(self) -> bool:
        """True when the index has been built at least once."""
        if self.schema_problem:
            return False
        return self.db.execute("SELECT 1 FROM meta WHERE key='built_at'").fetchone() is not None

    # -- building ------------------------------------------------------------------------------------------------

    def rebuild(
        self,
        progress: Progress | None = None,
        *,
        everything: bool = False,
        files: Sequence[str | os.PathLike[str]] | None = None,
        closing: bool = False,
    ) -> RebuildResult:
        """Recreate the whole index from the git plane in one transaction (readers keep the old state until
        commit), with the store entries made from the same analyses; the rows are staged as they come, outside the
        write lock (:class:`memzoi.stores.index_build.Staging`). With ``everything`` (``memzoi rebuild``) the
        store's other tables are emptied in the same transaction first: store entries and stored reports
        (:mod:`memzoi.stores.store`); the entries are filled again, the reports by the next check.
        ``files``: the git plane's files as a caller just listed them (sorted), instead of a walk. ``closing``: the
        caller closes this index right after (``memzoi rebuild``), so the staged copies are left to the close
        (:class:`~memzoi.stores.index_build.Staging`'s ``closing``). Returns what was indexed."""
        from .index_fresh import git_state, index_stamp, plane_of  # noqa: PLC0415 lazy: start-up

        started = time.perf_counter()
        stamp = index_stamp(self.root)  # before the files are read: a change meanwhile shows at the next refresh
        if files is None:
            files = plane_of(self.root).paths()  # absolute path strings: no Path per file
        git = git_state(self.root, {os.path.dirname(p) for p in files})
        kept = EntryRows(self._entry_stamp())  # the store entries, made into their rows as they come
        # the rows go to temporary tables as they come, outside the write lock (memzoi rebuild: a larger page cache)
        with Staging(self.db, cache_kib=REBUILD_CACHE_KIB if everything else None, closing=closing) as staged:
            analyse_rows(self.root, files, progress, **self._supply(), sink=staged.add, entry_sink=kept.add)
            del files  # not needed while the rows are copied: 11,000 paths held about 5 MB
            result = staged.finish()
            with _Tx(self.db):
                for name in ("entries", "reports") if everything else ():
                    self.db.execute(f"DELETE FROM {name}")
                write_rows(self.db, kept.rows, kept.drop)
                self._recreate(stamp, git)
                staged.copy()
                fill_text(self.db)
        self.schema_problem = None
        result.seconds = time.perf_counter() - started
        return result

    def _recreate(self, stamp: str, git: str) -> None:
        """Drop the index's tables and create them empty, made under ``stamp`` and git's state ``git``, inside the
        caller's transaction. The full-text tables are filled once every row is in (:mod:`.index_text`)."""
        for name in ("records", "proposals", "files", "records_fts", "proposals_fts", "meta"):
            self.db.execute(f"DROP TABLE IF EXISTS {name}")
        for trig in ("records_ai", "records_ad", "records_au", "proposals_ai", "proposals_ad", "proposals_au"):
            self.db.execute(f"DROP TRIGGER IF EXISTS {trig}")
        for stmt in _split_sql(_SCHEMA):  # the tables, without the triggers (those of `files` went with it)
            self.db.execute(stmt)
        self.db.execute(f"PRAGMA user_version={STORE_VERSION}")
        built = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
        # the root as shown (`<redacted-path:…>` when a name of it bears a secret: never stored in clear); only
        # people read it (nothing in memzoi does), as a hint of whose store this is
        from ..judge.pathsafety import shown_local_path  # noqa: PLC0415 lazy: start-up

        shown = shown_local_path(self.root)
        meta = [("built_at", built), ("project_root", shown), ("schema", str(SCHEMA_VERSION))]
        meta += [("stamp", stamp), ("git", git), (TO_FILL, "to fill"), (GEN_KEY, str(random.getrandbits(48)))]
        self.db.executemany("INSERT INTO meta(key, value) VALUES (?, ?)", meta)

    def put_rows(self, made: list[Row], git: str) -> None:
        """Write the search rows a caller made with each file's one entry (the language server's scan,
        :attr:`memzoi.stores.fileentry.FileEntry.row`), in one transaction; each replaces its file's row. An index
        never built, or made under another stamp, is first made anew and empty, under git's state ``git`` (what
        the caller's visibility answers were asked under, :func:`memzoi.stores.index_fresh.git_state`): the
        :meth:`refresh` that follows fills its full-text tables and indexes only the files without a current row."""
        from .index_fresh import index_stamp  # noqa: PLC0415 lazy: start-up
        from .index_rows import keep_verified  # noqa: PLC0415 lazy: start-up

        fresh = not self.exists or self._stamp_problem() is not None
        if not fresh:
            keep_verified(self.db, self.root, made)
        with _Tx(self.db):
            if fresh:
                self._recreate(index_stamp(self.root), git)
            self._delete([r["file"]["path"] for r in made])
            insert_rows(self.db, made)
        self.schema_problem = None

    def update_paths(self, paths: Iterable[str | os.PathLike[str]], progress: Progress | None = None) -> RebuildResult:
        """Re-index the given files (absolute or relative to the project root); missing ones are removed.
        One batch of git calls and one transaction for all of them."""
        self._require()
        started = time.perf_counter()
        present: list[Path] = []
        gone: list[Path] = []
        for p in paths:
            q = Path(p) if Path(p).is_absolute() else self.root / p
            (present if q.is_file() and not q.is_symlink() else gone).append(q)
        from .index_rows import keep_verified  # noqa: PLC0415 lazy: start-up

        rows, made = analyse_rows(self.root, present, progress, **self._supply())
        keep_verified(self.db, self.root, rows)
        with _Tx(self.db):
            before = generation(self.db)
            self._delete([self._rel(q) for q in present + gone])
            self._write_entries(made + [(str(q), None) for q in gone])
            result = insert_rows(self.db, rows)
            self._wrote = (before, generation(self.db))  # the rows' generation around this write, for a mark
        result.seconds = time.perf_counter() - started
        return result

    def refresh(
        self,
        progress: Progress | None = None,
        *,
        files: Iterable[str] | None = None,
        stat_of: Callable[[str], Stat | None] | None = None,
        walked: Callable[[], Listing | Found] | None = None,
    ) -> RebuildResult:
        """Bring the index up to date cheaply (:func:`memzoi.stores.index_fresh.stale`): re-index files that are new,
        whose bytes changed (by the one freshness rule, :mod:`memzoi.base.freshness`) or whose admission git's state
        changed; drop rows whose file is gone; rebuild an index never built or made under another stamp. ``files``
        and ``stat_of``: a caller's listing and stats (:func:`memzoi.stores.index_fresh.plane_of`); ``walked``: a
        listing started earlier (:class:`memzoi.stores.findlisting.Ahead`, :mod:`memzoi.stores.currentlisting`)."""
        from .currentlisting import write_stamps  # noqa: PLC0415 lazy: start-up
        from .index_fresh import plane_of, stale  # noqa: PLC0415 lazy: start-up

        listed = list(files) if files is not None else None
        self._judged = None
        if not self.exists or self._stamp_problem():
            if walked is not None:
                return self.rebuild(progress, files=walked().paths())
            if listed is None:
                return self.rebuild(progress)
            return self.rebuild(progress, files=plane_of(self.root, listed).paths())

        def planned() -> Plan:
            return stale(self.db, self.root, walked or plane_of(self.root, listed, stat_of))

        # rows a caller put (put_rows): their text is searchable from now on, filled while the plan is made
        plan = fill_beside(self.path, planned) if text_to_fill(self.db) else planned()
        self._judged = (plan.gen, bool(plan.changed or plan.gone))
        result, self._wrote = RebuildResult(), None
        if plan.changed or plan.gone:
            result = self.update_paths(plan.changed + [self.root / g for g in plan.gone], progress)
        if plan.restamp or plan.git_changed or plan.mark:  # after the re-judged rows are in
            with _Tx(self.db):
                write_stamps(self.db, plan, self._wrote)
        return result

    def rows_generation(self) -> str | None:
        """The generation of the rows (:func:`memzoi.stores.index_schema.generation`) of a built index whose text is
        searchable, else ``None``: a query made at it stands if :meth:`unchanged_since` holds after a refresh."""
        return None if not self.exists or text_to_fill(self.db) else generation(self.db)

    def unchanged_since(self, gen: str | None) -> bool:
        """True when the last :meth:`refresh` judged the rows at generation ``gen`` (no write came between) and
        re-indexed or dropped none: what was read at ``gen`` is what it left to serve (``memzoi search`` queries
        while find lists the files; a restamp or git's state changes nothing served)."""
        return gen is not None and self._judged == (gen, False)

    def refresh_querying(
        self, query: Callable[[Index], Any], progress: Progress | None = None, walked: Any = None
    ) -> Any:
        """:meth:`refresh`, with ``query(self)`` made first on the index as it is (while find lists the files): its
        answer where the refresh changed none of the rows it judged (:meth:`unchanged_since`), else ``None`` (also
        after a query that raised: asked again, it says what is wrong)."""
        gen, early = self.rows_generation(), None
        with contextlib.suppress(Exception):  # asked again after the refresh
            early = query(self) if gen is not None else None
        self.refresh(progress, walked=walked)
        return early if self.unchanged_since(gen) else None

    def drift(self) -> Drift:
        """Compare the index with the git plane (``memzoi doctor``): :func:`memzoi.stores.index_drift.drift_of`.
        Never writes."""
        from .index_drift import drift_of  # noqa: PLC0415 lazy: start-up

        return drift_of(self.db, self.root, self.schema_problem)

    def _require(self) -> None:
        if self.schema_problem:
            raise IndexUnavailable(self.schema_problem)

    def _rel(self, p: Path) -> str:
        """The key of ``p`` in the index (:func:`memzoi.stores.index_rows.index_key`)."""
        from .index_rows import index_key  # noqa: PLC0415 lazy: start-up

        return index_key(self.root, p)

    def _supply(self) -> dict[str, Any]:
        """How this index's files are analysed: :func:`memzoi.stores.index_build.analyse_rows`'s keywords."""
        return {"premade": self.premade, "workers": self.workers, "helper": self.helper}

    def _write_entries(self, made: list[tuple[str, Entry | None]]) -> None:
        """Write the store entries made with the rows (:class:`memzoi.stores.store.EntryRows`: the rows
        :func:`~memzoi.stores.store.write_entries` writes, under the context stamp of the project's configuration, as
        ``memzoi check`` looks them up), inside the caller's transaction: a file's search rows and its entry are
        written together, from one analysis."""
        if made:
            kept = EntryRows(self._entry_stamp())
            for path, entry in made:
                kept.add(path, entry)
            write_rows(self.db, kept.rows, kept.drop)

    def _entry_stamp(self) -> str:
        """The context stamp of the project's configuration, under which ``memzoi check`` looks the entries up."""
        from ..judge.config import load_config  # noqa: PLC0415 lazy: start-up
        from ..judge.workspace import MEMZOI_DIR  # noqa: PLC0415 lazy: start-up
        from .verdictcache import context_stamp  # noqa: PLC0415 lazy: start-up

        return context_stamp(load_config(self.root / MEMZOI_DIR).config)

    def _delete(self, rels: list[str]) -> None:
        for table in ("records", "proposals", "files"):
            self.db.executemany(f"DELETE FROM {table} WHERE path = ?", [(r,) for r in rels])


def indexed_facts(memzoi_dir: Path) -> dict[str, FileFacts]:
    """Facts of every indexed file of the project owning ``memzoi_dir`` (absolute path → facts), after a
    :meth:`Index.refresh` (only changed files are re-read); empty when the index was never built or cannot be
    used (the caller then analyses the files). ``memzoi check`` gives it to
    :class:`~memzoi.project.crosscheck.CrossFileCheck` as its facts source. Never raises."""
    root = memzoi_dir.parent
    try:
        if not store_path(root).exists():
            return {}
        with Index(root) as ix:
            if ix.schema_problem or not ix.exists:
                return {}
            ix.refresh()
            return ix.stored_facts()
    except (IndexUnavailable, sqlite3.Error, OSError, ValueError, KeyError, TypeError):
        return {}


__all__ = [
    "Index",
    "IndexUnavailable",
    "SearchHit",
    "indexed_facts",
]
