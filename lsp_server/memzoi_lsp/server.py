"""The Memzoi language server: a :class:`~pygls.lsp.server.LanguageServer` subclass holding session state, and
the start-up / lifecycle handlers. Each feature lives in its own module with a ``register(server)`` function;
:func:`create_server` wires them. No domain logic here: every decision comes from the ``memzoi`` core.
"""

from __future__ import annotations

import asyncio
import logging
import os
import uuid
import weakref
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from lsprotocol import types
from pygls.capabilities import get_capability
from pygls.lsp.server import LanguageServer
from pygls.exceptions import JsonRpcException
from pygls.protocol import LanguageServerProtocol
from pygls.protocol.language_server import lsp_method
from lsprotocol.types import ResponseError

from memzoi import __version__
from memzoi.admission import GitVisibility, admit
from memzoi.config import file_rules
from memzoi.crossfile import Workspace as CrossFileWorkspace
from memzoi.findings import Finding
from memzoi.workspace import MEMZOI_DIR, Role, walk

from .ledgerview import LedgerView, findings as ledger_findings
from .documents import Documents, Snapshot, path_to_uri, uri_to_path
from .settings import SECTION, Settings, parse_settings

log = logging.getLogger("memzoi_lsp")


class Project:
    """One project under review: the directory holding ``.memzoi/`` and the managed files found on disk
    (URIs of records and proposal packets, kept current by the scan and the watchers)."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.memzoi_dir = root / MEMZOI_DIR
        self.files: set[str] = set()
        self.scanned = asyncio.Event()
        self.crossfile = CrossFileWorkspace()
        # uri -> weak reference to the Analysis whose facts the cross-file workspace holds (weak, so the bounded
        # document cache decides what stays in memory)
        self.fed: dict[str, weakref.ref] = {}
        self.ledger = LedgerView(root)
        self.index = None  # memzoi.index.Index, opened on the scan thread
        self.visibility: dict[str, Any] = {}  # abspath -> memzoi.admission.GitVisibility (batched git calls)
        self.index_ready = False

    def contains(self, path: Path) -> bool:
        """True when ``path`` is inside this project's ``.memzoi`` directory."""
        try:
            path.relative_to(self.memzoi_dir)
            return True
        except ValueError:
            return False


class _Dropped:
    """Marker for a message already answered while structuring it."""

    jsonrpc = "2.0"


