"""The review side sees what an agent proposed: a packet written by ``memzoi-mcp`` reaches a running language
server without a reload, with diagnostics, an Apply action, and a hover naming the client and the reason."""

from __future__ import annotations

import asyncio
import re

from lsprotocol import types

from .conftest import diagnostics, git_init, open_doc
from .test_lifecycle import actions_for, find
from ..mcp.conftest import draft_args
from ..mcp.test_stdio_e2e import connect


def _plain(markdown: str) -> str:
    return re.sub(r"\\(.)", r"\1", markdown)


async def test_packet_proposed_over_mcp_reaches_the_editor(workspace, memzoi_home, client):
    git_init(workspace)
    async with connect(workspace, memzoi_home, client="claude-code") as s:
        res = await s.call_tool("propose_memory", draft_args())
    assert not res.is_error, res.content[0].text
    path = workspace / res.structured_content["path"]
    uri = path.as_uri()
    if client.registrations:  # VS Code watches files for the server; otherwise the server's own watcher does
        client.workspace_did_change_watched_files(types.DidChangeWatchedFilesParams(
            changes=[types.FileEvent(uri=uri, type=types.FileChangeType.Created)]))
    # Known to the server without a reload: its workspace symbols list the new packet.
    for _ in range(400):
        found = await client.workspace_symbol_async(types.WorkspaceSymbolParams(query="RefreshLock"))
        if any(sym.location.uri == uri for sym in found or []):
            break
        await asyncio.sleep(0.05)
    assert any(sym.location.uri == uri for sym in found or [])
    doc = open_doc(client, path)
    diags = await diagnostics(client, doc)
    assert diags == []
    apply = find(await actions_for(client, doc), "Apply proposal")
    assert apply.command is not None
    hover = await client.text_document_hover_async(types.HoverParams(
        text_document=types.TextDocumentIdentifier(uri=doc), position=types.Position(line=0, character=1)))
    text = _plain(hover.contents.value)
    assert re.search(r"proposed by claude-code via MCP at \d{4}-\d\d-\d\dT", text), text
    assert "reason: fixed the same race twice" in text
