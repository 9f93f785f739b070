"""The background workspace scan: list a project's records and packets, take each file's first stage off the
event loop in chunks, and publish their diagnostics as it goes, with work-done progress when the client supports
it. The open documents of the project are published before the scan starts. First come the files the verdict
cache ``memzoi check`` writes vouches for (nothing read); then every other file is read and analysed once, in
worker processes when there are many (:func:`memzoi.runs.scanverdicts.analyse`), giving its compact verdict, its cache
entry and its index row, which the index refresh after the scan takes as they are. Closed files are then held
as compact verdicts (:mod:`memzoi.runs.scanverdicts`, diagnosed by :mod:`.closed`), not analyses.

``initialize`` never waits for this (B27): the scan starts from ``initialized``; requests made meanwhile get
best-effort answers from what is known so far. Only the project's ``.memzoi`` is walked (B30: never the workspace).
"""

from __future__ import annotations

import asyncio
import dataclasses
import itertools
import logging
import time
import uuid
from collections.abc import Awaitable, Callable, Coroutine, Generator, Iterator
from typing import TYPE_CHECKING, Any, cast

from lsprotocol import types
from pygls.capabilities import get_capability

from memzoi.base import gcpause
from memzoi.judge.pathsafety import shown_local_path
from memzoi.judge.workspace import linked_plane, linked_plane_message

from .documents import path_to_uri, uri_to_path
from .inputs import InputFollow
from .publishlog import Start
from .tasks import Tasks

if TYPE_CHECKING:
    from pathlib import Path

    from memzoi.project.verdict import ProjectContext
    from memzoi.stores.fileentry import FileEntry, Row
    from memzoi.stores.publishset import Messages
    from memzoi.stores.verdictcache import ProjectCache

    from .project import Project
    from .session import ScanSession

log = logging.getLogger("memzoi_lsp.scan")
CHUNK = 100


class Scanning:
    """The scan feature: it owns the background tasks of a project's start (its scan, then the follow-up of its
    inputs with their index refreshes, :mod:`.inputs`, and the work the root starts with it, such as the resident
    reconciliation) and cancels them at shutdown. Made with the session; it answers no request."""

    def __init__(self, ls: ScanSession) -> None:
        self._ls = ls
        self.tasks = Tasks()
        self.inputs = InputFollow(ls, self.tasks)  # the inputs' looks and boundary timers

    def start(
        self,
        project: Project,
        *also: Coroutine[Any, Any, Any],
        then: Callable[[Project, int], Awaitable[Any]] | None = None,
    ) -> None:
        """Scan ``project`` in the background (:func:`scan_project`), then ``then(project, since_ns)`` (its watches;
        ``since_ns``: the wall clock as the scan began) unless the server stops or the folder went; ``also`` beside."""
        self.tasks.spawn(self._scan(project, then))
        for coro in also:
            self.tasks.spawn(coro)

    async def _scan(self, project: Project, then: Callable[[Project, int], Awaitable[Any]] | None) -> None:
        since_ns = time.time_ns()
        try:
            await scan_project(self._ls, project, self.inputs)
        finally:  # a scan that failed still leaves its project watched
            if then is not None and not self._ls.stopping and self._ls.projects.get(project.root) is project:
                await then(project, since_ns)

    def prepare(self, root: Path, memzoi_dir: Path) -> None:
        """As the project at ``root`` is registered, before its scan starts: when it is a cold scan of many files
        (:func:`memzoi.runs.coldstart.prestart`, on the scan thread, off the loop), its workers' fork server starts
        now, its imports beside the server's start-up (issue 29: cold server scan)."""
        from memzoi.runs.coldstart import prestart  # noqa: PLC0415 lazy: start-up

        try:
            self._ls.scan_executor.submit(prestart, root, memzoi_dir)
        except RuntimeError:  # the scan thread is shut down: nothing is scanned
            pass

    def stop(self) -> None:
        """Cancel the scans and what follows them, and the boundary timers (shutdown)."""
        self.tasks.cancel()
        self.inputs.stop()


