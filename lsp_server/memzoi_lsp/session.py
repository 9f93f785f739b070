"""The session protocols: what each feature module may use of the running server.

Features (``diagnostics``, ``hover``, ``actions``, ``lenses``, ``commands``, ``watch``, ``sync``, ``scan``,
``folders``, ``navigation`` …) receive a view of the session, never :class:`memzoi_lsp.server.MemzoiServer` itself:
the server module is the composition root, it imports every feature and no feature imports it back
(``tests/test_architecture.py`` fails on any import cycle of ``memzoi_lsp``, type-only and function-local imports
included). This module imports no feature, so any feature can name the view it receives.

Each view is composed by inheritance of the members of :mod:`memzoi_lsp.session_members` (each declared once there)
and declares none itself (:class:`DocumentCache` narrows ``docs``; :class:`Session` adds the root's own); it holds
exactly what its feature uses (``tests/test_architecture.py``, :mod:`tests.session_uses`). Every member of a view is a read-only property or a
method, so mypy refuses a feature's assignment of session state; only :class:`Session`, the composition root's,
makes the state it sets settable.

A request handler reads (documents, verdicts, settings) and never changes project state: only the watch pass
(:meth:`memzoi.runs.projectstate.ProjectState.apply_events`), an editor change (``apply_editor``) and the scan
(``apply_scan``) change it, and only they publish (docs/architecture.md, "Features over snapshots").
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Protocol

from .session_members import (
    BufferDiagnostics,
    CapabilitiesView,
    Clearer,
    ClientLog,
    ClientProtocol,
    CommandRegistry,
    ContextView,
    DiagnosticsChannel,
    DiskEvent,
    DiskPass,
    DocumentsView,
    EditorEvent,
    EventLoop,
    FeatureRegistry,
    KnownFiles,
    ProjectLookup,
    ProjectRegistration,
    ProjectRemoval,
    ProjectsView,
    Publisher,
    PublishRecord,
    PullMode,
    RefreshAll,
    RefreshRequest,
    Republisher,
    ScanProgress,
    ScanThread,
    SettingsView,
    ShownFiles,
    Stopping,
    Verdicts,
    WatchHooks,
    WorkspaceView,
)

if TYPE_CHECKING:
    import asyncio
    from collections.abc import Sequence
    from concurrent.futures import Future

    from lsprotocol import types

    from .documents import Documents


class DocumentCache(DocumentsView, Protocol):
    """The document cache itself (an event forgets an analysis or marks a buffer behind its file): the one member a
    protocol re-declares, narrowing the read view's type."""

    @property
    def docs(self) -> Documents: ...


class BackgroundWork(EventLoop, Stopping, Protocol):
    """The event loop and whether the session is stopping: what work run in the background needs."""


class ReadSession(
    DocumentsView,
    WorkspaceView,
    CapabilitiesView,
    FeatureRegistry,
    SettingsView,
    ProjectsView,
    ScanThread,
    ProjectLookup,
    KnownFiles,
    ContextView,
    Verdicts,
    Protocol,
):
    """The read view a request feature receives (hover, code lenses, navigation, code actions): documents, settings,
    projects and verdicts, every member read-only (``projects`` a read-only mapping, ``settings`` a frozen
    dataclass, ``docs`` without its mutators). mypy holds a feature typed with it to reads: it cannot publish, apply
    an event, or assign session state (docs/architecture.md, "Features over snapshots")."""


class Notifier(ClientProtocol, Stopping, Protocol):
    """What sending a server notification needs (:func:`memzoi_lsp.notifications.notify`)."""


class InboxWatchSession(BackgroundWork, ClientProtocol, Protocol):
    """What the inbox watch receives (:class:`memzoi_lsp.inboxwatch.CandidateWatch`): notifying the client and the
    event loop; nothing of the project state."""


class LogSession(BackgroundWork, SettingsView, ClientLog, ProjectsView, Protocol):
    """What forwarding log records to the client needs (:mod:`memzoi_lsp.logbridge`): the projects, whose local
    places a line names only as they are shown (:func:`memzoi_lsp.logbridge.shown_in`)."""


