"""The session's own handlers: ``initialize`` (capabilities, settings), ``initialized`` (configuration, the
client's file watching, the workspace's projects; their scans, the watchers, the inbox watch and the ledger's index
hook once the messages sent with it are handled, :meth:`.server.MemzoiServer.start_background`), ``shutdown`` and
``workspace/didChangeConfiguration``. Part of the composition root with :mod:`.server` (it starts the features; no
feature imports it).
"""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path
from typing import Any

from lsprotocol import types
from pygls.capabilities import get_capability

from . import diagnostics, sync, textdoc
from .documents import uri_to_path

# A real import (not TYPE_CHECKING): pygls resolves handlers' annotations at call time.
from .session import Session
from .settings import SECTION

log = logging.getLogger("memzoi_lsp")


def install_index_sync() -> None:
    """The ledger's index hook (:func:`memzoi.lifecycle.index_sync.install`): the server's ledgered changes keep the
    project store's index current, as the CLI's and the MCP server's do. The hook installed is :func:`sync_index`,
    which loads the lifecycle and the index at the first committed change, not now: installing it costs nothing
    on the warm start's path (issue 29; the lifecycle package and the index were ~0.1 s of CPU on the scan thread
    before the scan's listing)."""
    from memzoi.ledger import set_commit_hook  # noqa: PLC0415 lazy: start-up (loaded with the project state)

    set_commit_hook(sync_index)


def sync_index(root: Path, paths: list[str]) -> bool:
    """:func:`memzoi.lifecycle.index_sync.sync_index`, imported when the first change is committed."""
    from memzoi.lifecycle.index_sync import sync_index as sync  # noqa: PLC0415 lazy: start-up

    return sync(root, paths)


def _has(cap: Any, path: str) -> bool:
    return bool(get_capability(cap, path, None))


def register(server: Session) -> None:
    """Register the session's handlers (``initialize``, ``initialized``, ``shutdown``, configuration changes)."""
    server.feature(types.INITIALIZE)(initialize)
    server.feature(types.INITIALIZED)(initialized)
    server.feature(types.SHUTDOWN)(shutdown)
    server.feature(types.WORKSPACE_DID_CHANGE_CONFIGURATION)(did_change_configuration)


def initialize(ls: Session, params: types.InitializeParams) -> None:
    """``initialize``: the event loop, the position encoding, the diagnostics model (pull when the client
    pulls) and the settings sent with it."""
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


async def initialized(ls: Session, params: types.InitializedParams) -> None:
    """``initialized``: the client's configuration, its file watching, the workspace's projects and those of the
    documents open already, then the features that run for the whole session, once the documents the client opened
    with this notification are published (:meth:`.server.MemzoiServer.start_features`)."""
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
    await ls.watching.register_client_watching()
    for root in workspace_roots(ls):
        ls.add_project(root)  # only looks at root/.memzoi: never walks the folder (B30)
    for uri in ls.docs.open_uris():
        sync.discover(ls, uri)
    ls.start_features()  # when the messages sent with this one are handled: scans, watchers, the ledger's index hook
    ls.window_log_message(types.LogMessageParams(type=types.MessageType.Info, message="memzoi-lsp ready"))


def workspace_roots(ls: Session) -> list[Path]:
    """The folders of the client's workspace (its root path when it names no folder): where projects are looked
    for."""
    roots = [p for p in (uri_to_path(folder.uri) for folder in ls.workspace.folders.values()) if p]
    if not roots and ls.workspace.root_path:
        roots.append(Path(ls.workspace.root_path))
    return roots


def prefork(ls: Session, *, forked: bool = False) -> None:
    """``initialize`` answered, before the server starts a thread: a likely cold project's analysis is loaded and
    its workers' fork server forked from this process, sharing those imports
    (:func:`memzoi.runs.coldstart.prefork`); ``forked``: that was done before the protocol libraries were imported
    (``initialize`` answered from the kept answer), and is only logged now."""
    from memzoi.runs.coldstart import prefork as fork  # noqa: PLC0415 lazy: start-up

    if forked or fork([root.resolve() for root in workspace_roots(ls)]):
        log.info("the workers' fork server was forked from the server")


def shutdown(ls: Session, params: None) -> None:
    """``shutdown``, answered at once: the features' timers and threads and the background tasks stop; then the
    scan thread closes (:meth:`.scanjobs.ScanJobs.close`): its optional jobs not begun are dropped (an index
    refresh, a look at the inputs), its kept ones run (the scan's store writes and its publish set, which lets the
    next start replay instead of judging), then each project's index is closed, last, on that thread, before the
    process exits. The event loop never waits for the thread."""
    ls.stopping = True
    ls.stop_features()  # their timers, threads and background tasks
    from . import indexing  # noqa: PLC0415 lazy: start-up - it loads the core's index, which `initialize` does not need

    projects = list(ls.projects.values())

    def close_indexes() -> None:
        for project in projects:
            indexing.close(project)
        log.info("shutdown complete")

    # Closed in the loop's next turn, before the next message is handled: the cancelled scan's clean-up runs first
    # and queues its kept job (the workers' stop) behind the job running; inline, it would close the workers'
    # generator while that job reads it. A clean-up later than that finds the thread closed (RuntimeError).
    asyncio.get_running_loop().call_soon(ls.scan_executor.close, close_indexes)


async def did_change_configuration(ls: Session, params: types.DidChangeConfigurationParams) -> None:
    """``workspace/didChangeConfiguration``: the settings again (from the client when it answers
    ``workspace/configuration``); everything is re-diagnosed when they changed."""
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