async def scan_project(ls: ScanSession, project: Project, follow: InputFollow) -> None:
    """Scan one project (see the module docstring); then ``follow`` (the scan feature's) looks at its inputs.
    Cancelled cleanly on shutdown."""
    from memzoi.project.verdict import ProjectContext  # noqa: PLC0415 lazy: start-up
    from memzoi.runs.scanverdicts import cached_stages, cold_start, open_cache  # noqa: PLC0415 lazy: start-up

    loop = asyncio.get_running_loop()
    started = time.perf_counter()
    publish_open(ls, project)
    # The listing (and, pushing, the stored publish set it decides on) runs on the scan thread while the client
    # answers the progress token's request (issue 29, warm start: the round trip no longer precedes the walk).
    start = _start(ls)
    listed = loop.run_in_executor(ls.scan_executor, start.list, project)
    begun = asyncio.ensure_future(_begin_progress(ls))
    cached = 0  # files whose first stage came from the verdict cache
    token = None
    try:
        _warn_linked(project)
        paths = await listed
        uris = project.adopt(paths)
        _replay(ls, start)
        list(map(ls.publish, map(path_to_uri, sorted(project.tracked.refused))))  # refused entries, as check says
        token = await begun
        ctx = ProjectContext.of(project.memzoi_dir, git=project.git)  # as `check`'s first stage: git explains
        cache = await loop.run_in_executor(ls.scan_executor, open_cache, project.root, ctx)
        # a cold scan (the cache vouches for nothing): its workers' fork server starts now, and no file is looked up
        cold = await loop.run_in_executor(ls.scan_executor, cold_start, paths, cache, project.root.resolve())
        start.ctx = getattr(cache, "stamp", None)  # no cache: nothing is stored
        links: dict[Any, bool] = {}
        total = len(uris)
        asked, misses = _asked(cold, uris, paths)

        def report(done: int) -> None:
            _report(ls, token, done, total)

        def read(i: int) -> asyncio.Future[list[Any]] | None:  # the first stages of the chunk at i, on the scan thread
            if i >= asked:
                return None
            return loop.run_in_executor(ls.scan_executor, cached_stages, paths[i : i + CHUNK], ctx, cache, links)

        ahead = read(0)
        for i in range(0, asked, CHUNK):  # first what the verdict cache vouches for: no file is read
            if ls.stopping or ls.projects.get(project.root) is not project:  # shut down, or folder removed
                return
            chunk = list(zip(uris[i : i + CHUNK], paths[i : i + CHUNK]))
            hits = await cast("asyncio.Future[list[Any]]", ahead)
            ahead = read(i + CHUNK)  # the scan thread reads the next chunk while this one is published
            misses += [job for job, hit in zip(chunk, hits) if hit is None]
            _take(ls, project, [(job, hit) for job, hit in zip(chunk, hits) if hit is not None], start)
            cached += sum(1 for hit in hits if hit is not None)
            report(cached)
        if misses and not await _analyse_misses(ls, project, misses, ctx, cache, start, lambda n: report(cached + n)):
            return
        await _scanned(ls, project, cache)
        from . import indexing  # noqa: PLC0415 lazy: start-up

        follow.follow(project)  # the configuration and git's state, from now on
        await indexing.refresh(ls, project)
    finally:
        project.scanned = True
        ls.flush_republish()  # every publish of the scan (cross-file republish included) precedes its end
        messages = _finish(ls, project, start, token or _begun(begun))
        _resume_collector_later()  # also when the scan stopped early
    _log_scanned(ls, project, started, cached, start.replayed)
    if messages is not None:  # the publish set for the next start, kept: a shutdown right after the scan runs it
        await ls.scan_executor.run_kept(start.save, project.root, messages)  # (publishlog.Start.save, scanjobs)


