"""Requests read, they never publish (issue 32): a request of any read feature (hover, code actions, a diagnostics
pull, code lenses, navigation: definition, links, completion, document and workspace symbols; the inbox's and
resident memory's listings) on a changed buffer changes no state and re-diagnoses no other file. The change itself
(``didChange``) is what enters the project's state and makes the other files' findings change."""

from __future__ import annotations

import asyncio
from pathlib import Path

from lsprotocol import types
from pytest_lsp import client_capabilities

from ..builders import edit
from .conftest import PROFILES, diagnostics, open_doc, record_text, start_client

DOC = types.TextDocumentIdentifier


async def _reads(client, uri: str, line: int) -> None:
    """One request of every read feature on ``uri``, each answered."""
    await client.text_document_hover_async(
        types.HoverParams(text_document=DOC(uri=uri), position=types.Position(line=line, character=2))
    )
    await client.text_document_code_action_async(
        types.CodeActionParams(
            text_document=DOC(uri=uri),
            range=types.Range(start=types.Position(line=0, character=0), end=types.Position(line=0, character=0)),
            context=types.CodeActionContext(diagnostics=[]),
        )
    )
    await client.text_document_diagnostic_async(types.DocumentDiagnosticParams(text_document=DOC(uri=uri)))
    at = types.Position(line=line, character=2)
    await client.text_document_code_lens_async(types.CodeLensParams(text_document=DOC(uri=uri)))
    await client.text_document_definition_async(types.DefinitionParams(text_document=DOC(uri=uri), position=at))
    await client.text_document_document_link_async(types.DocumentLinkParams(text_document=DOC(uri=uri)))
    await client.text_document_completion_async(types.CompletionParams(text_document=DOC(uri=uri), position=at))
    await client.text_document_document_symbol_async(types.DocumentSymbolParams(text_document=DOC(uri=uri)))
    await client.workspace_symbol_async(types.WorkspaceSymbolParams(query="pnpm"))
    for command in ("memzoi.proposals.list", "memzoi.resident.list"):
        await client.workspace_execute_command_async(types.ExecuteCommandParams(command=command, arguments=[{}]))


async def test_a_hover_code_action_or_pull_publishes_nothing(workspace: Path, memzoi_home: Path):
    # Pull (Neovim, with refresh support): no debounce timer publishes on its own, so every refresh the client gets
    # is a handler's doing.
    caps = client_capabilities(PROFILES["neovim"])
    caps.workspace.diagnostics = types.DiagnosticWorkspaceClientCapabilities(refresh_support=True)
    client = await start_client("neovim", workspace, memzoi_home, capabilities=caps)
    try:
        records = workspace / ".memzoi" / "records"
        newer = (records / "use-node-22.md").as_uri()  # supersedes use-pnpm while both are active
        await diagnostics(client, newer, lambda d: any(x.code == "lifecycle_inconsistent" for x in d))
        path = records / "use-pnpm.md"
        text = record_text("use-pnpm")
        uri = open_doc(client, path, text)
        line = text.split("\n").index("status: active")
        await _reads(client, uri, line)
        before = client.diagnostic_refresh_count
        client.text_document_did_change(
            types.DidChangeTextDocumentParams(
                text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=2),
                content_changes=[
                    types.TextDocumentContentChangeWholeDocument(
                        text=edit(text, "status: active", "status: superseded")
                    )
                ],
            )
        )
        # The change is applied as it arrives: the refresh it asks for comes before the answer to a later request.
        await client.text_document_hover_async(
            types.HoverParams(text_document=DOC(uri=uri), position=types.Position(line=0, character=0))
        )
        assert client.diagnostic_refresh_count == before + 1, "the change did not reach the other record"
        await _reads(client, uri, line)
        await _reads(client, newer, 1)
        assert client.diagnostic_refresh_count == before + 1, "a read asked the client to pull again"
        got = await diagnostics(client, newer, lambda d: not any(x.code == "lifecycle_inconsistent" for x in d))
        assert not any(x.code == "lifecycle_inconsistent" for x in got)
    finally:
        try:
            await asyncio.wait_for(client.shutdown_session(), 10)  # also after a failed assertion
        finally:
            await client.stop()


class _Docs:
    """What :mod:`memzoi_lsp.closed` reads of the document cache: nothing is open."""

    def is_open(self, uri: str) -> bool:
        return False

    def open_uri_for(self, path: Path | None) -> str | None:
        return None


class _Session:
    """What :mod:`memzoi_lsp.closed` and ``MemzoiServer.gone_from_disk`` read of the server."""

    def __init__(self, project) -> None:
        from memzoi_lsp.watch import FileWatching

        self.project = project
        self.docs = _Docs()
        self.watching = FileWatching(self)  # type: ignore[arg-type]  # holds the gone marks

    def project_for(self, path):
        return self.project


