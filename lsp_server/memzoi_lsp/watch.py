"""File watching: ``workspace/didChangeWatchedFiles`` when the client registers it dynamically, otherwise a
watchfiles watcher on each project's ``.memzoi`` directory only.

Events from both sources go through :func:`files_changed`: a trailing-edge debounce (with a maximum wait, so a
file rewritten continuously is still re-validated at a bounded rate, B36) collects paths, and each path is then
judged by its **final state on disk**, never by the event type. So a write-then-rename save (delete + add, or
rename onto the file) is one modification and never flashes a "deleted" state (B33), repeated ``added`` events
for a growing file are one update (B34), and a directory-level event rescans that directory (B37). Editor swap,
backup and lock files are ignored.

:class:`FileWatching` is the feature: an object that owns its state (who watches, the watcher threads, the batch
and its timer), receives a :class:`~memzoi_lsp.session.WatchSession` and registers its handler
(:meth:`FileWatching.register`); the composition root makes it and delegates ``files_changed``, ``process_disk``
and ``unwatch_project`` to it.
"""

from __future__ import annotations

import asyncio
import logging
import threading
import time
import uuid
from collections.abc import Awaitable, Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING

from lsprotocol import types
from pygls.capabilities import get_capability

from . import diskview
from .documents import path_to_uri, uri_to_path
from .tasks import Tasks

if TYPE_CHECKING:
    from memzoi.judge.analysis import Analysis
    from memzoi.runs.projectstate import StateChanges

    from .project import Project
    from .session import WatchSession
    from .session_members import EventLoop

log = logging.getLogger("memzoi_lsp.watch")

DEBOUNCE_S = 0.1
MAX_WAIT_S = 1.0


