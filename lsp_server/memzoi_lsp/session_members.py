"""The session's members, each declared once: one protocol per member (or per group of members that every feature
using one uses all of), from which :mod:`memzoi_lsp.session` composes the view each feature receives. A feature's
view is the union of exactly the members it uses, and ``tests/test_architecture.py`` fails when a feature receives
a member it never uses or when two protocols declare the same member (docs/architecture.md, "Features over
snapshots"). Imports no feature.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

if TYPE_CHECKING:
    import asyncio
    import os
    from collections.abc import Mapping
    from pathlib import Path

    from lsprotocol import types
    from pygls.progress import Progress
    from pygls.protocol import JsonRPCProtocol
    from pygls.workspace import Workspace

    from memzoi.base.findings import Finding
    from memzoi.judge.analysis import Analysis
    from memzoi.project.verdict import FileVerdict, ProjectContext

    from .documents import Snapshot
    from .project import Project
    from .publishlog import PublishLog
    from .scanjobs import ScanJobs
    from .settings import Settings


#: A handler as registered: the decorators return it unchanged.
F = TypeVar("F", bound=Callable[..., Any])


class DocumentReader(Protocol):
    """The documents as a request sees them: snapshots and open state, nothing that changes them
    (:class:`memzoi_lsp.documents.Documents` is one)."""

    def snapshot(self, uri: str) -> Snapshot | None: ...
    def is_open(self, uri: str) -> bool: ...
    def is_behind(self, uri: str) -> bool: ...
    def open_uri_for(self, path: Path | None) -> str | None: ...
    def open_uris(self) -> list[str]: ...
    def on_disk(self, path: Path) -> tuple[bytes, os.stat_result, Analysis] | None: ...


class DocumentsView(Protocol):
    """The documents without their mutators."""

    @property
    def docs(self) -> DocumentReader: ...


class WorkspaceView(Protocol):
    """pygls's workspace: its folders and text documents."""

    @property
    def workspace(self) -> Workspace: ...


class CapabilitiesView(Protocol):
    """What the client said it supports in ``initialize``."""

    @property
    def client_capabilities(self) -> types.ClientCapabilities: ...


class FeatureRegistry(Protocol):
    """Registering an LSP handler (pygls's ``feature`` decorator)."""

    def feature(self, feature_name: str, options: Any | None = None) -> Callable[[F], F]: ...


class SettingsView(Protocol):
    """The editor settings (a frozen dataclass)."""

    @property
    def settings(self) -> Settings: ...


class ProjectsView(Protocol):
    """The registered projects, by resolved root, as a read-only mapping."""

    @property
    def projects(self) -> Mapping[Path, Project]: ...


class ScanThread(Protocol):
    """The single scan thread, which owns each project's index connection (:class:`.scanjobs.ScanJobs`: a job is
    optional unless it is kept)."""

    @property
    def scan_executor(self) -> ScanJobs: ...


class ProjectLookup(Protocol):
    """The registered project holding a path (a read)."""

    def project_for(self, path: Path | None) -> Project | None: ...


class KnownFiles(Protocol):
    """Every managed file found on disk in every project (a read)."""

    def known_uris(self) -> list[str]: ...


class ContextView(Protocol):
    """A project's verdict context now (a read)."""

    def context(self, project: Project) -> ProjectContext: ...


class ClientProtocol(Protocol):
    """The client's JSON-RPC protocol (notifications, ``window/showDocument``)."""

    @property
    def protocol(self) -> JsonRPCProtocol: ...


class PublishRecord(Protocol):
    """The writing of pushed diagnostics, with the stored publish set's record and replay
    (:class:`memzoi_lsp.publishlog.PublishLog`)."""

    @property
    def publish_log(self) -> PublishLog: ...


class EventLoop(Protocol):
    """The event loop the session state lives on (``None`` before ``initialize``)."""

    @property
    def loop(self) -> asyncio.AbstractEventLoop | None: ...


class Stopping(Protocol):
    """Whether the session is shutting down."""

    @property
    def stopping(self) -> bool: ...


class ClientLog(Protocol):
    """``window/logMessage``."""

    def window_log_message(self, params: types.LogMessageParams) -> None: ...


class PullMode(Protocol):
    """Whether the client pulls diagnostics (else the server pushes them)."""

    @property
    def pull_diagnostics(self) -> bool: ...


class ProjectRegistration(Protocol):
    """Registering the project at a root (an event's or a command's doing, never a read's)."""

    def add_project(self, root: Path) -> Project | None: ...


