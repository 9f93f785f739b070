"""End-to-end fixtures: the real ``memzoi-lsp`` over stdio, driven by pytest-lsp's client with the capabilities
of VS Code (utf-16, push diagnostics) and Neovim 0.11 (utf-8, pull diagnostics).

Markers: ``@pytest.mark.init_options({...})`` sets ``initializationOptions``; ``@pytest.mark.config({...})``
sets what the client answers for ``workspace/configuration`` (section ``memzoi``).
"""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, Union

import pytest
from lsprotocol import types
from pygls.protocol import default_converter
from pytest_lsp import ClientServerConfig, LanguageClient, client_capabilities
from pytest_lsp.client import register_lsp_features

from .. import builders

PROFILES = {
    "vscode": "visual-studio-code",  # utf-16, push diagnostics, dynamic watched-files registration
    "neovim": "neovim@v0.11.0",  # utf-8 first, pull diagnostics, no dynamic watched files on Linux
}


def record_text(rid: str, title: str = "Use pnpm", extra: str = "") -> str:
    """A valid current-profile record (the shared builder, with a ``source_ref`` link); ``extra`` adds raw
    frontmatter lines."""
    return builders.record(
        rid,
        title=title,
        description="Use pnpm for every package task.",
        timestamp="2026-07-05T20:16:46Z",
        source="cli",
        source_ref="https://example.com/decisions/42",
        body=f"{title}: applies to every package task.",
        extra=extra,
    )


def proposal_text(
    pid: str,
    title: str = "Prefer server sessions",
    action: str = "create",
    supersedes=(),
    proposal_extra: dict | None = None,
    body: str = "Validate sessions on the server.",
) -> str:
    """A pending proposal packet with a path and a url source; ``proposal_extra`` adds keys to its ``proposal``
    block (a supersede or tombstone needs its ``reason`` there: none is added)."""
    block = {"action": action, "proposed_by": "agent", "proposed_at": builders.PACKET_TIME, **(proposal_extra or {})}
    return builders.packet(
        pid,
        title=title,
        description=f"{title}.",
        proposal=block,
        created_by="agent",
        sources=[{"path": "src/app.ts"}, {"url": "https://example.com/issue/7"}],
        supersedes=list(supersedes),
        body=body,
    )


def fixed_converter():
    """lsprotocol structures any code-action result item with a ``command`` key as ``Command``; a CodeAction
    carrying a command then comes back mangled. Decide by the type of ``command`` instead."""
    conv = default_converter()

    def hook(obj, _):
        if isinstance(obj, dict) and isinstance(obj.get("command"), str):
            return conv.structure(obj, types.Command)
        return conv.structure(obj, types.CodeAction)

    conv.register_structure_hook(Union[types.Command, types.CodeAction], hook)  # noqa: UP007 - the key lsprotocol's converter uses
    return conv


def make_client() -> LanguageClient:
    """pytest-lsp client plus handlers for the requests it does not answer by default."""
    client = LanguageClient(converter_factory=fixed_converter)
    register_lsp_features(client)
    client.applied_edits: list[types.ApplyWorkspaceEditParams] = []  # type: ignore[misc]
    client.registrations: list[types.Registration] = []  # type: ignore[misc]
    client.message_requests: list[types.ShowMessageRequestParams] = []  # type: ignore[misc]
    client.message_reply: Callable[[types.ShowMessageRequestParams], Any] | None = None  # type: ignore[misc]

    client.diagnostic_history: dict[str, list[list[types.Diagnostic]]] = {}  # type: ignore[misc]

    features = client.protocol.fm.features
    default_publish = features[types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS]

    def publish(params: types.PublishDiagnosticsParams):
        client.diagnostic_history.setdefault(params.uri, []).append(list(params.diagnostics))
        return default_publish(params)

    features[types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS] = publish

    client.memzoi_notes: list[tuple[str, Any]] = []  # type: ignore[misc]  # memzoi/changed, memzoi/inboxChanged

    @client.feature("memzoi/changed")
    def memzoi_changed(params):
        client.memzoi_notes.append(("memzoi/changed", params))

    @client.feature("memzoi/inboxChanged")
    def memzoi_inbox_changed(params):
        client.memzoi_notes.append(("memzoi/inboxChanged", params))

    @client.feature(types.WORKSPACE_APPLY_EDIT)
    def apply_edit(params: types.ApplyWorkspaceEditParams):
        client.applied_edits.append(params)
        return types.ApplyWorkspaceEditResult(applied=True)

    @client.feature(types.CLIENT_REGISTER_CAPABILITY)
    def register(params: types.RegistrationParams):
        client.registrations.extend(params.registrations)
        return None

    client.lens_refreshes: int = 0  # type: ignore[misc]  # workspace/codeLens/refresh requests received

    @client.feature(types.WORKSPACE_CODE_LENS_REFRESH)
    def code_lens_refresh(params: None):
        client.lens_refreshes += 1  # type: ignore[attr-defined]
        return None

    @client.feature(types.WINDOW_SHOW_MESSAGE_REQUEST)
    def show_message_request(params: types.ShowMessageRequestParams):
        client.message_requests.append(params)
        reply = client.message_reply
        return reply(params) if reply else (params.actions[0] if params.actions else None)

    return client