def _scanned_project(workspace: Path):
    """A project of ``workspace`` whose closed files hold compact verdicts, as the first scan leaves them."""
    from memzoi.project.verdict import ProjectContext
    from memzoi.runs.scanverdicts import analyse
    from memzoi_lsp.project import Project

    project = Project(workspace)
    paths = project.listing()
    uris = project.adopt(paths)
    ctx = ProjectContext.of(project.memzoi_dir, git=project.git)
    for uri, got in zip(uris, analyse(paths, ctx, index_root=workspace), strict=True):
        assert got is not None
        project.verdicts[uri] = got.verdict
    return project


def test_a_read_of_a_changed_closed_file_keeps_the_state(workspace: Path):
    """``closed.lookup`` of a file changed on disk declines the stale compact verdict (the caller analyses the
    file) and drops nothing: the watcher's batch does (``apply_events``)."""
    from memzoi_lsp import closed

    project = _scanned_project(workspace)
    path = workspace / ".memzoi" / "records" / "use-pnpm.md"
    uri = project.key_of(path)
    ls = _Session(project)
    found = closed.lookup(ls, uri)
    assert found is not None and found[1] is project.verdicts[uri]
    path.write_text(edit(record_text("use-pnpm"), "status: active", "status: superseded"))
    held = dict(project.verdicts)
    assert closed.lookup(ls, uri) is None  # stale: not used
    assert project.verdicts == held  # and not dropped by the read
    changes = project.apply_events([path])  # the change enters the state through the event
    assert changes.updated == [uri] and uri not in project.verdicts


def test_gone_from_disk_is_a_read(workspace: Path):
    """An open buffer's gone mark stays when its file is back; only the watcher's batch takes it away."""
    from memzoi_lsp.documents import Snapshot, path_to_uri
    from memzoi_lsp.server import MemzoiServer

    path = workspace / ".memzoi" / "records" / "use-pnpm.md"
    uri = path_to_uri(path)
    ls = _Session(None)
    ls.watching.gone.add(uri)
    snap = Snapshot(uri, path, "", 1, True, None)  # type: ignore[arg-type]  # the analysis is not read
    assert not MemzoiServer.gone_from_disk(ls, snap)  # type: ignore[arg-type]  # the file is there
    assert ls.watching.gone == {uri}
    text = path.read_text()
    path.unlink()
    assert MemzoiServer.gone_from_disk(ls, snap)  # type: ignore[arg-type]
    path.write_text(text)
    assert not MemzoiServer.gone_from_disk(ls, snap) and ls.watching.gone == {uri}  # type: ignore[arg-type]


class _Registering:
    """A session with no registered project that records every project registration asked of it."""

    def __init__(self) -> None:
        self.projects: dict[Path, object] = {}
        self.added: list[Path] = []

    def add_project(self, root: Path):
        self.added.append(root)
        self.projects[root] = object()
        return None

    def project_for(self, path):
        return None


def test_a_read_of_an_input_file_outside_the_projects_registers_nothing(tmp_path: Path):
    """Whether a runtime input file outside the registered projects is one (``is_memzoi``, ``input_root``) is a
    read: it registers no project. Opening it (``sync.discover``, the editor's event) registers the project of
    the ``.memzoi`` above it, and the read then finds it."""
    from memzoi.judge.analysis import analyze_text
    from memzoi_lsp import reads, routing_view, sync
    from memzoi_lsp.documents import Snapshot, path_to_uri

    from .test_routing import SESSION

    root = tmp_path / "elsewhere"
    (root / ".memzoi").mkdir(parents=True)
    path = root / "session.yml"
    path.write_text(SESSION, encoding="utf-8")
    uri = path_to_uri(path)
    snap = Snapshot(uri, path, SESSION, 1, True, analyze_text(SESSION, path))
    ls = _Registering()
    assert routing_view.input_root(ls, snap) is None  # type: ignore[arg-type]
    assert not reads.is_memzoi(ls, snap)  # type: ignore[arg-type]
    assert ls.added == [] and ls.projects == {}, "a read registered a project"
    sync.discover(ls, uri, SESSION)  # type: ignore[arg-type]  # the open event
    assert ls.added == [root]
    assert routing_view.input_root(ls, snap) == root
    assert reads.is_memzoi(ls, snap)  # type: ignore[arg-type]
    sync.discover(ls, uri, SESSION)  # type: ignore[arg-type]  # registered once
    assert ls.added == [root]
    changed = _Registering()
    sync.discover_input(changed, uri, SESSION)  # type: ignore[arg-type]  # a change that made it an input file
    assert changed.added == [root]
    record = root / ".memzoi" / "records" / "a.yml"
    sync.discover_input(changed, path_to_uri(record), SESSION)  # type: ignore[arg-type]  # inside .memzoi: no input
    assert changed.added == [root]