class EditorEvent(Protocol):
    """An editor's buffer entering the project state (``apply_editor``)."""

    def apply_editor(self, uri: str) -> None: ...


class DiskEvent(Protocol):
    """Files changed on disk, into the debounced watch pass (or at once)."""

    def files_changed(self, paths: list[Path], *, immediate: bool = False) -> None: ...


class DiskPass(Protocol):
    """The watch pass run now for some paths (after a write of the server's own, a check)."""

    def process_disk(self, paths: list[Path]) -> tuple[list[str], list[str]]: ...


class Publisher(Protocol):
    """Diagnose a file now and push the result (nothing in pull mode)."""

    def publish(self, uri: str, found: tuple[Any, ...] | None = None, ctx: Any = None) -> None: ...


class Clearer(Protocol):
    """Remove what the client shows for a file."""

    def clear_diagnostics(self, uri: str) -> None: ...


class Republisher(Protocol):
    """Re-diagnose files soon (push) or ask the client to pull again."""

    def republish(self, uris: set[str]) -> None: ...


class RefreshRequest(Protocol):
    """Pull mode: ask the client to pull diagnostics again."""

    def request_refresh(self) -> None: ...


class RefreshAll(Protocol):
    """Re-diagnose every file (settings, configuration or git state changed)."""

    def refresh_all(self) -> None: ...


class ShownFiles(Protocol):
    """The URIs whose diagnostics the client shows now (push mode)."""

    def shown_uris(self) -> frozenset[str]: ...


class Verdicts(Protocol):
    """A file's verdict and findings as the editor shows them, and whether the server diagnoses it (reads)."""

    def is_memzoi(self, snap: Snapshot) -> bool: ...
    def findings_for(self, snap: Snapshot) -> list[Finding]: ...
    def verdict(self, snap: Snapshot) -> FileVerdict: ...
    def gone_from_disk(self, snap: Snapshot) -> bool: ...


class DiagnosticsChannel(Protocol):
    """The diagnostics feature's own: the generations its result ids hold."""

    @property
    def settings_generation(self) -> int: ...
    @property
    def crossfile_generation(self) -> int: ...


class CommandRegistry(Protocol):
    """Registering a ``workspace/executeCommand`` handler (pygls's ``command`` decorator)."""

    def command(self, command_name: str) -> Callable[[F], F]: ...


class BufferDiagnostics(Protocol):
    """An open buffer's diagnostics once typing pauses, its timer dropped and its gone mark forgotten when it closes."""

    def schedule_diagnostics(self, uri: str) -> None: ...
    def cancel_diagnostics(self, uri: str) -> None: ...
    def forget_gone(self, uri: str) -> None: ...


class WatchHooks(Protocol):
    """What the watch pass asks of the session: the client's registration of watchers, the files it changed re-diagnosed, whether a project was forgotten with its folder, and the inbox watch told."""

    async def client_register_capability_async(self, params: types.RegistrationParams) -> None: ...
    def on_files_changed(self, updated: list[str], removed: list[str]) -> None: ...
    def is_forgotten(self, root: Path) -> bool: ...
    def inbox_paths_changed(self, paths: list[Path]) -> None: ...


class ProjectRemoval(Protocol):
    """Dropping a project: out of the session, its watcher stopped, what was shown of it forgotten."""

    def remove_project(self, root: Path) -> Project | None: ...
    def unwatch_project(self, project: Project) -> None: ...
    def forget_diagnostics(self, uris: set[str]) -> None: ...


class ScanProgress(Protocol):
    """The scan's work-done progress, the end of a project's first scan and the flush of its queued republishes."""

    @property
    def work_done_progress(self) -> Progress: ...

    def on_project_scanned(self, project: Project) -> None: ...
    def flush_republish(self) -> None: ...


__all__ = [
    "BufferDiagnostics",
    "CapabilitiesView",
    "Clearer",
    "ClientLog",
    "ClientProtocol",
    "CommandRegistry",
    "ContextView",
    "DiagnosticsChannel",
    "DiskEvent",
    "DiskPass",
    "DocumentReader",
    "DocumentsView",
    "EditorEvent",
    "EventLoop",
    "F",
    "FeatureRegistry",
    "KnownFiles",
    "ProjectLookup",
    "ProjectRegistration",
    "ProjectRemoval",
    "ProjectsView",
    "PublishRecord",
    "Publisher",
    "PullMode",
    "RefreshAll",
    "RefreshRequest",
    "Republisher",
    "ScanProgress",
    "ScanThread",
    "SettingsView",
    "ShownFiles",
    "Stopping",
    "Verdicts",
    "WatchHooks",
    "WorkspaceView",
]