class MemzoiProtocol(LanguageServerProtocol):
    """Protocol tweaks: replies to the server's own requests are still processed after ``shutdown`` (B26: pygls
    cancels their futures at ``shutdown`` and then drops every message but ``exit``, so a pending
    ``workspace/configuration`` would never resolve); only new requests and notifications are refused."""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self._incoming: set = set()  # ids of the client's requests still being handled

    def _handle_request(self, msg_id, method_name, params):
        self._incoming.add(msg_id)
        try:
            return super()._handle_request(msg_id, method_name, params)
        finally:
            future = self._request_futures.get(msg_id)
            if future is None or future.done():
                self._incoming.discard(msg_id)
            else:
                future.add_done_callback(lambda _f: self._incoming.discard(msg_id))

    @lsp_method(types.SHUTDOWN)
    def lsp_shutdown(self, *args):
        """pygls's shutdown, except that only the client's pending requests are cancelled."""
        if (user_handler := self.fm.features.get(types.SHUTDOWN)) is not None:
            yield user_handler, args, None
        current_id = self.msg_id
        for msg_id, future in list(self._request_futures.items()):
            # Only the client's pending requests are cancelled: not our own requests, and not notification
            # handlers (such as `initialized` awaiting our `workspace/configuration`).
            if msg_id == current_id or msg_id not in self._incoming:
                continue
            if not future.done():
                future.cancel()
        self._shutdown = True
        return None

    def structure_message(self, data):
        """Answer a request whose params do not structure with an ``InvalidParams`` error (pygls only logs it,
        and the client would wait forever); the message itself is then dropped. A reply to one of the server's
        own requests that does not structure (a client answering ``window/showDocument`` with ``null``) fails
        that request's future, so the command awaiting it goes on instead of waiting forever."""
        try:
            return super().structure_message(data)
        except JsonRpcException as exc:
            if isinstance(data, dict) and "id" in data and "method" in data:
                log.warning("invalid params for %s: answered with an error", data.get("method"))
                self._send_response(
                    data["id"],
                    error=ResponseError(code=exc.code, message=f"{exc.message} for {data.get('method')}"),
                )
                return _Dropped()
            if isinstance(data, dict) and "id" in data and ("result" in data or "error" in data):
                future = self._request_futures.pop(data["id"], None)
                log.warning("malformed reply from the client to request %r", data["id"])
                if future is not None and not future.done():
                    future.set_exception(exc)
                return _Dropped()
            raise

    def handle_message(self, message):  # noqa: D401 - pygls API
        if isinstance(message, _Dropped):
            return None
        if self._shutdown and getattr(message, "method", types.EXIT) != types.EXIT and hasattr(message, "id"):
            # LSP: after `shutdown`, every request but `exit` is answered with InvalidRequest (pygls drops it).
            self._send_response(message.id, error=ResponseError(code=-32600, message="Invalid request: the server "
                                                                "is shutting down"))
            return None
        if self._shutdown and not hasattr(message, "method"):
            self._shutdown = False
            try:
                return super().handle_message(message)
            finally:
                self._shutdown = True
        return super().handle_message(message)


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
        self.published: set[str] = set()
        # Open documents whose file was deleted or renamed away: neither diagnosed nor cross-checked until the
        # file is back (saved again); a buffer never saved yet is not in here and is diagnosed as usual.
        self.gone: set[str] = set()
        self.timers: dict[str, asyncio.TimerHandle] = {}
        self.loop: asyncio.AbstractEventLoop | None = None
        self.scan_executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="memzoi-scan")
        self.stopping = False
        self.watcher = None  # set by watch.start_watching when the server watches files itself
        self.tasks: set[asyncio.Task] = set()
        self.client_watches = False
        self.transport_failure: str | None = None

    def start_io(self, stdin=None, stdout=None) -> None:
        """Serve over stdio with :mod:`memzoi_lsp.transport`'s reader instead of pygls's (see there why).
        Sets :attr:`transport_failure` when the input could not be resynchronised (the process then exits 1)."""
        import sys
        from threading import Event

        from pygls.io_ import StdoutWriter

        from .transport import serve

        self._stop_event = Event()
        self.protocol.set_writer(StdoutWriter(stdout or sys.stdout.buffer))
        try:
            self.transport_failure = asyncio.run(serve(self._stop_event, stdin or sys.stdin.buffer, self.protocol))
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
        from . import resident

        return resident.file_of(self, snap.path) is not None

    def findings_for(self, snap: Snapshot) -> list[Finding]:
        """The snapshot's own findings plus its cross-file findings (lineage, preconditions, duplicates,
        identities) from the project's :class:`memzoi.crossfile.Workspace`.

        The snapshot's facts are fed to that workspace first (editor text for open documents, disk otherwise), so
        the cross-file spans index ``snap.text``; other files whose findings changed because of it are
        re-diagnosed. Until the project's first scan completes, cross-file findings are withheld (a target later
        in the scan would otherwise show as dangling for a moment).
        """
        from . import resident

        where = resident.file_of(self, snap.path) if snap.analysis.placement.memzoi_dir is None else None
        if where is not None:
            return resident.findings_for(self, snap, where)
        if self.gone_from_disk(snap):
            return []
        own = list(snap.analysis.findings)
        project = self.project_for(snap.path)
        placement = snap.analysis.placement
        if project is None or placement.role is Role.RESERVED or (placement.role is Role.OTHER and placement.memzoi_dir is not None):
            return own  # reserved and stray files: scanned, but no record or packet to admit or cross-check
        key = path_to_uri(snap.path) if snap.path else snap.uri  # one spelling per file, whatever the client sent
        affected = self.feed(project, key, snap.analysis)
        if affected - {key}:
            self.republish(affected - {key})
        if snap.path is not None:
            own += ledger_findings(project.ledger, snap.path, snap.text)
            # Admission (canonical path, git review visibility) as Memzoi decides it; visibility comes from the
            # scan's and the watchers' batched git calls, so typing never runs git.
            vis = project.visibility.get(os.path.abspath(snap.path), GitVisibility.UNKNOWN)
            own += admit(snap.path, snap.analysis, vis).findings
        if not project.scanned.is_set():
            return own
        cross = project.crossfile.findings_for(key)
        return sorted(own + cross, key=lambda f: (f.start, f.end, f.code)) if cross else own

    def gone_from_disk(self, snap: Snapshot) -> bool:
        """True for an open document whose file was deleted or renamed away (see ``self.gone``)."""
        if snap.path is None or path_to_uri(snap.path) not in self.gone:
            return False
        if snap.path.exists():
            self.gone.discard(path_to_uri(snap.path))
            return False
        return True

    def graded(self, snap: Snapshot, findings: list[Finding]) -> list[Finding]:
        """``findings`` of ``snap`` graded by the project's ``[rules]`` with the editor settings on top
        (severities applied, disabled codes and ignored files dropped)."""
        placement = snap.analysis.placement
        project, rel = file_rules(snap.path, placement.memzoi_dir)
        rules = self.settings.over(project)
        return findings if rules.is_default else rules.apply(findings, rel)

    def feed(self, project: Project, uri: str, analysis) -> set[str]:
        """Give the project's cross-file workspace the facts of ``analysis`` for ``uri`` (no-op when it already
        holds facts from this very analysis); returns the URIs whose cross-file findings changed."""
        held = project.fed.get(uri)
        if held is not None and held() is analysis:
            return set()
        project.fed[uri] = weakref.ref(analysis)
        return project.crossfile.update(uri, analysis)

    def unfeed(self, project: Project, uri: str) -> set[str]:
        """Forget ``uri`` in the cross-file workspace (deleted, moved away); returns the URIs affected."""
        project.fed.pop(uri, None)
        return project.crossfile.remove(uri)

    def republish(self, uris: set[str]) -> None:
        """Re-diagnose ``uris`` soon (push) or ask the client to re-pull (pull)."""
        from . import diagnostics

        self.crossfile_generation += 1
        if self.pull_diagnostics:
            self.request_refresh()
            return
        if self.loop is None:
            return
        for uri in sorted(uris):
            self.loop.call_soon(diagnostics.publish, self, uri)

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
        project.scanned.set()
        self.crossfile_generation += 1
        if self.pull_diagnostics:
            self.request_refresh()
            return
        from . import diagnostics

        with_cross = {u for u in project.crossfile.paths() if project.crossfile.findings_for(u)}
        for uri in sorted(with_cross | set(self.docs.open_uris())):
            diagnostics.publish(self, uri)

    def on_files_changed(self, updated: list[str], removed: list[str]) -> None:
        """Files changed on disk (watchers, saves, or files the server itself wrote): re-diagnose them and the
        open documents whose cross-file findings may depend on them."""
        from . import diagnostics

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
        from . import diagnostics

        if self.pull_diagnostics:
            self.request_refresh()
            return
        for uri in set(self.docs.open_uris()) | set(self.known_uris()) | set(self.published):
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
        if not (root / MEMZOI_DIR).is_dir():
            return None
        project = Project(root)
        self.projects[root] = project
        from . import resident, scan, watch

        self.spawn(scan.scan_project(self, project))
        self.spawn(resident.reconcile_on_start(root))
        watch.watch_project(self, project)
        return project


