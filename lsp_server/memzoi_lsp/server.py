"""The Memzoi language server: a :class:`~pygls.lsp.server.LanguageServer` subclass holding session state, and
the start-up / lifecycle handlers. Each feature lives in its own module with a ``register(server)`` function;
:func:`create_server` wires them. No domain logic here: every decision comes from the ``memzoi`` core.
"""

from __future__ import annotations

import asyncio
import logging
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from threading import Event
from typing import TYPE_CHECKING, Any

from lsprotocol import types
from pygls.capabilities import get_capability
from pygls.io_ import StdoutWriter
from pygls.lsp.server import LanguageServer

from memzoi import __version__
from memzoi.base.findings import Finding
from memzoi.judge.workspace import MEMZOI_DIR, Role

# The composition root: this module imports every feature; no feature imports it (each receives a
# `session.Session`), so the package has no import cycle (tests/test_architecture.py).
from . import (
    actions,
    checkpoints,
    commands,
    diagnostics,
    folders,
    hover,
    inbox,
    lenses,
    lifecycle,
    localmem,
    materialization,
    navigation,
    preview,
    resident,
    resident_state,
    routing,
    scan,
    sync,
    textdoc,
    watch,
)
from .documents import Documents, Snapshot, path_to_uri, uri_to_path
from .inboxwatch import CandidateWatch
from .protocol import MemzoiProtocol
from .settings import SECTION, Settings, parse_settings

if TYPE_CHECKING:  # the core's analysis is imported at the first verdict, not to answer `initialize`
    from memzoi.project.verdict import FileVerdict, ProjectContext

    from .project import Project  # the core's project state (its configuration model): at the first project