def _asked(cold: bool, uris: list[str], paths: list[str]) -> tuple[int, list[tuple[str, str]]]:
    """How many files (the first ones) the verdict cache is asked about, and the ``(uri, path)`` of those it cannot
    vouch for so far: in a cold scan none is asked and every file is analysed."""
    return (0, list(zip(uris, paths))) if cold else (len(uris), [])


def _start(ls: ScanSession) -> Start:
    """A scan's :class:`Start`: with the server's parts of the publish set's key when it pushes diagnostics."""
    return Start(None if ls.pull_diagnostics else ls.publish_log.parts())


def _replay(ls: ScanSession, start: Start) -> None:
    """On the loop, once the listing is adopted: write the stored publish set ``start`` found when every file it
    holds as open is open again (nothing is recorded then: the set stays the stored one); else begin recording
    what the scan sends, for the next start."""
    if start.parts is None:
        return
    stored, start.stored = start.stored, None
    open_uris = set(ls.docs.open_uris())
    if stored is not None and all(body or uri in open_uris for uri, body in stored.items()):
        start.replayed = ls.publish_log.replay(stored, ls.docs.is_open) or -1
        return
    start.vouched = {}
    start.extra = {}  # recording: the stamps of the files the store keeps no entry of
    ls.publish_log.begin()


def _finish(ls: ScanSession, project: Project, start: Start, token: str | None) -> Messages | None:
    """On the loop, when the scan is done or stopped: its progress ended, and the publish set to store (``None``:
    none recorded, as after a replay or a scan that stopped before it began recording, or the server is stopping or
    its settings changed meanwhile)."""
    _end_progress(ls, token, project)
    if start.parts is None or start.extra is None:
        return None
    messages = ls.publish_log.end(project.files, ls.docs.open_uris())
    if ls.stopping or ls.publish_log.parts() != start.parts:
        return None
    start.until = project.next_boundary()
    start.held = {v.path: (v.stamp, v.revision) for v in project.verdicts.values() if v.stamp is not None}
    return messages


async def _scanned(ls: ScanSession, project: Project, cache: ProjectCache | None) -> None:
    """Every file taken: the store's last entries are written on the scan thread (those of files gone dropped) while
    the end of the first scan (cross-file findings) is published here; SQLite lets the loop run meanwhile."""
    saved = ls.scan_executor.run_kept(cache.save, True) if cache else None  # kept: a shutdown runs it
    ls.on_project_scanned(project)
    ls.flush_republish()
    if saved is not None:
        await saved


def _resume_collector_later() -> None:
    """The start-up's pause of the collector ends (:func:`memzoi.base.gcpause.resume`, one full collection) in the
    loop's next turn, after this turn sent the scan's progress end (:mod:`.output`): upkeep (0.1–0.2 s at 10,000
    files, finding next to nothing) no longer delays the scan's end (issue 29: cold server scan)."""
    asyncio.get_running_loop().call_soon(gcpause.resume)


def _begun(begun: asyncio.Future[str | None]) -> str | None:
    """The progress token ``begun`` gave when it is done (a scan that stopped before it took it), else ``None``
    (the request is cancelled)."""
    if not begun.done():
        begun.cancel()
        return None
    return None if begun.cancelled() or begun.exception() is not None else begun.result()


def _report(ls: ScanSession, token: str | None, done: int, total: int) -> None:
    if token:
        ls.work_done_progress.report(
            token,
            types.WorkDoneProgressReport(message=f"{done}/{total} files", percentage=int(100 * done / max(1, total))),
        )


def _end_progress(ls: ScanSession, token: str | None, project: Project) -> None:
    if token and not ls.stopping:
        ls.work_done_progress.end(token, types.WorkDoneProgressEnd(message=f"{len(project.files)} files"))


