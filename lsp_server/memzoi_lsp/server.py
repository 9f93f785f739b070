"""The Memzoi language server: a :class:`~pygls.lsp.server.LanguageServer` subclass holding session state, and
the start-up / lifecycle handlers. Each feature is an object of its own module with a ``register(server)``
method, composed in :attr:`MemzoiServer.features`; :func:`create_server` registers them. No domain logic here:
every decision comes from the ``memzoi`` core."""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import sys
from pathlib import Path
from threading import Event
from typing import TYPE_CHECKING, Any, BinaryIO, Protocol

from lsprotocol import types
from pygls.capabilities import get_capability
from pygls.lsp.server import LanguageServer

from memzoi import __version__
from memzoi.base.findings import Finding
from memzoi.judge.workspace import MEMZOI_DIR

# The composition root: this module imports every feature; no feature imports it (each receives its view of the
# session, `session`), so the package has no import cycle (tests/test_architecture.py).
from . import (
    actions,
    checkpoints,
    commands,
    diagnostics,
    folders,
    hover,
    inbox,
    inboxwatch,
    lenses,
    lifecycle,
    localmem,
    materialization,
    navigation,
    preview,
    reads,
    resident,
    resident_state,
    routing,
    scan,
    startup,
    sync,
    watch,
)
from .clientinput import Input
from .documents import Documents, Snapshot, path_to_uri
from .output import GatheredWriter
from .protocol import MemzoiProtocol
from .publishlog import PublishLog, server_parts
from .scanjobs import ScanJobs
from .settings import Settings, parse_settings

if TYPE_CHECKING:  # the core's analysis is imported at the first verdict, not to answer `initialize`
    from memzoi.project.verdict import FileVerdict, ProjectContext

    from .project import Project  # the core's project state (its configuration model): at the first project

log = logging.getLogger("memzoi_lsp")


class Feature(Protocol):
    """A feature: it registers its LSP handlers from one method (docs/architecture.md, "Features over snapshots")."""

    def register(self, server: Any) -> None: ...


