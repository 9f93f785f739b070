"""The project's derived search index as the server keeps it: the core's index methods of
:class:`~memzoi.runs.projectstate.ProjectState` (``refresh_index``, ``reindex``, ``rebuild_index``, ``search``), run on
the server's single scan thread so the connection is never used concurrently.

After the first scan the index is refreshed (rebuilt when it never existed), and every file change the server
sees is applied. Rows are built from the server's own analyses (the document cache the scan and the watchers
fill, :meth:`~memzoi_lsp.documents.Documents.on_disk`), so a file is analysed once whether it is diagnosed or
indexed. Workspace symbols and ``memzoi.search`` query it; while it is not ready they fall back to the scan's
in-memory analyses.
"""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path
from typing import TYPE_CHECKING, Any

from lsprotocol import types

from memzoi.base.views import Frontmatter
from memzoi.judge.workspace import Role
from memzoi.stores.index import IndexUnavailable, SearchHit

if TYPE_CHECKING:
    from .project import Project
    from .session import IndexSession, IndexUpdateSession, SymbolSession
    from .tasks import Tasks

log = logging.getLogger("memzoi_lsp.indexing")


async def refresh(ls: IndexSession, project: Project) -> None:
    """Bring the project's index up to date (after the first scan)."""
    try:
        await asyncio.get_running_loop().run_in_executor(ls.scan_executor, project.refresh_index, ls.docs.on_disk)
    except IndexUnavailable as err:
        log.warning("%s", err)
    except Exception as err:  # a broken index degrades search, never the server
        log.warning("index refresh failed for %s: %s", project.root, err)


def update(ls: IndexUpdateSession, project: Project, paths: list[Path], tasks: Tasks) -> None:
    """Queue a re-index of ``paths`` (changed, created or deleted records and packets) on the scan thread, as one
    of ``tasks`` (the caller's: the watch feature's)."""
    loop = ls.loop
    if ls.stopping or not paths or loop is None:
        return

    async def run() -> None:
        try:
            await loop.run_in_executor(ls.scan_executor, project.reindex, paths, ls.docs.on_disk)
        except Exception as err:
            log.warning("index update failed: %s", err)

    tasks.spawn(run())


async def rebuild(ls: IndexSession, project: Project) -> dict[str, Any]:
    """Recreate the index of ``project`` from the git plane."""
    try:
        return await asyncio.get_running_loop().run_in_executor(
            ls.scan_executor, project.rebuild_index, ls.docs.on_disk
        )
    except IndexUnavailable as err:
        log.warning("%s", err)
        return {"error": {"code": "index_unavailable", "message": "the index cannot be opened; see the server log"}}


async def search(ls: IndexSession, project: Project, query: str, limit: int = 50) -> list[SearchHit] | None:
    """Full-text hits for ``query`` (``None`` when the index is not ready yet)."""
    try:
        return await asyncio.get_running_loop().run_in_executor(ls.scan_executor, project.search, query, limit)
    except Exception as err:
        log.warning("index search failed: %s", err)
        return None


def close(project: Project) -> None:
    """Close the index connection (shutdown)."""
    project.close()


def workspace_symbols(ls: SymbolSession, query: str, limit: int = 200) -> list[types.WorkspaceSymbol]:
    """Records and packets whose id, title or body contains every word of ``query`` (case-insensitive), from the
    scan's analyses (used while the index is not ready)."""
    words = [w.casefold() for w in query.split()]
    out: list[types.WorkspaceSymbol] = []
    for uri in ls.known_uris():
        snap = ls.docs.snapshot(uri)
        if snap is None:
            continue
        title = Frontmatter(snap.analysis.document.data).title or snap.analysis.placement.identity or ""
        hay = " ".join((title, str(snap.analysis.placement.identity or ""), snap.analysis.document.body)).casefold()
        if all(w in hay for w in words):
            role = snap.analysis.placement.role
            out.append(
                types.WorkspaceSymbol(
                    name=title,
                    kind=types.SymbolKind.File if role is Role.RECORD else types.SymbolKind.Event,
                    location=types.Location(
                        uri=uri,
                        range=types.Range(
                            start=types.Position(line=0, character=0), end=types.Position(line=0, character=0)
                        ),
                    ),
                    container_name=str(snap.analysis.placement.identity or ""),
                )
            )
            if len(out) >= limit:
                break
    return out