class FileWatching:
    """The watch feature: whether the client watches for the server (``client_watches``), the watchfiles threads
    otherwise (``watcher``), the changed paths waiting for the debounced pass with its timer (``batch``), and the
    open buffers whose file is gone from disk (``gone``), and the index updates it runs (``tasks``). Made with the session; changed on the event loop only."""

    def __init__(self, ls: WatchSession) -> None:
        self._ls = ls
        self.client_watches = False
        self.watcher: _Watcher | None = None
        self.batch = ChangeBatch()
        self.tasks = Tasks()  # the index updates of its passes
        # Open documents whose file was deleted or renamed away: neither diagnosed nor cross-checked until the
        # file is back (saved again); a buffer never saved yet is not in here and is diagnosed as usual. Marked and
        # unmarked by the watch pass; a closed buffer's mark goes (the session's ``forget_gone``).
        self.gone: set[str] = set()
        #: the wall clock as each project's first scan began (by ``.memzoi`` folder), which its files' stamps are
        #: judged against when a watcher is made anew (:meth:`drift`); 0 (every stamp racy) for one not scanned yet
        self.since: dict[Path, int] = {}

    def register(self, server: WatchSession) -> None:
        """Register the watched-files notification handler."""

        @server.feature(types.WORKSPACE_DID_CHANGE_WATCHED_FILES)
        def did_change_watched_files(ls: WatchSession, params: types.DidChangeWatchedFilesParams) -> None:
            self.files_changed([p for p in (uri_to_path(c.uri) for c in params.changes) if p is not None])

    async def register_client_watching(self) -> None:
        """In ``initialized``: ask the client to watch ``.memzoi`` trees, only when it offers dynamic registration
        (registering anyway crashes some clients; Neovim 0.11 on Linux does not offer it)."""
        ls = self._ls
        self.client_watches = False
        if not get_capability(ls.client_capabilities, "workspace.did_change_watched_files.dynamic_registration", False):
            return
        try:
            await ls.client_register_capability_async(
                types.RegistrationParams(
                    registrations=[
                        types.Registration(
                            id=f"memzoi-watch-{uuid.uuid4()}",
                            method=types.WORKSPACE_DID_CHANGE_WATCHED_FILES,
                            register_options=types.DidChangeWatchedFilesRegistrationOptions(
                                watchers=[types.FileSystemWatcher(glob_pattern="**/.memzoi/**")]
                            ),
                        )
                    ]
                )
            )
            self.client_watches = True
        except Exception as err:  # fall back to our own watcher
            log.warning("client refused file watching registration (%s); watching .memzoi with watchfiles", err)

    def watch_project(self, project: Project, ready: Callable[[], None] | None = None) -> None:
        """Start a watchfiles thread on ``project.memzoi_dir`` unless the client watches for us; ``ready()`` is
        called on that thread once its watches exist, or once it ended without them."""
        if self.client_watches or self._ls.stopping:
            return
        if self.watcher is None:
            self.watcher = _Watcher(self._ls, self.files_changed)
        loop = self._ls.loop
        lost = None if loop is None else (lambda: _call_soon(loop, lambda: self._drift_later(project)))
        self.watcher.add(project.memzoi_dir, ready, lost)

    def after_scan(self, project: Project) -> Callable[[Project, int], Awaitable[None]] | None:
        """What the first scan of ``project`` runs once it is over: :meth:`watch_scanned`; or ``None`` where the
        watches are set up now, before it, as stat stamps cannot vouch for a file's bytes there and a change made
        during the scan must reach them (:func:`memzoi.runs.scandrift.defers_watches`)."""
        from memzoi.runs.scandrift import defers_watches  # noqa: PLC0415 lazy: start-up

        if defers_watches(str(project.memzoi_dir)):
            return self.watch_scanned
        self.watch_project(project)
        return None

    async def watch_scanned(self, project: Project, since_ns: int) -> None:
        """Once ``project``'s first scan is over: watch it (:meth:`watch_project`; during the scan every file a
        worker opened woke the watches) and, once the watches exist, put each file changed since the scan judged
        it through the watch pass (:mod:`memzoi.runs.scandrift`), so no change between a worker's read and the
        watches is missed. Nothing to do when the client watches for the server (its events came all along)."""
        ls = self._ls
        if self.client_watches or ls.stopping:
            return
        loop = asyncio.get_running_loop()
        ready: asyncio.Future[None] = loop.create_future()
        self.since[project.memzoi_dir] = since_ns
        self.watch_project(project, lambda: _call_soon(loop, lambda: _settle(ready)))
        await ready
        await self.drift(project)

    async def drift(self, project: Project) -> None:
        """Put each file of ``project`` whose state on disk is not the one it was judged by through the watch pass
        (:func:`memzoi.runs.scandrift.drifted`, against the wall clock as its scan began): once its watches exist
        after its first scan, and again whenever its watcher is made anew (a name that is not UTF-8 broke the last
        one, :func:`memzoi.base.dirwatch.changed_paths`), so no change made without a watch is missed."""
        from memzoi.runs.scandrift import drifted, held_stamps  # noqa: PLC0415 lazy: start-up

        ls = self._ls
        if ls.stopping or ls.projects.get(project.root) is not project:
            return
        held = held_stamps(project)
        since_ns = self.since.get(project.memzoi_dir, 0)
        loop = asyncio.get_running_loop()
        changed = await loop.run_in_executor(ls.scan_executor, drifted, str(project.memzoi_dir), held, since_ns)
        if changed:
            log.info("%d files of %s changed before their watches: judged again", len(changed), project.root)
            self.files_changed([Path(p) for p in changed])

    def _drift_later(self, project: Project) -> None:
        """On the loop: :meth:`drift` of ``project`` in the background (its watcher was made anew)."""
        if not self._ls.stopping:
            self.tasks.spawn(self.drift(project))

    def unwatch_project(self, project: Project) -> None:
        """Stop the watchfiles thread of ``project`` (its workspace folder was removed); a client that watches for
        the server keeps its glob, whose events for a forgotten project are ignored (:meth:`_by_project`)."""
        if self.watcher is not None:
            self.watcher.remove(project.memzoi_dir)

    def stop(self) -> None:
        """Stop the watcher threads, the pending pass and its index updates (shutdown)."""
        if self.watcher is not None:
            self.watcher.stop()
        self.batch.cancel()
        self.tasks.cancel()

    def files_changed(self, paths: Iterable[Path], *, immediate: bool = False) -> None:
        """Queue paths whose disk state may have changed; processed after the debounce (or now, for files the
        server itself has just written)."""
        ls = self._ls
        if ls.stopping:
            return
        delay = self.batch.add(paths)
        if immediate or ls.loop is None:
            self._flush()
            return
        self.batch.cancel()
        self.batch.timer = ls.loop.call_later(delay, self._flush)

    def _flush(self) -> None:
        paths = self.batch.take()
        if paths and not self._ls.stopping:
            self.process(paths)

    def process(self, paths: list[Path]) -> tuple[list[str], list[str]]:
        """Bring the projects and diagnostics in line with the disk for ``paths``: the core's state machine
        (:meth:`memzoi.runs.projectstate.ProjectState.apply_events`) decides what changed, analysing each changed
        closed file once (through the document cache); this publishes it and queues the index update.

        Returns ``(updated URIs, removed URIs)``.
        """
        ls = self._ls
        ls.inbox_paths_changed(paths)
        for path in paths:  # an open document's bytes on disk changed (a save, another writer): read them again
            if (uri := ls.docs.open_uri_for(path)) is not None:
                diskview.refresh(ls, uri)
        updated: list[str] = []
        removed: list[str] = []
        affected: set[str] = set()
        for project, batch in self._by_project(paths).items():
            changes = self._apply(project, batch)
            updated += changes.updated
            removed += changes.removed
            affected |= changes.affected
        affected -= {u for u in updated if not ls.docs.is_open(u)}  # published just below
        if affected:
            ls.republish(affected)
        if updated or removed:
            ls.on_files_changed(updated, removed)
        return updated, removed

    def _apply(self, project: Project, batch: list[Path]) -> StateChanges:
        """One project's batch through the core (:class:`memzoi.runs.projectstate.StateChanges` back): removed
        files are cleared, open buffers whose file is back are diagnosed again, the index update is queued."""
        from . import indexing  # noqa: PLC0415 lazy: start-up

        ls = self._ls
        shown = [str(p) for p in (uri_to_path(u) for u in ls.shown_uris()) if p is not None and project.contains(p)]
        refused = set(project.tracked.refused)
        changes = project.apply_events(batch, shown=shown, analysis_of=self._closed_analysis)
        for uri in changes.removed:
            self._drop(uri)
        for entry in refused - project.tracked.refused:  # a refused entry gone: what check said of it goes too
            ls.clear_diagnostics(path_to_uri(entry))
        for entry in project.tracked.refused:  # one new, or cleared above as no longer a file: shown as check says
            if entry not in refused or path_to_uri(entry) in changes.removed:
                changes.affected.add(path_to_uri(entry))
        self.gone.difference_update(changes.updated)
        for uri in changes.updated:  # an open buffer whose file is back: its text is the file's again
            if ls.docs.is_open(uri) and not ls.docs.is_behind(uri):
                ls.apply_editor(uri)
        indexing.update(ls, project, changes.reindex, self.tasks)
        return changes

    def _closed_analysis(self, uri: str) -> Analysis | None:
        """The analysis of the closed file ``uri`` as it is on disk (the document cache's, analysed once);
        ``None`` for an open document (the editor's text governs) or an unreadable file."""
        docs = self._ls.docs
        if docs.is_open(uri) and not docs.is_behind(uri):
            return None
        snap = docs.snapshot(uri)
        return snap.analysis if snap is not None else None

    def _drop(self, uri: str) -> None:
        """A file gone from the project: its cached analysis and its problems go (an open buffer stays, marked
        gone)."""
        ls = self._ls
        ls.docs.forget(uri)
        if ls.docs.is_open(uri):
            self.gone.add(uri)
        ls.clear_diagnostics(uri)

    def _by_project(self, paths: list[Path]) -> dict[Project, list[Path]]:
        """``paths`` grouped by the project holding them; a new ``.memzoi`` folder registers its project."""
        ls = self._ls
        out: dict[Project, list[Path]] = {}
        for path in paths:
            project = ls.project_for(path)
            if project is None:
                root = path.parent if path.name == ".memzoi" else path.parent.parent
                if (path.name == ".memzoi" or path.parent.name == ".memzoi") and not ls.is_forgotten(root.resolve()):
                    ls.add_project(root)
                continue
            out.setdefault(project, []).append(path)
        return out