class MemzoiServer(LanguageServer):
    """Session state: settings, the diagnostics model, projects, the analysis cache and timers."""

    def __init__(self) -> None:
        super().__init__("memzoi-lsp", __version__, protocol_cls=MemzoiProtocol)
        self.settings = Settings()
        self.settings_generation = 0
        self.crossfile_generation = 0
        self.pull_diagnostics = False
        self.init_options: Any = None
        self.docs = Documents(lambda: self.workspace)
        self.projects: dict[Path, Project] = {}
        self.loop: asyncio.AbstractEventLoop | None = None
        self.scan_executor = ScanJobs()  # the scan thread: kept jobs run at shutdown, optional ones not begun do not
        self.stopping = False
        self.scanning = scan.Scanning(self)  # the scan feature: its projects' scans and what follows them
        self.watching = watch.FileWatching(self)  # the watch feature: who watches, threads, the batch
        self.transport_failure: str | None = None
        self.inbox_watch = inboxwatch.CandidateWatch(self)  # the inbox watch: its thread, started when initialized
        self.publishing = diagnostics.Diagnostics(self)  # the diagnostics feature: what is shown, timers, queue
        self.publish_log = PublishLog(  # pushed diagnostics as written, and the stored publish set (issue 29)
            self.protocol, self.publishing.shown, lambda: server_parts(self.settings, self.workspace.position_encoding)
        )
        self.folders = folders.Folders(self)  # the workspace-folders feature: the projects it forgot
        # The client's input as the stdio transport sees it: the work the first diagnostics do not need waits until
        # every message sent with `initialized` was handled (start_features), and the projects registered before
        # then wait with it (their scan and watchers).
        self.input = Input()
        self.background_started = False
        self.waiting_projects: list[Project] = []
        # Every feature whose handlers the server registers, in one place (each from its `register` method; the
        # pull diagnostics handlers are registered in `initialize` when the client pulls: diagnostics.enable_pull).
        self.features: tuple[Feature, ...] = (
            sync.TextSync(self),
            self.watching,
            self.folders,
            hover.Hover(self),
            actions.CodeActions(self),
            lenses.CodeLenses(self),
            navigation.Navigation(self),
            commands.FEATURE,
            inbox.FEATURE,
            lifecycle.FEATURE,
            resident.FEATURE,
            resident_state.FEATURE,
            routing.FEATURE,
            materialization.FEATURE,
            checkpoints.FEATURE,
            localmem.FEATURE,
            preview.FEATURE,
        )

    def start_io(self, stdin: BinaryIO | None = None, stdout: BinaryIO | None = None, early: Any = None) -> None:
        """Serve over stdio with :mod:`memzoi_lsp.transport`'s reader instead of pygls's (see there why);
        ``early``: what was read (and maybe answered) before the server was imported (``transport.read_early``).
        Sets :attr:`transport_failure` when the input could not be resynchronised (the process then exits 1)."""
        from .transport import serve  # noqa: PLC0415 lazy: start-up

        self._stop_event = Event()
        self.protocol.set_writer(writer := GatheredWriter(stdout or sys.stdout.buffer))  # a loop turn's in one write
        try:
            self.transport_failure = asyncio.run(
                serve(self._stop_event, stdin or sys.stdin.buffer, self.protocol, early, self.input)
            )
        except BrokenPipeError:
            log.error("the connection to the client is lost; shutting down")
        except (KeyboardInterrupt, SystemExit):
            pass
        finally:
            writer.drain()  # what the last turn wrote
            self.shutdown()  # type: ignore[no-untyped-call]  # pygls leaves it unannotated

    # --- helpers used by feature modules -------------------------------------------------------------------

    def is_memzoi(self, snap: Snapshot) -> bool:
        """Whether the server diagnoses ``snap`` (:func:`.reads.is_memzoi`)."""
        return reads.is_memzoi(self, snap)

    def findings_for(self, snap: Snapshot) -> list[Finding]:
        """What the editor shows on ``snap`` (:func:`.reads.findings_for`)."""
        return reads.findings_for(self, snap)

    def verdict(self, snap: Snapshot) -> FileVerdict:
        """The verdict of ``snap`` in its project (:func:`.reads.verdict`): a read."""
        return reads.verdict(self, snap)

    def apply_editor(self, uri: str) -> None:
        """An editor event on ``uri`` (opened, changed, closed, its buffer back after the file was gone): the
        document as the server now reads it (editor text, or the disk for a closed or behind one) becomes its
        file's cross-file facts (:meth:`memzoi.runs.projectstate.ProjectState.apply_editor`), and the other files
        whose cross-file findings changed are re-diagnosed. The one way an editor's text enters the project state.
        """
        snap = self.docs.snapshot(uri)
        project = self.project_for(snap.path) if snap is not None else None
        if project is None or snap is None or snap.path is None or self.gone_from_disk(snap):
            return
        key = project.key_of(snap.path)
        affected = project.apply_editor(key, snap.analysis) - {key}
        if affected:
            self.republish(affected)

    def context(self, project: Project) -> ProjectContext:
        """The project's verdict context now (:func:`.reads.context`)."""
        return reads.context(self, project)

    def gone_from_disk(self, snap: Snapshot) -> bool:
        """True for an open document whose file was deleted or renamed away (:attr:`.watch.FileWatching.gone`). A
        read: the mark of a file that is back is dropped by the watcher's batch (:meth:`.watch.FileWatching.process`)."""
        return snap.path is not None and path_to_uri(snap.path) in self.watching.gone and not snap.path.exists()

    def forget_gone(self, uri: str) -> None:
        """The buffer ``uri`` was closed: its gone mark goes (:attr:`.watch.FileWatching.gone`)."""
        self.watching.gone.discard(uri)

    def republish(self, uris: set[str]) -> None:
        """Re-diagnose ``uris`` soon (push: :meth:`.diagnostics.Diagnostics.queue`) or ask the client to re-pull."""
        self.crossfile_generation += 1
        if self.pull_diagnostics:
            self.request_refresh()
            return
        self.publishing.queue(uris)

    def flush_republish(self) -> None:
        """Push mode: publish what :meth:`republish` queued now (:meth:`.diagnostics.Diagnostics.flush`)."""
        self.publishing.flush()

    # --- what one feature asks of another, through the composition root (no feature imports another) ----------

    def publish(self, uri: str, found: tuple[Any, ...] | None = None, ctx: Any = None) -> None:
        """Diagnose ``uri`` now and push the result (:meth:`.diagnostics.Diagnostics.publish`; nothing in pull mode)."""
        self.publishing.publish(uri, found, ctx)

    def clear_diagnostics(self, uri: str) -> None:
        """Remove what the client shows for ``uri`` (:meth:`.diagnostics.Diagnostics.clear`)."""
        self.publishing.clear(uri)

    def schedule_diagnostics(self, uri: str) -> None:
        """Diagnose ``uri`` once typing pauses (:meth:`.diagnostics.Diagnostics.schedule`)."""
        self.publishing.schedule(uri)

    def cancel_diagnostics(self, uri: str) -> None:
        """Drop the debounce timer of ``uri`` (its buffer closed)."""
        self.publishing.cancel(uri)

    def forget_diagnostics(self, uris: set[str]) -> None:
        """Files of a forgotten project: cleared, never republished (:meth:`.diagnostics.Diagnostics.forget`)."""
        self.publishing.forget(uris)

    def stop_features(self) -> None:
        """Shutdown: the features' timers, threads and background tasks stop (diagnostics, scan, watch, inbox)."""
        self.publishing.stop()
        self.scanning.stop()
        self.watching.stop()
        self.inbox_watch.stop()

    def start_features(self) -> None:
        """``initialized``: start the work that runs for the whole session once every message the client has sent
        so far was handled (:meth:`.clientinput.Input.when_drained`), so that the documents it opened with
        ``initialized`` are analysed and published before anything else claims the CPU (issue 29: first
        diagnostics): then :meth:`start_background`."""
        self.input.when_drained(self.start_background)

    def start_background(self) -> None:
        """The end of the start-up (once): the garbage collector resumes (:func:`memzoi.base.gcpause.resume`; when
        projects are waiting, their first scan resumes it once it has published every file: issue 29, warm start), the
        inbox watch's thread and the ledger's index hook start, and so do the scans and watchers of the projects
        registered meanwhile (:meth:`add_project`)."""
        if self.background_started or self.stopping:
            return
        self.background_started = True
        self.inbox_watch.start()
        startup.install_index_sync()  # loads nothing: the hook imports the lifecycle when first called
        waiting, self.waiting_projects = self.waiting_projects, []
        started = [p for p in waiting if self.projects.get(p.root) is p]  # not removed meanwhile
        for project in started:
            self._start_project(project)
        if not started:  # else the first scan resumes it once it has published every file (scan.py)
            from memzoi.base import gcpause  # noqa: PLC0415 lazy: start-up

            gcpause.resume()

    def is_forgotten(self, root: Path) -> bool:
        """Whether the project at ``root`` was forgotten with its workspace folder (:class:`.folders.Folders`)."""
        return self.folders.is_forgotten(root)

    def shown_uris(self) -> frozenset[str]:
        """The URIs whose diagnostics the client shows now (push mode), as a frozen copy."""
        return frozenset(self.publishing.shown)

    def files_changed(self, paths: list[Path], *, immediate: bool = False) -> None:
        """Files changed on disk: debounced (or at once) through the watch pass
        (:meth:`.watch.FileWatching.files_changed`)."""
        self.watching.files_changed(paths, immediate=immediate)

    def process_disk(self, paths: list[Path]) -> tuple[list[str], list[str]]:
        """Bring the projects in line with the disk for ``paths`` now (:meth:`.watch.FileWatching.process`)."""
        return self.watching.process(paths)

    def unwatch_project(self, project: Project) -> None:
        """Stop watching the project's ``.memzoi`` (:meth:`.watch.FileWatching.unwatch_project`)."""
        self.watching.unwatch_project(project)

    def inbox_paths_changed(self, paths: list[Path]) -> None:
        """Tell the inbox watch about changed paths (:meth:`.inboxwatch.CandidateWatch.paths_changed`)."""
        self.inbox_watch.paths_changed(paths)

    def project_for(self, path: Path | None) -> Project | None:
        """The project whose ``.memzoi`` holds ``path``."""
        if path is None:
            return None
        for project in self.projects.values():
            if project.contains(path):
                return project
        return None

    def known_uris(self) -> list[str]:
        """URIs of every managed file found on disk in every project."""
        out: list[str] = []
        for project in list(self.projects.values()):
            out.extend(sorted(project.files))
        return out

    def on_project_scanned(self, project: Project) -> None:
        """The project's first scan finished: cross-file state is complete, so publish the files that have
        cross-file findings and the open documents."""
        project.scanned = True
        self.crossfile_generation += 1
        if self.pull_diagnostics:
            self.request_refresh()
            return
        with_cross = {u for u in project.crossfile.paths() if project.crossfile.findings_for(u)}
        # One context for them all, judged in this one turn of the loop (as the scan's chunks): the ledger is read
        # once, not stamped again for every file.
        ctx = dataclasses.replace(self.context(project), ledger=project.ledger.settled())
        for uri in sorted(with_cross | set(self.docs.open_uris())):
            self.publishing.publish(uri, None, ctx)

    def on_files_changed(self, updated: list[str], removed: list[str]) -> None:
        """Files changed on disk (watchers, saves, or files the server itself wrote): re-diagnose them and the
        open documents whose cross-file findings may depend on them."""
        self.crossfile_generation += 1
        if self.pull_diagnostics:
            self.request_refresh()
            return
        for uri in updated:
            if not self.docs.is_open(uri):
                self.publishing.publish(uri)

    def request_refresh(self) -> None:
        """Pull mode: ask the client to re-pull diagnostics (when it supports refresh)."""
        self.crossfile_generation += 1
        if not self.pull_diagnostics or self.stopping:
            return
        if get_capability(self.client_capabilities, "workspace.diagnostics.refresh_support", False):
            self.workspace_diagnostic_refresh(None)

    def refresh_all(self) -> None:
        """Re-diagnose everything (settings or cross-file state changed)."""
        if self.pull_diagnostics:
            self.request_refresh()
            return
        for uri in set(self.docs.open_uris()) | set(self.known_uris()) | self.shown_uris():
            self.publishing.publish(uri)

    def apply_settings(self, *sources: Any) -> None:
        """Validate raw settings once, keep them, and report problems to the user."""
        settings, problems = parse_settings(*sources)
        for p in problems:
            log.warning("%s", p)
        if problems and not self.stopping:
            self.window_show_message(
                types.ShowMessageParams(
                    type=types.MessageType.Warning,
                    message="Memzoi: invalid settings (" + "; ".join(problems) + ")",
                )
            )
        changed = settings != self.settings
        self.settings = settings
        if settings.log_level == "debug":  # records below INFO are only made when someone asks for them
            logging.getLogger("memzoi_lsp").setLevel(logging.DEBUG)
        if changed:
            self.settings_generation += 1

    def remove_project(self, root: Path) -> Project | None:
        """Drop the project at ``root`` (resolved) from the session; returns it (``None`` when none is there)."""
        return self.projects.pop(root, None)

    def add_project(self, root: Path) -> Project | None:
        """Register (and scan in the background) the project at ``root`` if it has a ``.memzoi`` directory; during
        the start-up its scan and watcher wait for :meth:`start_background`."""
        root = root.resolve()
        if self.stopping:
            return None
        if root in self.projects:
            return self.projects[root]
        self.folders.remember(root)
        if not (root / MEMZOI_DIR).is_dir():
            return None
        self.scanning.prepare(root, root / MEMZOI_DIR)  # a cold scan of many files: its workers' fork server starts
        from memzoi.runs.checkimports import ANALYSING, load_judging  # noqa: PLC0415 lazy: start-up

        load_judging(ANALYSING)  # as `memzoi check` loads it: the patterns from the regex code cache they share
        from .project import Project  # noqa: PLC0415 lazy: start-up

        project = Project(root)
        self.projects[root] = project
        if self.background_started:
            self._start_project(project)
        else:  # registered now (its documents are diagnosed at once); scanned and watched when the start-up ends
            self.waiting_projects.append(project)
        return project

    def _start_project(self, project: Project) -> None:
        """Scan ``project`` in the background (beside the ledger's and the resident reconciliation), then watch it."""
        also = (lifecycle.reconcile_on_start(self, project.root), resident.reconcile_on_start(self, project.root))
        self.scanning.start(project, *also, then=self.watching.after_scan(project))


def create_server() -> MemzoiServer:
    """Build the server with every feature registered (:attr:`MemzoiServer.features`, after the start-up and
    lifecycle handlers)."""
    server = MemzoiServer()
    startup.register(server)
    for feature in server.features:
        feature.register(server)
    return server


__all__ = ["MemzoiServer", "create_server", "path_to_uri"]
