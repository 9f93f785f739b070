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
import os
from collections.abc import Iterator
from typing import Any

from ..project.admission import GitVisibility
from ..project.verdict import ProjectContext
from ..stores.fileentry import FileEntry, entry_chunk
from ..stores.firststage import FirstStage, from_payload
from ..stores.store import path_key
from ..stores.verdictcache import ProjectCache

#: From this many files to analyse on, :func:`analyse` uses worker processes (below it, their start costs more).
PARALLEL_THRESHOLD = 300


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
    n = min(cpu_count(), 8) if workers is None else workers
    pool: ChunkPool[tuple[str, str], FileEntry | None] = ChunkPool(
        functools.partial(entry_chunk, now=ctx.now, root=str(index_root)),
        workers=n,
        chunksize=max(16, min(100, len(jobs) // (max(1, n) * 8))),
        start_at=PARALLEL_THRESHOLD,
        helper=True,
        ahead=2 * max(1, n),  # the caller publishes as it takes results: never every result held at once
    )
    for job in jobs:
        pool.add(job)
    yield from pool.iter_results()


__all__ = ["PARALLEL_THRESHOLD", "analyse", "cached_stages", "open_cache"]