def _log_scanned(ls: ScanSession, project: Project, started: float, cached: int, replayed: int) -> None:
    """Log the finished scan, and tell the client in its log window (``replayed``: the diagnostics published from
    the stored publish set, -1 for a set of none)."""
    elapsed = (time.perf_counter() - started) * 1000
    stored = f", {max(0, replayed)} published from the stored publish set" if replayed else ""
    root = shown_local_path(project.root)  # the log window is output too: a folder's name may bear a secret
    said = f"scanned {len(project.files)} files of {root} in {elapsed:.0f} ms ({cached} from the verdict cache)"
    log.info("%s%s", said, stored)
    if not ls.stopping:
        ls.window_log_message(
            types.LogMessageParams(type=types.MessageType.Info, message=f"memzoi-lsp: {said}{stored}")
        )


def _warn_linked(project: Project) -> None:
    linked = linked_plane(project.memzoi_dir)
    if linked:  # nothing below it is listed (memzoi check reports it as canonical_path)
        log.warning("%s", linked_plane_message(linked))


async def _begin_progress(ls: ScanSession) -> str | None:
    """A work-done progress token for the scan, begun; ``None`` when the client has none or refuses one."""
    if not get_capability(ls.client_capabilities, "window.work_done_progress", False):
        return None
    token = f"memzoi-scan-{uuid.uuid4()}"
    try:
        await asyncio.wait_for(ls.work_done_progress.create_async(token), timeout=5)
        ls.work_done_progress.begin(
            token, types.WorkDoneProgressBegin(title="Memzoi: scanning .memzoi", percentage=0, cancellable=False)
        )
    except Exception as err:  # the client refused a token: scan without progress
        log.info("no work-done progress: %s", err)
        return None
    return token


async def _analyse_misses(
    ls: ScanSession,
    project: Project,
    misses: list[tuple[str, str]],
    ctx: ProjectContext,
    cache: ProjectCache | None,
    start: Start,
    report: Callable[[int], None],
) -> bool:
    """Analyse the files the verdict cache does not vouch for, each once (in worker processes for many), and take
    them chunk by chunk; ``report(done)`` after each. False when the server stopped meanwhile."""
    from memzoi.runs.scanverdicts import PARALLEL_THRESHOLD, analyse  # noqa: PLC0415 lazy: start-up

    loop = asyncio.get_running_loop()
    # Runs on the scan thread, from its first `_next` on: git asked once for them all, workers started.
    results = cast(
        Generator["FileEntry | None"], analyse([p for _, p in misses], ctx, index_root=project.root.resolve())
    )
    try:
        for i in range(0, len(misses), CHUNK):
            if ls.stopping or ls.projects.get(project.root) is not project:
                return False
            chunk = misses[i : i + CHUNK]
            scanned = await loop.run_in_executor(ls.scan_executor, _next, results, len(chunk), cache, start.extra)
            if i == 0 and len(misses) >= PARALLEL_THRESHOLD:
                # A cold scan: no automatic collection while its results (kept, acyclic) are taken in, as `memzoi
                # check` runs; the pause ends after the scan's end (_resume_collector_later; issue 29, measured).
                gcpause.hold()
            _take(ls, project, list(zip(chunk, scanned)), start)
            report(i + len(chunk))
            rows = [got.row for got in scanned if got is not None and got.row is not None]
            if rows:  # written once the chunk is published (the scan thread runs them in order, before the refresh)
                try:  # kept: written before the index is closed at shutdown
                    ls.scan_executor.keep(_put_rows, rows, project, ls.docs.on_disk)
                except RuntimeError:  # the scan thread is shut down: the next start's refresh indexes them
                    return False
    finally:
        try:  # stops the workers left; kept: a shutdown does not drop it
            await ls.scan_executor.run_kept(results.close)
        except RuntimeError:  # the scan thread is shut down (a shutdown cancelled the scan): nothing runs it now
            results.close()
    return True


