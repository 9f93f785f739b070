"""The project's derived search index (:class:`memzoi.index.Index`, SQLite + FTS5) as the server keeps it.

All index work runs on the server's single scan thread, so the connection is never used concurrently: after
the first scan the index is refreshed (rebuilt when it never existed), and every file change the server sees is
applied with :meth:`~memzoi.index.Index.update_paths`. Rows are built from the server's own analyses (the
document cache the scan and the watchers fill), so a file is analysed once whether it is diagnosed or indexed. Workspace symbols and ``memzoi.search`` query it; while
it is not ready they fall back to the scan's in-memory analyses.
"""

from __future__ import annotations

import asyncio
import logging
import os
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from memzoi.admission import GitVisibility
from memzoi.index import Index, IndexUnavailable, SearchHit
from memzoi.index_rows import index_verdict
from memzoi.verdict import ProjectContext

if TYPE_CHECKING:
    from .server import MemzoiServer, Project

log = logging.getLogger("memzoi_lsp.indexing")


def _judged(ls: "MemzoiServer", project: "Project", files: list[Path]) -> Iterator[tuple[Path, bytes, os.stat_result, Any]]:
    """The index's verdicts of ``files`` from what the server holds: each file's analysis from the document cache
    (analysed once, by the scan or the watcher), judged with the project's git answers and its own rules (not the
    editor's settings, which are per user: the index is what ``memzoi rebuild`` would write)."""
    unasked = [p for p in files if project.git.visibility(p) is GitVisibility.UNKNOWN]
    if unasked:  # the scan and the watchers ask git for what they list; anything else is asked here, in one batch
        project.git.ask(unasked)
    ctx = ProjectContext.of(project.memzoi_dir, git=project.git)
    for path in files:
        found = ls.docs.on_disk(path)
        if found is not None:
            data, st, analysis = found
            yield path, data, st, index_verdict(path, analysis, ctx)


def _open(ls: "MemzoiServer", project: "Project") -> Index | None:
    if project.index is None:
        try:
            # No worker processes forked from the server, and no second analysis: rows come from its verdicts.
            project.index = Index(project.root, workers=1, judged=lambda files: _judged(ls, project, files))
        except IndexUnavailable as err:
            log.warning("%s", err)
            return None
    return project.index


def _refresh(ls: "MemzoiServer", project: "Project") -> None:
    index = _open(ls, project)
    if index is None:
        return
    if index.schema_problem:
        index.rebuild()
    else:
        index.refresh()
    project.index_ready = True


async def refresh(ls: "MemzoiServer", project: "Project") -> None:
    """Bring the project's index up to date (after the first scan)."""
    loop = asyncio.get_running_loop()
    try:
        await loop.run_in_executor(ls.scan_executor, _refresh, ls, project)
    except Exception as err:  # a broken index degrades search, never the server
        log.warning("index refresh failed for %s: %s", project.root, err)


def _update(ls: "MemzoiServer", project: "Project", paths: list[Path]) -> None:
    index = _open(ls, project)
    if index is None or not project.index_ready:
        return
    index.update_paths(sorted({p.resolve() for p in paths}))  # one row per file: duplicates would collide


def update(ls: "MemzoiServer", project: "Project", paths: list[Path]) -> None:
    """Queue a re-index of ``paths`` (changed, created or deleted files) on the scan thread."""
    if ls.stopping or not paths or ls.loop is None:
        return

    async def run() -> None:
        try:
            await ls.loop.run_in_executor(ls.scan_executor, _update, ls, project, paths)
        except Exception as err:
            log.warning("index update failed: %s", err)

    ls.spawn(run())


def _rebuild(ls: "MemzoiServer", project: "Project") -> dict[str, Any]:
    index = _open(ls, project)
    if index is None:
        return {"error": {"code": "index_unavailable", "message": "the index cannot be opened; see the server log"}}
    result = index.rebuild()
    project.index_ready = True
    return {"project_root": str(project.root), "files": result.files, "records": len(result.record_ids),
            "proposals": len(result.proposal_ids), "refused": result.refused, "seconds": round(result.seconds, 3)}


async def rebuild(ls: "MemzoiServer", project: "Project") -> dict[str, Any]:
    """Recreate the index of ``project`` from the git plane."""
    return await asyncio.get_running_loop().run_in_executor(ls.scan_executor, _rebuild, ls, project)


def _search(project: "Project", query: str, limit: int) -> list[SearchHit] | None:
    if not project.index_ready or project.index is None:
        return None
    return project.index.search(query, limit=limit)


async def search(ls: "MemzoiServer", project: "Project", query: str, limit: int = 50) -> list[SearchHit] | None:
    """Full-text hits for ``query`` (``None`` when the index is not ready yet)."""
    try:
        return await asyncio.get_running_loop().run_in_executor(ls.scan_executor, _search, project, query, limit)
    except Exception as err:
        log.warning("index search failed: %s", err)
        return None


def close(project: "Project") -> None:
    """Close the index connection (shutdown)."""
    if project.index is not None:
        try:
            project.index.close()
        except Exception:
            pass
        project.index = None