@pytest.fixture
def memzoi_home(tmp_path: Path) -> Path:
    """A private runtime plane for the server under test."""
    home = tmp_path / "home"
    home.mkdir()
    return home


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    """A project with ``.memzoi/records`` (two records) and one pending proposal."""
    root = tmp_path / "ws"
    records = root / ".memzoi" / "records"
    pending = root / ".memzoi" / "proposals" / "pending"
    records.mkdir(parents=True)
    pending.mkdir(parents=True)
    (root / "src").mkdir()
    (root / "src" / "app.ts").write_text("export {}\n")
    (records / "use-pnpm.md").write_text(record_text("use-pnpm"))
    (records / "use-node-22.md").write_text(record_text("use-node-22", "Use Node 22", extra="supersedes: use-pnpm\n"))
    (pending / "mem-new.md").write_text(proposal_text("mem-new"))
    return root


def git_init(root: Path) -> None:
    """Make ``root`` a git repository with everything committed (deterministic author)."""
    env = {
        **os.environ,
        "GIT_AUTHOR_NAME": "Ada Reviewer",
        "GIT_AUTHOR_EMAIL": "ada@example.com",
        "GIT_COMMITTER_NAME": "Ada Reviewer",
        "GIT_COMMITTER_EMAIL": "ada@example.com",
        "GIT_AUTHOR_DATE": "2026-07-07T10:00:00Z",
        "GIT_COMMITTER_DATE": "2026-07-07T10:00:00Z",
    }
    for args in (["init", "-q", "-b", "main"], ["add", "-A"], ["commit", "-q", "-m", "Add <b>memory</b> records"]):
        subprocess.run(["git", *args], cwd=root, env=env, check=True, capture_output=True, stdin=subprocess.DEVNULL)


def server_command() -> list[str]:
    """The server as users start it (``python -m memzoi_lsp`` is what the ``memzoi-lsp`` script runs)."""
    return [sys.executable, "-m", "memzoi_lsp"]


async def start_client(
    profile: str,
    root: Path,
    home: Path,
    *,
    init_options: Any = None,
    config: dict | None = None,
    capabilities: types.ClientCapabilities | None = None,
    wait_ready: bool = True,
    wait_scanned: bool = True,
    env: dict[str, str] | None = None,
) -> LanguageClient:
    """Spawn the server and run ``initialize``/``initialized`` as ``profile`` with ``root`` as workspace (``env``:
    more variables for the server's process)."""
    cfg = ClientServerConfig(
        server_command=server_command(),
        client_factory=make_client,
        server_env={**os.environ, "MEMZOI_HOME": str(home), "PYTHONUNBUFFERED": "1", **(env or {})},
    )
    client = await cfg.start()
    client.profile = profile  # type: ignore[attr-defined]
    client.root = root  # type: ignore[attr-defined]
    if config is not None:
        client.set_configuration(config, section="memzoi")
    caps = capabilities or client_capabilities(PROFILES[profile])
    ready = client.wait_for_notification(types.WINDOW_LOG_MESSAGE) if wait_ready else None
    client.init_result = await client.initialize_session(  # type: ignore[attr-defined]
        types.InitializeParams(
            capabilities=caps,
            root_uri=root.as_uri(),
            workspace_folders=[types.WorkspaceFolder(uri=root.as_uri(), name=root.name)],
            initialization_options=init_options,
        )
    )
    if ready is not None:
        await asyncio.wait_for(ready, 10)
    if wait_scanned and (root / ".memzoi").is_dir():
        # the scan's own message, not the log bridge's copy of its log record (which can arrive first)
        await wait_until(
            lambda: any(m.message.startswith("memzoi-lsp: scanned") for m in client.log_messages), timeout=20
        )
    return client