class _Watcher:
    """One watchfiles thread per watched directory; events are handed to the event loop (``on_paths``)."""

    def __init__(self, ls: EventLoop, on_paths: Callable[[list[Path]], None]) -> None:
        self.ls = ls
        self.on_paths = on_paths
        self.stop_event = threading.Event()
        self.threads: list[threading.Thread] = []
        self.stops: dict[Path, threading.Event] = {}  # one stop event per watched directory

    def add(
        self, directory: Path, ready: Callable[[], None] | None = None, lost: Callable[[], None] | None = None
    ) -> None:
        """Watch ``directory`` on a thread of its own; ``ready()`` on it once the watches exist (or it ended),
        ``lost()`` once they exist again after a name that is not UTF-8 broke them (changes may have been missed)."""
        self.stops[directory] = stop = threading.Event()
        args = (directory, stop, ready, lost)
        t = threading.Thread(target=self._run, args=args, name="memzoi-watch", daemon=True)
        t.start()
        self.threads.append(t)

    def remove(self, directory: Path) -> None:
        """Stop watching ``directory`` (its thread ends within watchfiles' next step)."""
        stop = self.stops.pop(directory, None)
        if stop is not None:
            stop.set()

    def _run(
        self,
        directory: Path,
        stop: threading.Event,
        ready: Callable[[], None] | None,
        lost: Callable[[], None] | None,
    ) -> None:
        from memzoi.base.dirwatch import changed_paths  # noqa: PLC0415 lazy: start-up

        class _Either:  # watchfiles polls ``is_set``: stop on shutdown or when this directory is removed
            def is_set(inner) -> bool:
                return self.stop_event.is_set() or stop.is_set()

        try:
            for paths in changed_paths(directory, stop=_Either(), ready=ready, lost=lost):
                loop = self.ls.loop
                if loop is None or loop.is_closed():
                    return
                loop.call_soon_threadsafe(self.on_paths, paths)
        except Exception as err:  # a vanished directory or a watcher error must not kill the server
            log.warning("watching %s stopped: %s", directory, err)
        finally:
            if ready is not None:  # whoever waits for the watches never waits for a watcher that ended (idempotent)
                ready()

    def stop(self) -> None:
        self.stop_event.set()
        for t in self.threads:
            t.join(timeout=1)