log = logging.getLogger("memzoi_lsp")


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
        # Open documents whose file was deleted or renamed away: neither diagnosed nor cross-checked until the
        # file is back (saved again); a buffer never saved yet is not in here and is diagnosed as usual.
        self.gone: set[str] = set()
        self.loop: asyncio.AbstractEventLoop | None = None
        self.scan_executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="memzoi-scan")
        self.stopping = False
        self.tasks: set[asyncio.Task] = set()
        self.watching = watch.FileWatching()  # the watch feature's state: who watches, threads, the batch
        self.transport_failure: str | None = None
        self.inbox_watch = None  # inboxwatch.CandidateWatch once initialized
        self.publishing = diagnostics.Publishing()  # the diagnostics feature's state: shown, timers, queue
        self.forgotten: set[Path] = set()  # roots of projects whose workspace folder was removed (folders.py)

    def start_io(self, stdin=None, stdout=None, early=None) -> None:
        """Serve over stdio with :mod:`memzoi_lsp.transport`'s reader instead of pygls's (see there why);
        ``early``: what was read (and maybe answered) before the server was imported (``transport.read_early``).
        Sets :attr:`transport_failure` when the input could not be resynchronised (the process then exits 1)."""
        from .transport import serve  # noqa: PLC0415 lazy: start-up

        self._stop_event = Event()
        self.protocol.set_writer(StdoutWriter(stdout or sys.stdout.buffer))
        try:
            self.transport_failure = asyncio.run(
                serve(self._stop_event, stdin or sys.stdin.buffer, self.protocol, early)
            )
        except BrokenPipeError:
            log.error("the connection to the client is lost; shutting down")
        except (KeyboardInterrupt, SystemExit):
            pass
        finally:
            self.shutdown()

    # --- helpers used by feature modules -------------------------------------------------------------------

    def spawn(self, coro) -> asyncio.Task:
        """Run ``coro`` in the background, keeping a reference and logging failures."""
        task = asyncio.ensure_future(coro)
        self.tasks.add(task)

        def done(t: asyncio.Task) -> None:
            self.tasks.discard(t)
            if not t.cancelled() and t.exception() is not None:
                log.error("background task failed", exc_info=t.exception())

        task.add_done_callback(done)
        return task

    def is_memzoi(self, snap: Snapshot) -> bool:
        """Whether the server diagnoses ``snap``: every file below a ``.memzoi`` directory (records, packets,
        reserved and stray files: all are committed and scanned for secrets), or, outside a ``.memzoi`` tree,
        files whose frontmatter says ``kind: memory`` or ``kind: proposal``. Other Markdown files are left
        alone."""
        placement = snap.analysis.placement
        if placement.role is not Role.OTHER or placement.memzoi_dir is not None:
            return True
        if snap.analysis.kind in ("record", "proposal"):
            return True
        return resident.file_of(self, snap.path) is not None or routing.input_root(self, snap) is not None

    def findings_for(self, snap: Snapshot) -> list[Finding]:
        """What the editor shows on ``snap``: its verdict's findings (:func:`memzoi.project.verdict.judge`), or a resident
        file's findings, or none for an open buffer whose file is gone from disk."""
        where = resident.file_of(self, snap.path) if snap.analysis.placement.memzoi_dir is None else None
        if where is not None:
            return resident.findings_for(self, snap, where)
        if (root := routing.input_root(self, snap)) is not None:
            return routing.findings_for(self, snap, root)
        if self.gone_from_disk(snap):
            return []
        return list(self.verdict(snap).findings)

    def verdict(self, snap: Snapshot) -> FileVerdict:
        """The verdict of ``snap`` in its project: the same function ``memzoi check`` uses, fed the editor's text
        for an open document, the project's git and ledger oracles, the project's ``[rules]`` with the editor
        settings on top, and the cross-file findings the project's graph holds for this very text
        (:func:`memzoi.runs.projectview.cross_findings`: none before the first scan, none for text the graph has not
        taken in yet). A read: it changes no state and publishes nothing (the editor's text enters the state by
        :meth:`apply_editor`, at the editor's events).
        """
        from memzoi.judge.config import load_config  # noqa: PLC0415 lazy: start-up
        from memzoi.project.verdict import ProjectContext, judge  # noqa: PLC0415 lazy: start-up
        from memzoi.runs.projectview import cross_findings  # noqa: PLC0415 lazy: start-up

        project = self.project_for(snap.path)
        placement = snap.analysis.placement
        if project is None:  # outside any project (a `kind: memory` file elsewhere): its analysis alone
            config = load_config(placement.memzoi_dir).config
            ctx = ProjectContext.of(
                placement.memzoi_dir, config=config, rules=self.settings.over(config.effective_rules)
            )
            return judge(snap.path, snap.analysis, ctx)
        key = project.key_of(snap.path) if snap.path else snap.uri  # one key per file, whatever the client sent
        return judge(snap.path, snap.analysis, self.context(project), cross=cross_findings(project, key, snap.analysis))

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
        """The project's verdict context now: its configuration and ``[rules]`` under the editor settings, its git
        and ledger oracles."""
        from memzoi.judge.config import load_config  # noqa: PLC0415 lazy: start-up
        from memzoi.project.verdict import ProjectContext  # noqa: PLC0415 lazy: start-up

        config = load_config(project.memzoi_dir).config
        return ProjectContext.of(
            project.memzoi_dir,
            config=config,
            rules=self.settings.over(config.effective_rules),
            git=project.git,
            ledger=project.ledger,
        )

    def gone_from_disk(self, snap: Snapshot) -> bool:
        """True for an open document whose file was deleted or renamed away (see ``self.gone``). A read: the mark
        of a file that is back is dropped by the watcher's batch (:func:`.watch.process`), not here."""
        return snap.path is not None and path_to_uri(snap.path) in self.gone and not snap.path.exists()

    def republish(self, uris: set[str]) -> None:
        """Re-diagnose ``uris`` soon (push: once per loop turn, :func:`.diagnostics.queue`) or ask the client to
        re-pull (pull)."""
        self.crossfile_generation += 1
        if self.pull_diagnostics:
            self.request_refresh()
            return
        diagnostics.queue(self, uris)

    def flush_republish(self) -> None:
        """Push mode: publish what :meth:`republish` queued now (:func:`.diagnostics.flush`)."""
        diagnostics.flush(self)

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
        for uri in sorted(with_cross | set(self.docs.open_uris())):
            diagnostics.publish(self, uri)

    def on_files_changed(self, updated: list[str], removed: list[str]) -> None:
        """Files changed on disk (watchers, saves, or files the server itself wrote): re-diagnose them and the
        open documents whose cross-file findings may depend on them."""
        self.crossfile_generation += 1
        if self.pull_diagnostics:
            self.request_refresh()
            return
        for uri in updated:
            if not self.docs.is_open(uri):
                diagnostics.publish(self, uri)

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
        for uri in set(self.docs.open_uris()) | set(self.known_uris()) | set(self.publishing.shown):
            diagnostics.publish(self, uri)

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

    def add_project(self, root: Path) -> Project | None:
        """Register (and scan in the background) the project at ``root`` if it has a ``.memzoi`` directory."""
        root = root.resolve()
        if self.stopping:
            return None
        if root in self.projects:
            return self.projects[root]
        self.forgotten.discard(root)
        if not (root / MEMZOI_DIR).is_dir():
            return None
        from .project import Project  # noqa: PLC0415 lazy: start-up

        project = Project(root)
        self.projects[root] = project
        self.spawn(scan.scan_project(self, project))
        self.spawn(resident.reconcile_on_start(root))
        watch.watch_project(self, project)
        return project


