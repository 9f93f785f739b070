"""The review flow after the server's own writes (issue 28): ``memzoi/changed`` names every touched file, deleted
files lose their diagnostics, a buffer still holding the text from before a write is judged from the disk until
the client reloads it, and ``memzoi/inboxChanged`` follows a change of the pending proposals."""

from __future__ import annotations

from pathlib import Path

import pytest
from lsprotocol import types

from .conftest import diagnostics, git_init, is_pull, open_doc, wait_until


def notes(client, method: str) -> list:
    return [p for m, p in client.memzoi_notes if m == method]


def field(obj, name: str):
    return obj.get(name) if isinstance(obj, dict) else getattr(obj, name)


async def execute(client, command: str, arg: dict):
    return await client.workspace_execute_command_async(types.ExecuteCommandParams(command=command, arguments=[arg]))


@pytest.fixture
def git_workspace(workspace: Path) -> Path:
    git_init(workspace)
    return workspace


async def test_apply_notifies_changed_and_clears_the_moved_packet(git_workspace: Path, client):
    root = git_workspace
    packet = root / ".memzoi" / "proposals" / "pending" / "mem-new.md"
    uri = open_doc(client, packet)
    await diagnostics(client, uri)
    result = await execute(client, "memzoi.apply", {"uri": uri})
    assert result["message"].startswith('Applied "Prefer server sessions" -> records/'), result
    assert len(result["message"]) <= 120 and result["change_id"] not in result["message"]
    assert result["change_id"] in result["detail"]
    changed = await wait_until(lambda: notes(client, "memzoi/changed"))
    note = changed[-1]
    assert field(note, "changeId") == result["change_id"] and field(note, "operation") == "apply"
    assert field(note, "message") == result["message"]
    touched = {field(t, "uri"): field(t, "deleted") for t in field(note, "touched")}
    assert touched[packet.as_uri()] is True
    assert any(d is False and "/records/" in u for u, d in touched.items())
    await wait_until(lambda: notes(client, "memzoi/inboxChanged"))
    if not is_pull(client):  # push: the deleted file's diagnostics are cleared by an empty publish
        assert client.diagnostic_history[packet.as_uri()][-1] == []


async def test_a_buffer_from_before_a_supersede_is_judged_from_the_disk(git_workspace: Path, client):
    """The record open in the editor is rewritten by applying a supersede of it: until the client reloads the
    buffer, no lifecycle_inconsistent or duplicate_content is judged from its old text."""
    root = git_workspace
    record = root / ".memzoi" / "records" / "use-node-22.md"
    uri = open_doc(client, record)
    await diagnostics(client, uri)
    made = await execute(
        client,
        "memzoi.supersede",
        {"uri": uri, "reason": "Node 24 is the new LTS", "title": "Use Node 24", "body": "Use Node 24 for builds."},
    )
    [created] = [f["path"] for f in made["files"] if f["before"] == "absent"]
    packet_uri = (root / created).as_uri()
    await execute(client, "memzoi.apply", {"uri": packet_uri})
    assert "status: superseded" in record.read_text()
    bad = {"lifecycle_inconsistent", "duplicate_content"}
    got = await diagnostics(client, uri, until=lambda ds: not any(d.code in bad for d in ds))
    assert not any(d.code in bad for d in got)
    # and every other record the change touched agrees with the disk
    for path in (root / ".memzoi" / "records").glob("*.md"):
        ds = await diagnostics(client, path.as_uri()) if is_pull(client) else client.diagnostics.get(path.as_uri(), [])
        assert not any(d.code in bad for d in ds), (path.name, [d.code for d in ds])


async def test_a_pull_client_that_supports_refresh_is_asked_to_pull_again(git_workspace: Path, memzoi_home: Path):
    """Neovim 0.11 has no workspace/diagnostic/refresh; a pull client that has it is asked to re-pull after a
    change, and the deleted packet then has no diagnostics."""
    import asyncio

    from pytest_lsp import client_capabilities

    from .conftest import PROFILES, start_client

    caps = client_capabilities(PROFILES["neovim"])
    caps.workspace.diagnostics = types.DiagnosticWorkspaceClientCapabilities(refresh_support=True)
    client = await start_client("neovim", git_workspace, memzoi_home, capabilities=caps)
    refreshes: list[None] = []

    features = client.protocol.fm.features
    default = features[types.WORKSPACE_DIAGNOSTIC_REFRESH]

    def refresh(params):
        refreshes.append(None)
        return default(params)

    features[types.WORKSPACE_DIAGNOSTIC_REFRESH] = refresh

    try:
        packet = git_workspace / ".memzoi" / "proposals" / "pending" / "mem-new.md"
        uri = open_doc(client, packet)
        await diagnostics(client, uri)
        before = len(refreshes)
        await execute(client, "memzoi.apply", {"uri": uri})
        await wait_until(lambda: len(refreshes) > before)
        assert await diagnostics(client, packet.as_uri()) == []
    finally:
        await asyncio.wait_for(client.shutdown_session(), 10)
        await client.stop()