def _call_soon(loop: asyncio.AbstractEventLoop, call: Callable[[], object]) -> None:
    """``call()`` on ``loop`` from another thread; nothing once the loop is closed (the server is gone)."""
    try:
        loop.call_soon_threadsafe(call)
    except RuntimeError:
        pass


def _settle(future: asyncio.Future[None]) -> None:
    """``future`` done, once (the second call of a watcher's ``ready`` does nothing)."""
    if not future.done():
        future.set_result(None)


class ChangeBatch:
    """Paths whose disk state may have changed, gathered on the event loop for one debounced pass: the pass runs
    :data:`DEBOUNCE_S` after the last event, and at most :data:`MAX_WAIT_S` after the first one of the batch."""

    def __init__(self) -> None:
        self.pending: dict[Path, None] = {}  # insertion-ordered set
        self.first: float | None = None
        self.timer: asyncio.TimerHandle | None = None

    def add(self, paths: Iterable[Path]) -> float:
        """Queue ``paths``; returns the delay in seconds before the pass should run (0 once the batch is old)."""
        for p in paths:
            self.pending[Path(p)] = None
        now = time.monotonic()
        if self.first is None:
            self.first = now
        return 0 if now - self.first >= MAX_WAIT_S else DEBOUNCE_S

    def take(self) -> list[Path]:
        """The queued paths, in arrival order; the batch starts empty again."""
        paths = list(self.pending)
        self.pending, self.first = {}, None
        self.cancel()
        return paths

    def cancel(self) -> None:
        """Cancel the scheduled pass, if any."""
        if self.timer is not None:
            self.timer.cancel()
            self.timer = None


__all__ = ["ChangeBatch", "FileWatching"]