class ProjectRegistry(ProjectsView, ProjectRegistration, Protocol):
    """The registered projects and registering one: what finding the project of an input file opened outside
    them needs (:func:`memzoi_lsp.routing_view.root_of`)."""


class IndexSession(DocumentsView, ScanThread, Protocol):
    """What the index's refresh, rebuild and search need (:mod:`memzoi_lsp.indexing`): the scan thread, and the
    document cache's analyses of files on disk."""


class IndexUpdateSession(IndexSession, BackgroundWork, Protocol):
    """What queueing an index update needs (:func:`memzoi_lsp.indexing.update`)."""


class SymbolSession(DocumentsView, KnownFiles, Protocol):
    """What the workspace symbols from the analyses need (:func:`memzoi_lsp.indexing.workspace_symbols`)."""


class ProjectDiscovery(ProjectRegistry, WorkspaceView, ProjectLookup, Protocol):
    """What registering the project of an opened file needs (:func:`memzoi_lsp.sync.discover`)."""


class DiagnosticsSession(
    ReadSession, BackgroundWork, PullMode, EditorEvent, RefreshRequest, DiagnosticsChannel, PublishRecord, Protocol
):
    """What the diagnostics feature receives (:class:`memzoi_lsp.diagnostics.Diagnostics`, and
    :mod:`memzoi_lsp.closed`): the read view and background work, the diagnostics model and the generations its
    result ids hold, the publish log that writes the one notification it sends (``publishDiagnostics``, as its JSON),
    a refresh request, and an open document's text entering the project state before it is published
    (``apply_editor``: an editor event's debounce ends there)."""


class CommandSession(
    ReadSession,
    DocumentCache,
    ClientProtocol,
    Stopping,
    ProjectRegistration,
    DiskEvent,
    DiskPass,
    Publisher,
    Clearer,
    RefreshRequest,
    CommandRegistry,
    Protocol,
):
    """What a command feature receives (lifecycle, resident, routing, materialization, preview, local memory,
    checkpoints, the inbox): the read view, plus registering a command, the project a command names
    (``add_project``), the client's protocol (``window/showDocument``, notifications), and after a write of the
    server's own, the one way its files enter the project state (``files_changed``: the watch pass) and what
    the client is shown (``publish``, ``clear_diagnostics``, ``request_refresh``, ``process_disk``)."""


class WorkspaceCommandSession(SymbolSession, IndexSession, ProjectsView, DiskPass, Protocol):
    """What the workspace commands receive (:mod:`memzoi_lsp.commands`: check, search, rebuild, doctor): the
    projects, the index on the scan thread, the analyses' symbols, and the watch pass after a check."""


class DiskBytesSession(DocumentCache, BackgroundWork, ProjectLookup, EditorEvent, Republisher, Protocol):
    """What reading an open document's bytes on disk needs (:mod:`memzoi_lsp.diskview`): the document cache that
    holds them, the loop, the file's project (its scan verdict), and re-diagnosing the document."""


class SyncSession(
    ProjectDiscovery,
    DiskBytesSession,
    FeatureRegistry,
    PullMode,
    EditorEvent,
    DiskEvent,
    Publisher,
    Clearer,
    Republisher,
    ShownFiles,
    BufferDiagnostics,
    Protocol,
):
    """What text synchronisation receives (:class:`memzoi_lsp.sync.TextSync`): registering the project of an opened
    file, a buffer entering the project state (``apply_editor``), a save into the watch pass (``files_changed``),
    and what the client is shown (publish, debounce, clear, republish); a closed buffer's gone mark goes."""


class WatchSession(
    IndexUpdateSession,
    DiskBytesSession,
    DocumentCache,
    ProjectsView,
    CapabilitiesView,
    FeatureRegistry,
    ProjectLookup,
    ProjectRegistration,
    EditorEvent,
    Clearer,
    Republisher,
    ShownFiles,
    WatchHooks,
    Protocol,
):
    """What the watch feature receives (:class:`memzoi_lsp.watch.FileWatching`): asking the client to watch, the
    disk's changes into the project state (the document cache's analyses forgotten, ``apply_editor`` for a buffer
    whose file is back, the index updated), a new ``.memzoi`` registered unless its folder was removed, and what the
    client is shown (``on_files_changed``, republish, clear); the inbox watch hears of the same paths."""


