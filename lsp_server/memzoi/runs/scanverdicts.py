"""The first stage of each file of a project for a long-lived caller that keeps it (the language server's scan):
:class:`memzoi.stores.firststage.FirstStage`, the one first-stage type ``memzoi check`` uses too, taken from the
project's store when it vouches for the file's bytes, else analysed once.

:func:`cached_stages` makes them on the caller's worker thread for the files the project's
:class:`~memzoi.stores.verdictcache.ProjectCache` vouches for, from their entries (:func:`memzoi.stores.firststage.from_payload`,
as ``check`` does). :func:`analyse` does every other file, in worker processes for many: each file is read and
analysed once by the one routine :func:`memzoi.stores.firststage.analyse_file` (:func:`scan_chunk`), and that one
analysis gives its three products, the first stage, its store entry and, for a record or a packet, its index
row; nothing of it is analysed again, and no analysis is kept. Never raises for a file: a failed analysis is an
``internal_error`` finding (:mod:`memzoi.judge.barrier`), an unreadable file is ``None``.
"""

from __future__ import annotations

import dataclasses
import functools
import os
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from ..judge.workspace import Placement, place
from ..project.admission import GitVisibility
from ..project.gitfacts import GitFacts
from ..project.verdict import ProjectContext, verdict_of
from ..stores.firststage import Entry, FirstStage, analyse_file, failed_stage, from_payload, lstamp
from ..stores.index import pack_row
from ..stores.index_rows import StatStamp, index_key, index_row, index_verdict
from ..stores.streamedcache import StreamedCache
from ..stores.verdictcache import ProjectCache, read_stable
from .projectstate import indexed

#: From this many files to analyse on, :func:`analyse` uses worker processes (below it, their start costs more).
PARALLEL_THRESHOLD = 300


@dataclass(frozen=True, slots=True)
class Scanned:
    """One file analysed by :func:`scan_chunk`: its first stage; the store ``entry`` its caller keeps
    (:data:`memzoi.stores.firststage.Entry`; ``None`` when the analysis failed); and, for a record or a packet, its
    index ``row``: ``(size, mtime_ns, rows)`` of the bytes analysed, ``rows`` what ``memzoi rebuild`` would
    store for them (:func:`memzoi.stores.index_rows.index_row`), packed (:func:`memzoi.stores.index.pack_row`)."""

    verdict: FirstStage
    entry: Entry | None
    row: tuple[int, int, bytes] | None

    def __reduce__(self) -> tuple[Any, tuple[Any, ...]]:
        # One per file crosses the pipe from a worker: positional fields unpickle faster than slot state.
        return (Scanned, (self.verdict, self.entry, self.row))


def open_cache(project_root: str | os.PathLike[str], ctx: ProjectContext) -> ProjectCache | None:
    """The verdict cache of the project at ``project_root`` under the configuration of ``ctx`` (the same database
    and keys as ``memzoi check``), read chunk by chunk as :func:`cached_stages` asks
    (:class:`memzoi.stores.streamedcache.StreamedCache`); ``None`` when it cannot be used. Never raises."""
    try:
        return StreamedCache.open(project_root, ctx.config)
    except Exception:  # noqa: BLE001 - the cache never breaks a scan: it is only not used
        return None


def cached_stages(
    paths: list[str], ctx: ProjectContext, cache: ProjectCache | None, links: dict[Any, bool] | None = None
) -> list[FirstStage | None]:
    """The first stage of each absolute path of ``paths`` (files of the project ``ctx`` describes) that
    ``cache`` vouches for, read back from its entry as ``memzoi check`` does; ``None`` for each other file (to be
    analysed: :func:`analyse`). Reads no file; ``links`` caches symlink answers across calls. Never raises."""
    links = {} if links is None else links
    md = ctx.memzoi_dir
    if cache is None or md is None:
        return [None] * len(paths)
    if isinstance(cache, StreamedCache):
        cache.prefetch(paths)  # this chunk's entries, in one query
    out: list[FirstStage | None] = []
    for path in paths:
        try:
            stamp = lstamp(path)  # before the lookup: a file changed after it shows as not current
            payload = cache.lookup(path)
            hit = from_payload(path, md, payload, ctx.now, links, stamp) if payload is not None else None
        except Exception:  # noqa: BLE001 - an unreadable entry: the file is analysed
            hit = None
        out.append(hit)
    return out