@pytest.fixture(params=list(PROFILES))
async def client(request, workspace: Path, memzoi_home: Path):
    """A started, initialised client for each profile; shut down cleanly afterwards."""
    init = request.node.get_closest_marker("init_options")
    conf = request.node.get_closest_marker("config")
    lsp = await start_client(
        request.param,
        workspace,
        memzoi_home,
        init_options=init.args[0] if init else None,
        config=conf.args[0] if conf else None,
    )
    yield lsp
    try:
        await asyncio.wait_for(lsp.shutdown_session(), 10)
    finally:
        await lsp.stop()


async def stop_client(lsp: LanguageClient) -> None:
    """End a session a test started with :func:`start_client`: ``shutdown`` and ``exit``, then stop the process."""
    try:
        await asyncio.wait_for(lsp.shutdown_session(), 10)
    finally:
        await lsp.stop()


def is_pull(client: LanguageClient) -> bool:
    """True when the session uses pull diagnostics (the client advertised ``textDocument.diagnostic``)."""
    caps = client.capabilities
    return bool(caps and caps.text_document and caps.text_document.diagnostic)


async def wait_until(predicate: Callable[[], Any], timeout: float = 8.0, interval: float = 0.02) -> Any:
    """Poll ``predicate`` until it returns something truthy; fail after ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"condition not met within {timeout}s")
        await asyncio.sleep(interval)


async def diagnostics(
    client: LanguageClient, uri: str, until: Callable[[list], bool] = lambda d: True, timeout: float = 8.0
) -> list[types.Diagnostic]:
    """The server's current diagnostics for ``uri``: pulled (Neovim) or awaited from push (VS Code) until
    ``until(diags)`` holds."""
    deadline = time.monotonic() + timeout
    while True:
        if is_pull(client):
            report = await client.text_document_diagnostic_async(
                types.DocumentDiagnosticParams(text_document=types.TextDocumentIdentifier(uri=uri))
            )
            items = list(getattr(report, "items", None) or [])
            if until(items):
                return items
        else:
            items = client.diagnostics.get(uri)
            if items is not None and until(list(items)):
                return list(items)
        if time.monotonic() > deadline:
            raise AssertionError(f"diagnostics for {uri} never matched; last: {items!r}")
        await asyncio.sleep(0.03)


def open_doc(client: LanguageClient, path: Path, text: str | None = None, version: int = 1) -> str:
    """Send ``didOpen`` for ``path`` (with ``text`` or the file's content); returns the URI."""
    uri = path.as_uri()
    client.text_document_did_open(
        types.DidOpenTextDocumentParams(
            text_document=types.TextDocumentItem(
                uri=uri,
                language_id="markdown",
                version=version,
                text=text if text is not None else path.read_text(encoding="utf-8"),
            )
        )
    )
    return uri


def units(text: str, profile: str) -> int:
    """Length of ``text`` in the profile's position encoding (utf-16 code units or utf-8 bytes)."""
    if profile == "neovim":
        return len(text.encode("utf-8"))
    return len(text.encode("utf-16-le")) // 2


def pytest_configure(config) -> None:
    """Register this folder's markers."""
    config.addinivalue_line("markers", "init_options(value): initializationOptions sent by the test client")
    config.addinivalue_line("markers", "config(value): the client's answer to workspace/configuration (memzoi)")


async def refusal(pending: Any) -> dict:
    """Await a command that must be refused; return the error response's ``data`` (``{"code", "message"}``).

    Refusals are JSON-RPC error responses, never successful results carrying an error object."""
    from pygls.exceptions import JsonRpcException

    with pytest.raises(JsonRpcException) as info:
        await pending
    assert info.value.code in (-32602, -32803), info.value
    return info.value.data