def _has(cap: Any, path: str) -> bool:
    return bool(get_capability(cap, path, None))


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
            _discover(ls, uri)
        ls.window_log_message(
            types.LogMessageParams(type=types.MessageType.Info, message="memzoi-lsp ready")
        )

    @server.feature(types.SHUTDOWN)
    def shutdown(ls: MemzoiServer, params: None) -> None:
        ls.stopping = True
        for t in ls.timers.values():
            t.cancel()
        ls.timers.clear()
        watch.stop(ls)
        for task in list(ls.tasks):
            task.cancel()
        ls.scan_executor.shutdown(wait=True, cancel_futures=True)
        from . import indexing

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

    @server.feature(types.TEXT_DOCUMENT_DID_OPEN)
    def did_open(ls: MemzoiServer, params: types.DidOpenTextDocumentParams) -> None:
        uri = params.text_document.uri
        _discover(ls, uri)
        if not ls.pull_diagnostics:
            diagnostics.publish(ls, uri)  # at once on open; typing is debounced

    @server.feature(types.TEXT_DOCUMENT_DID_CHANGE)
    def did_change(ls: MemzoiServer, params: types.DidChangeTextDocumentParams) -> None:
        # pygls has already applied every content change to the workspace document: only schedule a re-read.
        diagnostics.schedule(ls, params.text_document.uri)

    @server.feature(types.TEXT_DOCUMENT_DID_SAVE)
    def did_save(ls: MemzoiServer, params: types.DidSaveTextDocumentParams) -> None:
        path = uri_to_path(params.text_document.uri)
        if path is not None:
            watch.files_changed(ls, [path], immediate=True)

    @server.feature(types.TEXT_DOCUMENT_DID_CLOSE)
    def did_close(ls: MemzoiServer, params: types.DidCloseTextDocumentParams) -> None:
        uri = params.text_document.uri
        timer = ls.timers.pop(uri, None)
        if timer is not None:
            timer.cancel()
        # The buffer is gone: the file on disk (if any) is what other files now refer to and what is shown.
        path = uri_to_path(uri)
        project = ls.project_for(path)
        key = path_to_uri(path) if path else uri
        ls.gone.discard(key)
        if project is not None and key in project.files:
            snap = ls.docs.snapshot(key)
            affected = ls.feed(project, key, snap.analysis) if snap is not None else set()
            if ls.pull_diagnostics:
                if affected:
                    ls.republish(affected)
                return
            diagnostics.publish(ls, key)
            if affected - {key}:
                ls.republish(affected - {key})
        else:
            if project is not None:
                affected = ls.unfeed(project, key)
                if affected - {key}:
                    ls.republish(affected - {key})
            if not ls.pull_diagnostics and (uri in ls.published or key in ls.published):
                diagnostics.clear(ls, uri)

    from . import (  # noqa: E402
        actions, commands, diagnostics, hover, inbox, lifecycle, localmem, navigation, preview, resident, scan, textdoc,
        watch,
    )

    # Diagnostics handlers are registered in `initialize` (pull) or not at all (push): see diagnostics.enable_pull.
    for module in (hover, actions, commands, inbox, lifecycle, localmem, navigation, preview, resident, watch):
        module.register(server)
    return server


def _discover(ls: MemzoiServer, uri: str) -> None:
    """Register the project of an opened file (walking up to its ``.memzoi``; never down)."""
    path = uri_to_path(uri)
    if path is None:
        return
    from memzoi.workspace import place

    placement = place(path)
    if placement.memzoi_dir is not None and ls.project_for(path) is None:
        ls.add_project(placement.memzoi_dir.parent)


__all__ = ["MemzoiServer", "Project", "create_server", "path_to_uri"]
