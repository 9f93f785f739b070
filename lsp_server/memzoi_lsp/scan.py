"""The background workspace scan: list a project's records and packets, analyse them off the event loop in
chunks, and publish their diagnostics as it goes, with work-done progress when the client supports it.

``initialize`` never waits for this (B27): the scan starts from ``initialized`` and requests made meanwhile get
best-effort answers from what is known so far. Only the project's ``.memzoi`` folder is walked
(B30: never the workspace folder itself).
"""

from __future__ import annotations

import asyncio
import logging
import time
import uuid
from typing import TYPE_CHECKING

from lsprotocol import types
from pygls.capabilities import get_capability

from memzoi.workspace import linked_plane, linked_plane_message

from . import diagnostics


if TYPE_CHECKING:
    from .server import MemzoiServer, Project

log = logging.getLogger("memzoi_lsp.scan")
CHUNK = 100


async def scan_project(ls: "MemzoiServer", project: "Project") -> None:
    """Scan one project (see the module docstring). Cancelled cleanly on shutdown."""
    loop = asyncio.get_running_loop()
    started = time.perf_counter()
    token: str | None = None
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
        uris = project.take_listing(await loop.run_in_executor(ls.scan_executor, project.scan_files))
        for i in range(0, len(uris), CHUNK):
            chunk = uris[i : i + CHUNK]
            await loop.run_in_executor(ls.scan_executor, _analyse, ls, chunk)
            for uri in chunk:
                if ls.docs.is_open(uri):
                    continue  # the editor's text governs an open document
                snap = ls.docs.snapshot(uri)  # never raises: a failed analysis is an `internal_error` finding
                if snap is None:
                    continue
                try:
                    ls.feed(project, uri, snap.analysis)
                except Exception as err:  # the barrier: one file's failure never stops the scan
                    from memzoi.barrier import log_internal_error

                    log_internal_error(err, uri)
                if not ls.pull_diagnostics:
                    diagnostics.publish(ls, uri)  # guarded too: an `internal_error` diagnostic at worst
            if token:
                done = min(i + CHUNK, len(uris))
                ls.work_done_progress.report(
                    token,
                    types.WorkDoneProgressReport(
                        message=f"{done}/{len(uris)} files", percentage=int(100 * done / max(1, len(uris)))
                    ),
                )
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
    log.info("scanned %s: %d files in %.0f ms", project.root, len(project.files), elapsed)
    if not ls.stopping:
        ls.window_log_message(
            types.LogMessageParams(
                type=types.MessageType.Info,
                message=f"memzoi-lsp: scanned {len(project.files)} files of {project.root} in {elapsed:.0f} ms",
            )
        )


def _analyse(ls: "MemzoiServer", uris: list[str]) -> None:
    for uri in uris:
        if ls.stopping:
            return
        ls.docs.snapshot(uri)  # fills the cache (a failed analysis included); publishing happens on the event loop