def _has(cap: Any, path: str) -> bool:
    return bool(get_capability(cap, path, None))


def _install_index_sync() -> None:
    """The ledger's index hook (:func:`memzoi.lifecycle.index_sync.install`): the server's ledgered changes keep the
    project store's index current, as the CLI's and the MCP server's do."""
    from memzoi.lifecycle.index_sync import install  # noqa: PLC0415 lazy: start-up

    install()


def create_server() -> MemzoiServer:
    """Build the server with every feature registered."""
    server = MemzoiServer()

    @server.feature(types.INITIALIZE)
    def initialize(ls: MemzoiServer, params: types.InitializeParams) -> None:
        ls.loop = asyncio.get_running_loop()
        textdoc.install(ls.workspace)
        ls.init_options = params.initialization_options
        ls.pull_diagnostics = _has(params.capabilities, "text_document.diagnostic")
        if ls.pull_diagnostics:
            diagnostics.enable_pull(ls)
        ls.apply_settings(params.initialization_options)
        log.info(
            "initialize: client=%s diagnostics=%s encoding=%s",
            params.client_info.name if params.client_info else "?",
            "pull" if ls.pull_diagnostics else "push",
            getattr(ls.workspace.position_encoding, "value", ls.workspace.position_encoding),
        )

    @server.feature(types.INITIALIZED)
    async def initialized(ls: MemzoiServer, params: types.InitializedParams) -> None:
        if _has(ls.client_capabilities, "workspace.configuration"):
            try:
                config = await asyncio.wait_for(
                    ls.workspace_configuration_async(
                        types.ConfigurationParams(items=[types.ConfigurationItem(section=SECTION)])
                    ),
                    timeout=5,
                )
                ls.apply_settings(ls.init_options, config[0] if config else None)
            except Exception as err:  # a client that cannot answer must not stop start-up
                log.warning("workspace/configuration failed: %s", err)
        if ls.stopping:
            log.info("configuration received after shutdown; not starting the workspace scan")
            return
        await watch.register_client_watching(ls)
        roots: list[Path] = []
        for folder in ls.workspace.folders.values():
            p = uri_to_path(folder.uri)
            if p:
                roots.append(p)
        if not roots and ls.workspace.root_path:
            roots.append(Path(ls.workspace.root_path))
        for root in roots:
            ls.add_project(root)  # only looks at root/.memzoi: never walks the folder (B30)
        for uri in ls.docs.open_uris():
            sync.discover(ls, uri)
        ls.inbox_watch = CandidateWatch(ls)
        ls.inbox_watch.start()
        ls.scan_executor.submit(_install_index_sync)  # off the loop: it loads the lifecycle
        ls.window_log_message(types.LogMessageParams(type=types.MessageType.Info, message="memzoi-lsp ready"))

    @server.feature(types.SHUTDOWN)
    def shutdown(ls: MemzoiServer, params: None) -> None:
        ls.stopping = True
        ls.publishing.stop()
        watch.stop(ls)
        if ls.inbox_watch is not None:
            ls.inbox_watch.stop()
        for task in list(ls.tasks):
            task.cancel()
        ls.scan_executor.shutdown(wait=True, cancel_futures=True)
        from . import indexing  # noqa: PLC0415 lazy: start-up - it loads the core's index, which `initialize` does not need

        for project in ls.projects.values():
            indexing.close(project)
        log.info("shutdown complete")

    @server.feature(types.WORKSPACE_DID_CHANGE_CONFIGURATION)
    async def did_change_configuration(ls: MemzoiServer, params: types.DidChangeConfigurationParams) -> None:
        settings = params.settings
        if _has(ls.client_capabilities, "workspace.configuration"):
            try:
                config = await ls.workspace_configuration_async(
                    types.ConfigurationParams(items=[types.ConfigurationItem(section=SECTION)])
                )
                settings = config[0] if config else settings
            except Exception as err:
                log.warning("workspace/configuration failed: %s", err)
        before = ls.settings_generation
        ls.apply_settings(ls.init_options, settings)
        if ls.settings_generation != before:
            ls.refresh_all()

    # Diagnostics handlers are registered in `initialize` (pull) or not at all (push): see diagnostics.enable_pull.
    for module in (
        sync,
        hover,
        actions,
        checkpoints,
        commands,
        folders,
        inbox,
        lenses,
        lifecycle,
        localmem,
        materialization,
        navigation,
        preview,
        resident,
        resident_state,
        routing,
        watch,
    ):
        module.register(server)
    return server


__all__ = ["MemzoiServer", "create_server", "path_to_uri"]
