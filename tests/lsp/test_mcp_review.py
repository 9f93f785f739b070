"""The review side sees what an agent proposed: a packet written by ``memzoi-mcp`` reaches a running language
server without a reload, with diagnostics, an Apply action, and a hover naming the client and the reason."""

from __future__ import annotations

import asyncio
import re

from lsprotocol import types

from ..mcp.conftest import draft_args
from ..mcp.test_stdio_e2e import connect
from .conftest import git_init, is_pull, refusal
from .test_lifecycle import actions_for, find


def _plain(markdown: str) -> str:
    return re.sub(r"\\(.)", r"\1", markdown)


async def _until(check, guard: float = 60.0):
    """Await ``check()`` again and again until it returns something truthy, and return that. ``guard`` only stops
    a hung run (the test never asserts how long the server took)."""

    async def loop():
        while not (found := await check()):
            await asyncio.sleep(0.02)  # between two questions to the server, not a wait for it to settle
        return found

    return await asyncio.wait_for(loop(), guard)


async def _seen(client, uri: str):
    """What shows that the server has seen the new file on disk, without the file being opened: a pull client's
    workspace report holds it (with its diagnostics); a push client, which is sent diagnostics only for files that
    have some, finds it among the workspace symbols."""
    if is_pull(client):
        report = await client.workspace_diagnostic_async(types.WorkspaceDiagnosticParams(previous_result_ids=[]))
        return [r for r in report.items if r.uri == uri]
    found = await client.workspace_symbol_async(types.WorkspaceSymbolParams(query="RefreshLock"))
    return [sym for sym in found or [] if sym.location.uri == uri]


async def test_packet_proposed_over_mcp_reaches_the_editor_unopened(workspace, memzoi_home, client):
    git_init(workspace)
    async with connect(workspace, memzoi_home, client="claude-code") as s:
        res = await s.call_tool("propose_memory", draft_args())
    assert not res.is_error, res.content[0].text
    path = workspace / res.structured_content["path"]
    uri = path.as_uri()
    if client.registrations:  # VS Code watches files for the server (it registered for them); else its own watcher
        client.workspace_did_change_watched_files(
            types.DidChangeWatchedFilesParams(changes=[types.FileEvent(uri=uri, type=types.FileChangeType.Created)])
        )
    seen = await _until(lambda: _seen(client, uri))
    if is_pull(client):
        (report,) = seen
        assert report.kind == "full" and list(report.items) == []  # the server's diagnostics of the unopened packet
    else:
        assert uri not in client.diagnostic_history  # clean and never shown: nothing to publish
    apply = find(await actions_for(client, uri), "Apply proposal")  # offered on the file nobody opened
    assert apply.command is not None and apply.command.arguments[0]
    hover = await client.text_document_hover_async(
        types.HoverParams(
            text_document=types.TextDocumentIdentifier(uri=uri), position=types.Position(line=0, character=1)
        )
    )
    text = _plain(hover.contents.value)
    assert re.search(r"proposed by claude-code via MCP at \d{4}-\d\d-\d\dT", text), text
    assert "reason: fixed the same race twice" in text


async def test_local_candidates_listed_approved_and_rejected_from_the_editor(workspace, memzoi_home, client):
    async with connect(workspace, memzoi_home, client="codex") as s:
        first = await s.call_tool("propose_memory", draft_args(destination="local"))
        second = await s.call_tool("propose_memory", draft_args(destination="local", body="Prefer small PRs."))
    ids = [first.structured_content["candidate"]["id"], second.structured_content["candidate"]["id"]]

    async def run(command: str, arg: dict):
        return await client.workspace_execute_command_async(
            types.ExecuteCommandParams(command=command, arguments=[arg])
        )

    listed = await run("memzoi.local.list", {})
    assert [c["id"] for c in listed["candidates"]] == ids
    assert listed["candidates"][0]["actor"] == "codex" and listed["candidates"][0]["root"] == str(workspace)
    applied = await run("memzoi.local.approve", {"candidate_id": ids[0]})
    assert applied["status"] == "applied" and applied["operation"] == "local_promote"
    refused = await refusal(run("memzoi.local.reject", {"candidate_id": ids[1]}))
    assert refused["code"] == "reason_required"
    rejected = await run("memzoi.local.reject", {"candidate_id": ids[1], "reason": "not durable"})
    assert rejected["state"] == "rejected"
    assert (await run("memzoi.local.list", {}))["candidates"] == []
