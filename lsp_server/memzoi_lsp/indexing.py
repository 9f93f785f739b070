"""The project's derived search index (:class:`memzoi.index.Index`, SQLite + FTS5) as the server keeps it.

All index work runs on the server's single scan thread, so the connection is never used concurrently: after
the first scan the index is refreshed (rebuilt when it never existed), and every file change the server sees is
applied with :meth:`~memzoi.index.Index.update_paths`. Workspace symbols and ``memzoi.search`` query it; while
it is not ready they fall back to the scan's in-memory analyses.
"""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path
from typing import TYPE_CHECKING, Any

from memzoi.index import Index, IndexUnavailable, SearchHit

if TYPE_CHECKING:
    from .server import MemzoiServer, Project

log = logging.getLogger("memzoi_lsp.indexing")


def _open(project: "Project") -> Index | None:
    if project.index is None:
        try:
            project.index = Index(project.root, workers=1)  # no worker processes forked from the server
        except IndexUnavailable as err:
            log.warning("%s", err)
            return None
    return project.index


def _refresh(project: "Project") -> None:
    index = _open(project)
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
        await loop.run_in_executor(ls.scan_executor, _refresh, project)
    except Exception as err:  # a broken index degrades search, never the server
        log.warning("index refresh failed for %s: %s", project.root, err)


def _update(project: "Project", paths: list[Path]) -> None:
    index = _open(project)
    if index is None or not project.index_ready:
        return
    index.update_paths(sorted({p.resolve() for p in paths}))  # one row per file: duplicates would collide


def update(ls: "MemzoiServer", project: "Project", paths: list[Path]) -> None:
    """Queue a re-index of ``paths`` (changed, created or deleted files) on the scan thread."""
    if ls.stopping or not paths or ls.loop is None:
        return

    async def run() -> None:
        try:
            await ls.loop.run_in_executor(ls.scan_executor, _update, project, paths)
        except Exception as err:
            log.warning("index update failed: %s", err)

    ls.spawn(run())


def _rebuild(project: "Project") -> dict[str, Any]:
    index = _open(project)
    if index is None:
        return {"error": {"code": "index_unavailable", "message": "the index cannot be opened; see the server log"}}
    result = index.rebuild()
    project.index_ready = True
    return {"project_root": str(project.root), "files": result.files, "records": len(result.record_ids),
            "proposals": len(result.proposal_ids), "refused": result.refused, "seconds": round(result.seconds, 3)}


async def rebuild(ls: "MemzoiServer", project: "Project") -> dict[str, Any]:
    """Recreate the index of ``project`` from the git plane."""
    return await asyncio.get_running_loop().run_in_executor(ls.scan_executor, _rebuild, project)


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