def publish_open(ls: ScanSession, project: Project) -> None:
    """Publish the open documents of ``project`` now, before its scan does any work: the first diagnostics never
    wait for the workspace (cross-file findings follow when the scan is done, :meth:`ScanSession.on_project_scanned`).
    Their editor text enters the project's state first (the scan itself leaves open documents alone)."""
    mine = [uri for uri in ls.docs.open_uris() if (path := uri_to_path(uri)) is not None and project.contains(path)]
    for uri in mine:
        ls.apply_editor(uri)
    if ls.pull_diagnostics:
        return  # the client pulls an open document's diagnostics itself; nothing of the scan delays the answer
    for uri in mine:
        ls.publish(uri)


def _next(
    results: Iterator[FileEntry | None], n: int, cache: ProjectCache | None, extra: dict[str, bytes] | None
) -> list[FileEntry | None]:
    """On the scan thread: the next ``n`` files analysed and their verdict cache entries stored; with ``extra``, the
    packed stamp of the bytes of each file the store keeps no entry of (one holding a secret: the stored publish
    set's inputs, :func:`memzoi.stores.publishset.judged_stamps`)."""
    from memzoi.base.freshness import pack_stamp  # noqa: PLC0415 lazy: start-up

    out = list(itertools.islice(results, n))
    for got in out:
        if got is not None and got.entry is not None:
            if cache is not None:
                cache.store(got.verdict.path, *got.entry)
            if extra is not None and got.entry[3] is None and (packed := pack_stamp(*got.entry[:3])):
                extra[got.verdict.path] = packed
    return out


def _put_rows(rows: list[Row], project: Project, on_disk: Callable[..., Any]) -> None:
    """On the scan thread, after the chunk they belong to is published: its search rows written into the index
    (:meth:`memzoi.runs.projectstate.ProjectState.put_rows`; opening the index, and loading it, is then off the
    path to the scan's diagnostics: issue 29, warm start). Never raises."""
    try:
        project.put_rows(rows, on_disk)
    except Exception as err:  # a broken index degrades search, never the scan (its refresh tries again)
        log.warning("index rows of the scan not written: %s", err)


def _take(ls: ScanSession, project: Project, scanned: list[tuple[tuple[str, str], Any]], start: Start) -> None:
    """On the event loop: for each ``((uri, path), got)`` of ``scanned`` (``got``: a compact verdict, or a
    :class:`memzoi.stores.fileentry.FileEntry`), keep the file's compact verdict, feed its facts to
    the cross-file workspace and publish it (open documents keep the editor's text; a file whose diagnostics the
    stored publish set ``start`` replayed, judged from the bytes that set vouched by, is not published again)."""
    # One context per chunk, judged in this one turn of the loop: the settings, the configuration and the ledger
    # cannot change within it, so the ledger is read once for the chunk, not stamped once per file.
    ctx = dataclasses.replace(ls.context(project), ledger=project.ledger.settled())
    for (uri, path), got in scanned:
        if got is None:
            continue  # unreadable, or changing while read: a watcher event or a request analyses it
        verdict = getattr(got, "verdict", got)
        # else changed since it was read (a watcher may have taken it in); the stamp is kept for the index's refresh
        current = verdict.current()
        if current:
            project.verdicts[uri] = verdict
        if ls.docs.is_open(uri):
            continue  # the editor's text governs an open document
        try:
            if current:
                project.apply_scan(uri, verdict.facts, path)
            else:  # what is on disk now, analysed as a request would (never raises: the barrier is inside)
                snap = ls.docs.snapshot(uri)
                if snap is not None:
                    project.apply_scan(uri, snap.analysis)
        except Exception as err:  # the barrier: one file's failure never stops the scan
            from memzoi.judge.barrier import log_internal_error  # noqa: PLC0415 lazy: start-up

            log_internal_error(err, uri)
        if not ls.pull_diagnostics and not (current and start.shown(path, verdict.stamp)):  # guarded too
            ls.publish(uri, (project, verdict, uri) if current else None, ctx)
