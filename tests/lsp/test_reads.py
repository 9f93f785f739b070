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