def analyse(
    paths: list[str], ctx: ProjectContext, *, index_root: str | os.PathLike[str], workers: int | None = None
) -> Iterator[Scanned | None]:
    """:func:`scan_chunk` of each absolute path of ``paths``, in order, one at a time as they are done: in worker
    processes from :data:`PARALLEL_THRESHOLD` files on (from a fork server when the caller is threaded,
    :class:`memzoi.base.parallel.ChunkPool`; ``workers``: their number, default one per CPU up to 8), else here.
    ``ctx.git`` is asked once for the visibility of every path that it does not know yet (the index rows need
    it); ``ctx.now`` is the clock of retention findings; ``index_root`` is the project root the index keys are
    relative to. At most two chunks per worker are made ahead of the caller (:class:`memzoi.base.parallel.ChunkPool`'s
    ``ahead``). Closing the iterator early stops the workers."""
    from ..base.parallel import ChunkPool, cpu_count  # noqa: PLC0415 lazy: start-up

    git = ctx.git
    if git is not None:
        unasked = [p for p in paths if git.visibility(p) is GitVisibility.UNKNOWN]
        if unasked:
            git.ask(unasked)
    jobs = [(p, (git.visibility(p) if git is not None else GitVisibility.UNKNOWN).value) for p in paths]
    n = min(cpu_count(), 8) if workers is None else workers
    pool: ChunkPool[tuple[str, str], Scanned | None] = ChunkPool(
        functools.partial(scan_chunk, now=ctx.now, root=str(index_root)),
        workers=n,
        chunksize=max(16, min(100, len(jobs) // (max(1, n) * 8))),
        start_at=PARALLEL_THRESHOLD,
        helper=True,
        ahead=2 * max(1, n),  # the caller publishes as it takes results: never every result held at once
    )
    for job in jobs:
        pool.add(job)
    yield from pool.iter_results()


def scan_chunk(jobs: list[tuple[str, str]], *, now: datetime, root: str) -> list[Scanned | None]:
    """Worker: each job ``(absolute path, git visibility value)`` read once (:func:`memzoi.stores.verdictcache.
    read_stable`) and analysed once into its :class:`Scanned` (compact verdict, cache entry, index row for a
    record or packet), or ``None`` when the file cannot be read or changed while it was read. One project
    context per ``.memzoi`` directory, its git explaining stale attestations as ``check``'s does; ``root`` is
    the index's project root. A failing analysis gives an ``internal_error`` finding (:mod:`memzoi.judge.barrier`)."""
    contexts: dict[str, ProjectContext] = {}
    links: dict[Any, bool] = {}
    out: list[Scanned | None] = []
    base = Path(root)
    for path, visibility in jobs:
        try:
            out.append(_scan_one(path, GitVisibility(visibility), now, base, contexts, links))
        except Exception as err:  # the barrier: one file's bug never stops the others
            out.append(_failed(err, path, GitVisibility(visibility), base, contexts, now))
    return out


def _context(placement: Placement, now: datetime, contexts: dict[str, ProjectContext]) -> ProjectContext:
    md = os.path.abspath(placement.memzoi_dir) if placement.memzoi_dir is not None else ""
    ctx = contexts.get(md)
    if ctx is None:
        ctx = contexts[md] = ProjectContext.of(md or None, now=now, git=GitFacts(os.path.dirname(md)) if md else None)
    return ctx


def _scan_one(
    path: str,
    visibility: GitVisibility,
    now: datetime,
    root: Path,
    contexts: dict[str, ProjectContext],
    links: dict[str, Any],
) -> Scanned | None:
    read = read_stable(path)
    if read is None:
        return None
    data, stamp, checked = read
    placement = place(path)
    ctx = _context(placement, now, contexts)
    made = analyse_file(path, placement, ctx, links, read)
    row = None
    if indexed(path, placement):
        if ctx.git is not None:
            ctx.git.set_visibility({os.path.abspath(path): visibility})
        verdict = verdict_of(path, made.analysis, made.stage.first, dataclasses.replace(ctx, ledger=None))
        assert made.entry is not None
        rows = index_row(
            index_key(root, path),
            data,
            StatStamp(*stamp),
            verdict,
            facts=made.stage.facts,
            digest=made.entry[0],
            checked_ns=checked,
        )
        row = (stamp[0], stamp[1], pack_row(rows))
    return Scanned(made.stage, made.entry, row)


def _failed(
    err: BaseException,
    path: str,
    visibility: GitVisibility,
    root: Path,
    contexts: dict[str, ProjectContext],
    now: datetime,
) -> Scanned:
    stage, failed = failed_stage(err, path)
    row = None
    try:  # the index keeps the file as refused, with the finding, as `memzoi rebuild` does
        if indexed(path, failed.placement):
            data = Path(path).read_bytes()
            st = os.stat(path)
            ctx = _context(failed.placement, now, contexts)
            if ctx.git is not None:
                ctx.git.set_visibility({os.path.abspath(path): visibility})
            row = (
                st.st_size,
                st.st_mtime_ns,
                pack_row(index_row(index_key(root, path), data, st, index_verdict(Path(path), failed, ctx))),
            )
    except Exception:  # noqa: BLE001 - then the index analyses the file itself
        row = None
    return Scanned(stage, None, row)


__all__ = ["PARALLEL_THRESHOLD", "Scanned", "analyse", "cached_stages", "open_cache", "scan_chunk"]
