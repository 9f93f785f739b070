"""The first stage of each file of a project for a long-lived caller that keeps it (the language server's scan):
:class:`memzoi.stores.firststage.FirstStage`, the one first-stage type ``memzoi check`` uses too, taken from the
project's store when it vouches for the file's bytes, else analysed once.

:func:`cached_stages` makes them on the caller's worker thread for the files the project's
:class:`~memzoi.stores.verdictcache.ProjectCache` vouches for, from their entries (:func:`memzoi.stores.firststage.from_payload`,
as ``check`` does). :func:`analyse` does every other file, in worker processes for many: each file is read and
made into its entry by the one routine :func:`memzoi.stores.fileentry.make_entry` (:func:`~memzoi.stores.fileentry.entry_chunk`):
one analysis gives the first stage, its store entry and, for a record or a packet, its search rows; nothing of it is analysed again, and no analysis is kept. Never raises for a file: a failed analysis is an
``internal_error`` finding (:mod:`memzoi.judge.barrier`), an unreadable file is ``None``.
"""

from __future__ import annotations

import functools
import logging
import os
import sys
from collections.abc import Generator, Iterator
from typing import Any

from ..project.admission import GitVisibility
from ..project.verdict import ProjectContext
from ..stores.fileentry import FileEntry, entry_chunk
from ..stores.firststage import FirstStage, from_payload
from ..stores.store import path_key
from ..stores.verdictcache import ProjectCache, context_stamp
from .coldstart import PARALLEL_THRESHOLD, start_workers

log = logging.getLogger("memzoi.scan")


def open_cache(project_root: str | os.PathLike[str], ctx: ProjectContext) -> ProjectCache | None:
    """The verdict cache of the project at ``project_root`` under the configuration of ``ctx`` (the same database
    and keys as ``memzoi check``), nothing read yet: :func:`cached_stages` reads it chunk by chunk
    (:meth:`memzoi.stores.verdictcache.ProjectCache.prefetch`); ``None`` when it cannot be used. Never raises."""
    try:
        return ProjectCache.load(project_root, ctx.config, keys=())
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
    cache.prefetch([path_key(p) for p in paths])  # this chunk's entries, in one query
    out: list[FirstStage | None] = []
    for path in paths:
        try:
            payload = cache.lookup(path)
            # the stat the lookup vouched with (no second stat): a file changed after it shows as not current
            vouched = cache.vouched(path) if payload is not None else None
            hit = None
            if payload is not None and vouched is not None:
                hit = from_payload(path, md, payload, ctx.now, links, vouched[0], vouched[2].hex()[:32])
        except Exception:  # noqa: BLE001 - an unreadable entry: the file is analysed
            hit = None
        out.append(hit)
    return out


def cold_start(
    paths: list[str], cache: ProjectCache | None, project_root: str | os.PathLike[str] | None = None
) -> bool:
    """True when ``cache`` (:func:`open_cache`'s) can vouch for none of ``paths``, every file of a project's scan:
    it holds no entry under its stamp, or there is none (a first scan, or one after a change of the tool or the
    configuration). :func:`cached_stages` would then give ``None`` for each, so the caller goes straight to
    :func:`analyse`; for :data:`PARALLEL_THRESHOLD` paths or more, the fork server of its workers is started now
    (:func:`memzoi.base.parallel.start_helper`), its imports running beside the caller's own work until the first
    chunk is sent (issue 29: cold server scan). A scan that is not cold ends the pre-filling of the project at
    ``project_root`` (:mod:`memzoi.runs.prefill`), if one runs. Run it where ``cache`` was opened. Never raises."""
    try:
        cold = cache is None or cache.holds_none()
    except Exception:  # noqa: BLE001 - the cache never breaks a scan: then it is asked file by file
        cold = False
    prefill = _prefill()
    if not cold and prefill is not None and project_root is not None:
        prefill.cancel(os.fspath(project_root))
    if cold and len(paths) >= PARALLEL_THRESHOLD:
        start_workers()  # a no-op when it runs already (memzoi.runs.coldstart.prestart)
    return cold


def analyse(
    paths: list[str], ctx: ProjectContext, *, index_root: str | os.PathLike[str], workers: int | None = None
) -> Iterator[FileEntry | None]:
    """The entry of each absolute path of ``paths``, in order, one at a time as they are done: in worker
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
    taken = _prefilled(jobs, ctx, index_root)
    usable = taken[0] if taken is not None else set()
    left = [job for job in jobs if job[0] not in usable] if usable else jobs
    n = min(cpu_count(), 8) if workers is None else workers
    chunksize = max(16, min(100, len(left) // (max(1, n) * 8)))
    pool: ChunkPool[tuple[str, str], FileEntry | None] = ChunkPool(
        functools.partial(entry_chunk, now=ctx.now, root=str(index_root)),
        workers=n,
        chunksize=chunksize,
        start_at=PARALLEL_THRESHOLD,
        helper=True,
        # the caller publishes as it takes results: never every result held at once (a few chunks more while it
        # takes the pre-filled files first, so the workers do not wait meanwhile)
        ahead=2 * max(1, n) + min(4, len(usable) // chunksize),
        total=len(left),  # guided: the last chunks shrink, so the workers finish together (as `memzoi rebuild`'s)
    )
    for job in left:
        pool.add(job)
    if taken is None:
        yield from pool.iter_results()
        return
    results, received = pool.iter_results(), taken[1]
    held: dict[str, FileEntry | None] = {}
    try:
        for path, visibility in jobs:
            if path not in usable:
                yield next(results)
                continue
            if path not in held:
                for got_path, got in received:  # in the listing's order, as the jobs: one at a time
                    held[got_path] = got
                    if got_path == path:
                        break
            if path in held:
                yield held.pop(path)
            else:  # lost on the way: made here
                yield entry_chunk([(path, visibility)], now=ctx.now, root=str(index_root))[0]
    finally:
        for done in (results, received):  # the workers left stopped (the caller closed this early), else ended
            if isinstance(done, Generator):
                done.close()


def _prefill() -> Any:
    """:mod:`memzoi.runs.prefill` when it is loaded, else ``None``: only :func:`memzoi.runs.coldstart.prefork`
    loads it, to start one, so a scan without one neither loads nor asks it."""
    return sys.modules.get("memzoi.runs.prefill")


def _prefilled(
    jobs: list[tuple[str, str]], ctx: ProjectContext, index_root: str | os.PathLike[str]
) -> tuple[set[str], Iterator[tuple[str, FileEntry | None]]] | None:
    """What the pre-filling of the project at ``index_root`` made (:func:`memzoi.runs.prefill.claim`) that the scan
    can take for ``jobs``: ``(paths, entries)``, the files made under ``ctx``'s configuration with the git
    visibility the scan asked (the others are made again by the scan's workers), or ``None``."""
    prefill = _prefill()
    claimed = prefill.claim(os.fspath(index_root)) if prefill is not None else None
    if claimed is None:
        return None
    stamp, made, entries = claimed
    usable = (
        {path for path, visibility in jobs if made.get(path) == visibility}
        if stamp == context_stamp(ctx.config)
        else set()
    )
    if not usable:
        if isinstance(entries, Generator):
            entries.close()
        return None
    log.info("%d of %d files were analysed ahead of the scan", len(usable), len(jobs))
    return usable, entries


__all__ = ["PARALLEL_THRESHOLD", "analyse", "cached_stages", "cold_start", "open_cache"]
