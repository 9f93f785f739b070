"""The background workspace scan: list a project's records and packets, take each file's first stage off the
event loop in chunks (from the verdict cache ``memzoi check`` writes, or analysed once and added to it), and
publish their diagnostics as it goes, with work-done progress when the client supports it. The open documents
of the project are published before the scan starts. Closed files are then held as compact verdicts
(:mod:`memzoi.scanverdicts`, diagnosed by :mod:`.closed`), not analyses.

``initialize`` never waits for this (B27): the scan starts from ``initialized`` and requests made meanwhile get
best-effort answers from what is known so far. Only the project's ``.memzoi`` folder is walked
(B30: never the workspace folder itself).
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import time
import uuid
from typing import TYPE_CHECKING

from lsprotocol import types
from pygls.capabilities import get_capability

from memzoi.workspace import linked_plane, linked_plane_message

from . import diagnostics
from .documents import uri_to_path


if TYPE_CHECKING:
    from .server import MemzoiServer, Project

log = logging.getLogger("memzoi_lsp.scan")
CHUNK = 100


async def scan_project(ls: "MemzoiServer", project: "Project") -> None:
    """Scan one project (see the module docstring). Cancelled cleanly on shutdown."""
    from memzoi.scanverdicts import open_cache
    from memzoi.verdict import ProjectContext

    loop = asyncio.get_running_loop()
    started = time.perf_counter()
    publish_open(ls, project)
    token: str | None = None
    cached = 0  # files whose first stage came from the verdict cache
    if get_capability(ls.client_capabilities, "window.work_done_progress", False):
        token = f"memzoi-scan-{uuid.uuid4()}"
        try:
            await asyncio.wait_for(ls.work_done_progress.create_async(token), timeout=5)
            ls.work_done_progress.begin(
                token, types.WorkDoneProgressBegin(title="Memzoi: scanning .memzoi", percentage=0, cancellable=False)
            )
        except Exception as err:  # the client refused a token: scan without progress
            log.info("no work-done progress: %s", err)
            token = None
    try:
        linked = linked_plane(project.memzoi_dir)
        if linked:  # nothing below it is listed (memzoi check reports it as canonical_path)
            log.warning("%s", linked_plane_message(linked))
        paths = await loop.run_in_executor(ls.scan_executor, project.listing)
        uris = project.adopt(paths)
        ctx = ProjectContext.of(project.memzoi_dir, git=project.git)  # as `check`'s first stage: git explains
        cache = await loop.run_in_executor(ls.scan_executor, open_cache, project.root, ctx)
        links: dict = {}
        for i in range(0, len(uris), CHUNK):
            if ls.stopping:
                return
            chunk = list(zip(uris[i : i + CHUNK], paths[i : i + CHUNK]))
            scanned = await loop.run_in_executor(ls.scan_executor, _first_stages, ls, chunk, ctx, cache, links)
            _take(ls, project, chunk, scanned)
            cached += sum(1 for got in scanned if got is not None and got.analysis is None)
            if token:
                done = min(i + CHUNK, len(uris))
                ls.work_done_progress.report(
                    token,
                    types.WorkDoneProgressReport(
                        message=f"{done}/{len(uris)} files", percentage=int(100 * done / max(1, len(uris)))
                    ),
                )
        if cache is not None:  # the scan saw every file of the project: entries of files gone are dropped
            await loop.run_in_executor(ls.scan_executor, cache.save, True)
        ls.on_project_scanned(project)
        from . import indexing

        await indexing.refresh(ls, project)
    finally:
        project.scanned.set()
        if token and not ls.stopping:
            ls.work_done_progress.end(
                token, types.WorkDoneProgressEnd(message=f"{len(project.files)} files")
            )
    elapsed = (time.perf_counter() - started) * 1000
    log.info("scanned %s: %d files in %.0f ms (%d from the verdict cache)", project.root, len(project.files), elapsed,
             cached)
    if not ls.stopping:
        ls.window_log_message(
            types.LogMessageParams(
                type=types.MessageType.Info,
                message=f"memzoi-lsp: scanned {len(project.files)} files of {project.root} in {elapsed:.0f} ms"
                f" ({cached} from the verdict cache)",
            )
        )


def publish_open(ls: "MemzoiServer", project: "Project") -> None:
    """Publish the open documents of ``project`` now, before its scan does any work: the first diagnostics never
    wait for the workspace (cross-file findings follow when the scan is done, :meth:`MemzoiServer.on_project_scanned`)."""
    if ls.pull_diagnostics:
        return  # the client pulls an open document's diagnostics itself; nothing of the scan delays the answer
    for uri in ls.docs.open_uris():
        path = uri_to_path(uri)
        if path is not None and project.contains(path):
            diagnostics.publish(ls, uri)


def _first_stages(ls: "MemzoiServer", chunk: list[tuple[str, str]], ctx, cache, links: dict) -> list:
    """On the scan thread: each file's compact first stage (:func:`memzoi.scanverdicts.first_stages`, from the
    verdict cache or analysed once); the analyses made go to the document cache, where the index finds them."""
    from memzoi.scanverdicts import first_stages

    if ls.stopping:
        return []
    scanned = first_stages([p for _, p in chunk], ctx, cache, links)
    for (uri, _), got in zip(chunk, scanned):
        if got is not None and got.analysis is not None and got.digest and not ls.docs.is_open(uri):
            ls.docs.remember(uri, got.digest, got.analysis)  # an open document's entry is its editor text's
    return scanned


def _take(ls: "MemzoiServer", project: "Project", chunk: list[tuple[str, str]], scanned: list) -> None:
    """On the event loop: keep each file's compact verdict, feed its facts to the cross-file workspace and
    publish it (open documents keep the editor's text)."""
    # One context per chunk, judged in this one turn of the loop: the settings, the configuration and the ledger
    # cannot change within it, so the ledger is read once for the chunk, not stamped once per file.
    ctx = dataclasses.replace(ls.context(project), ledger=project.ledger.settled())
    for (uri, _), got in zip(chunk, scanned):
        if got is None:
            continue  # unreadable, or changing while read: a watcher event or a request analyses it
        current = got.verdict.current()  # else changed since it was read (a watcher may have taken it in)
        if current:
            project.verdicts[uri] = got.verdict
        if ls.docs.is_open(uri):
            continue  # the editor's text governs an open document
        try:
            if current:
                project.feed(uri, got.verdict.facts)
            else:  # what is on disk now, analysed as a request would (never raises: the barrier is inside)
                snap = ls.docs.snapshot(uri)
                if snap is not None:
                    project.feed(uri, snap.analysis)
        except Exception as err:  # the barrier: one file's failure never stops the scan
            from memzoi.barrier import log_internal_error

            log_internal_error(err, uri)
        if not ls.pull_diagnostics:  # guarded too: an `internal_error` diagnostic at worst
            diagnostics.publish(ls, uri, (project, got.verdict, uri) if current else None, ctx)