class FoldersSession(
    ProjectRegistry,
    DocumentCache,
    WorkspaceView,
    FeatureRegistry,
    ScanThread,
    PullMode,
    RefreshRequest,
    ShownFiles,
    ProjectRemoval,
    Protocol,
):
    """What the workspace-folders feature receives (:class:`memzoi_lsp.folders.Folders`): registering and dropping
    projects, stopping their watcher, closing their index on the scan thread, and forgetting what the client was
    shown of them."""


class InputSession(IndexSession, BackgroundWork, DocumentCache, ProjectsView, Republisher, RefreshAll, Protocol):
    """What following a project's runtime inputs receives (:class:`memzoi_lsp.inputs.InputFollow`): looks on the
    scan thread, timers on the event loop, the document cache's analyses forgotten and files re-diagnosed when an
    input or a retention boundary changed them, and the index refreshed."""


class ScanSession(
    InputSession,
    CapabilitiesView,
    ContextView,
    ClientLog,
    PullMode,
    EditorEvent,
    Publisher,
    ScanProgress,
    PublishRecord,
    Protocol,
):
    """What the scan feature receives (:class:`memzoi_lsp.scan.Scanning`): the inputs' follow-up, the scan's
    progress (work-done progress, the log window), the open documents entering the project state first, each file
    published as it is taken (``apply_scan`` is the project's), the end of the first scan (``on_project_scanned``,
    ``flush_republish``) and the stored publish set, replayed at a warm start and recorded after a scan
    (``publish_log``)."""


class Session(
    DocumentCache,
    WorkspaceView,
    CapabilitiesView,
    FeatureRegistry,
    SettingsView,
    ProjectsView,
    ScanThread,
    ProjectLookup,
    KnownFiles,
    ContextView,
    ClientProtocol,
    EventLoop,
    Stopping,
    ClientLog,
    PullMode,
    ProjectRegistration,
    EditorEvent,
    DiskEvent,
    DiskPass,
    Publisher,
    Clearer,
    Republisher,
    RefreshRequest,
    RefreshAll,
    ShownFiles,
    Verdicts,
    DiagnosticsChannel,
    CommandRegistry,
    BufferDiagnostics,
    WatchHooks,
    ProjectRemoval,
    ScanProgress,
    PublishRecord,
    Protocol,
):
    """The server as the composition root sees it (:mod:`memzoi_lsp.startup`; all on the event loop unless said
    otherwise): every view above, the root's own requests and actions, and the session state it sets in
    ``initialize`` and ``shutdown`` (``loop``, ``pull_diagnostics``, ``stopping``: settable here only, read-only in
    every view). pygls's API comes with the server; the rest is Memzoi's session state, set in one place
    (:meth:`memzoi_lsp.server.MemzoiServer.__init__`)."""

    loop: asyncio.AbstractEventLoop | None
    pull_diagnostics: bool
    stopping: bool
    init_options: Any
    watching: Any  # memzoi_lsp.watch.FileWatching (typed loosely: this module imports no feature)

    def window_show_message(self, params: types.ShowMessageParams) -> None: ...
    async def workspace_configuration_async(self, params: types.ConfigurationParams) -> Sequence[Any | None]: ...
    def workspace_diagnostic_refresh(
        self, params: None, callback: Callable[[None], None] | None = None
    ) -> Future[None]: ...
    def apply_settings(self, *sources: Any) -> None: ...
    def start_features(self) -> None: ...
    def stop_features(self) -> None: ...


__all__ = [
    "BackgroundWork",
    "CommandSession",
    "DiagnosticsSession",
    "FoldersSession",
    "InboxWatchSession",
    "IndexSession",
    "IndexUpdateSession",
    "InputSession",
    "LogSession",
    "Notifier",
    "ProjectDiscovery",
    "ProjectRegistry",
    "ReadSession",
    "ScanSession",
    "Session",
    "SymbolSession",
    "SyncSession",
    "WatchSession",
    "WorkspaceCommandSession",
]
