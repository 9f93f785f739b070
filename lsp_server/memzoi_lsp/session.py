"""The session protocol: what a feature module may use of the running server.

Features (``diagnostics``, ``hover``, ``actions``, ``lenses``, ``commands``, ``watch``, ``inbox``, ``resident``,
``navigation`` …) receive a :class:`Session`, never :class:`memzoi_lsp.server.MemzoiServer` itself: the server
module is the composition root, it imports every feature and no feature imports it back
(``tests/test_architecture.py`` fails on any import cycle of ``memzoi_lsp``, type-only and function-local imports
included). This module imports no feature, so any feature can name the session it receives.

A request handler reads (documents, verdicts, settings) and never changes project state: only the watch pass
(:meth:`memzoi.runs.projectstate.ProjectState.apply_events`), an editor change (``apply_editor``) and the scan
(``apply_scan``) change it, and only they publish (docs/architecture.md, "Features over snapshots").
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    import asyncio
    from concurrent.futures import ThreadPoolExecutor
    from pathlib import Path

    from memzoi.base.findings import Finding
    from memzoi.project.verdict import FileVerdict, ProjectContext

    from .documents import Documents, Snapshot
    from .project import Project
    from .settings import Settings


class Session(Protocol):
    """The server as a feature sees it (all on the event loop unless said otherwise).

    pygls's API (``workspace``, ``protocol``, ``client_capabilities``, ``feature``, ``command``, the
    ``window_*``/``workspace_*`` requests) comes with the server; the rest is Memzoi's session state, set in one
    place (:meth:`memzoi_lsp.server.MemzoiServer.__init__`).
    """

    # pygls's language server
    workspace: Any
    protocol: Any
    client_capabilities: Any
    work_done_progress: Any

    def feature(self, *args: Any, **kwargs: Any) -> Any: ...
    def command(self, *args: Any, **kwargs: Any) -> Any: ...
    def window_log_message(self, params: Any) -> None: ...
    def window_show_message(self, params: Any) -> None: ...
    def text_document_publish_diagnostics(self, params: Any) -> None: ...
    def workspace_configuration_async(self, params: Any) -> Any: ...
    def client_register_capability_async(self, params: Any) -> Any: ...
    def workspace_diagnostic_refresh(self, params: Any) -> Any: ...

    # session state (MemzoiServer.__init__ documents each)
    settings: Settings
    settings_generation: int
    crossfile_generation: int
    pull_diagnostics: bool
    init_options: Any
    docs: Documents
    projects: dict[Path, Project]
    gone: set[str]
    loop: asyncio.AbstractEventLoop | None
    scan_executor: ThreadPoolExecutor
    stopping: bool
    tasks: set[asyncio.Task]
    watching: Any  # memzoi_lsp.watch.FileWatching (typed loosely: this module imports no feature)
    inbox_watch: Any
    publishing: Any  # memzoi_lsp.diagnostics.Publishing (typed loosely: this module imports no feature)
    forgotten: set[Path]

    # reads (never change project state, never publish)
    def is_memzoi(self, snap: Snapshot) -> bool: ...
    def findings_for(self, snap: Snapshot) -> list[Finding]: ...
    def verdict(self, snap: Snapshot) -> FileVerdict: ...
    def context(self, project: Project) -> ProjectContext: ...
    def project_for(self, path: Path | None) -> Project | None: ...
    def known_uris(self) -> list[str]: ...

    # session actions
    def spawn(self, coro: Any) -> asyncio.Task: ...
    def republish(self, uris: set[str]) -> None: ...
    def flush_republish(self) -> None: ...
    def request_refresh(self) -> None: ...
    def refresh_all(self) -> None: ...
    def apply_settings(self, *sources: Any) -> None: ...
    def add_project(self, root: Path) -> Project | None: ...
    def on_project_scanned(self, project: Project) -> None: ...
    def on_files_changed(self, updated: list[str], removed: list[str]) -> None: ...
    def apply_editor(self, uri: str) -> None: ...


__all__ = ["Session"]
