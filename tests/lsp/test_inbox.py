"""The inbox's facts come from the core, for both client profiles: ``memzoi.proposals.list`` gives each pending
packet the can-apply verdict the code lens and the code actions show (every blocking reason, no Apply on a blocked
packet), the listing says when nothing is left to scan, and the history says whether each change can be undone."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from lsprotocol import types

from ..builders import edit
from .conftest import PROFILES, git_init, open_doc, proposal_text, start_client
from .test_lifecycle import actions_for, find, run


def command(client, name: str, *args):
    return client.workspace_execute_command_async(types.ExecuteCommandParams(command=name, arguments=list(args)))


@pytest.fixture
def blocked_workspace(workspace: Path) -> Path:
    """The workspace plus a packet the git-plane gate blocks (local-only sensitivity: a warning on a pending
    packet, which the client-side error count used to read as "0 blocking") and that names a missing target."""
    packet = workspace / ".memzoi" / "proposals" / "pending" / "mem-gated.md"
    text = proposal_text(
        "mem-gated", title="Keep my local notes", action="supersede", proposal_extra={"target": "gone"}
    )
    packet.write_text(edit(text, "sensitivity: repo-safe", "sensitivity: local-only"))
    git_init(workspace)
    return workspace


async def test_listing_follows_the_can_apply_rule(blocked_workspace: Path, client):
    listing = await command(client, "memzoi.proposals.list", {})
    assert listing["scanning"] is False
    rows = {p["id"]: p for p in listing["proposals"]}
    assert set(rows) == {"mem-new", "mem-gated"}
    ready, gated = rows["mem-new"], rows["mem-gated"]
    assert ready["can_apply"] is True and ready["blockers"] == [] and ready["statement"].startswith("yes")
    assert ready["path"] == ".memzoi/proposals/pending/mem-new.md" and ready["uri"].endswith("/mem-new.md")
    assert gated["can_apply"] is False and gated["action"] == "supersede" and gated["title"] == "Keep my local notes"
    codes = [b["code"] for b in gated["blockers"]]
    assert "sensitivity_not_repo_safe" in codes and len(codes) >= 2, codes  # every reason, not only the first
    assert all(b["message"] for b in gated["blockers"])
    assert gated["statement"].startswith("no: blocked by " + ", ".join(dict.fromkeys(codes)))

    # The code lens says the same: every blocking code, and no runnable Apply.
    uri = open_doc(client, blocked_workspace / ".memzoi" / "proposals" / "pending" / "mem-gated.md")
    lenses = await client.text_document_code_lens_async(
        types.CodeLensParams(text_document=types.TextDocumentIdentifier(uri=uri))
    )
    assert [lens.command.title for lens in lenses][0] == "Cannot apply: " + ", ".join(dict.fromkeys(codes))
    assert lenses[0].command.command == ""  # informational: nothing runs
    assert "memzoi.apply" not in {lens.command.command for lens in lenses}
    assert "memzoi.reject" in {lens.command.command for lens in lenses}
    # … and the code actions: Apply and its preview are disabled with the reasons, or absent.
    applies = [a for a in await actions_for(client, uri) if a.command and a.command.command == "memzoi.apply"]
    assert all(a.disabled and "sensitivity_not_repo_safe" in a.disabled.reason for a in applies)

    # Scoped to one file's project, and open documents count with their text.
    only = await command(client, "memzoi.proposals.list", {"uri": uri})
    assert {p["id"] for p in only["proposals"]} == {"mem-new", "mem-gated"}


@pytest.mark.parametrize("profile", list(PROFILES))
async def test_nothing_to_scan_is_not_scanning(tmp_path: Path, memzoi_home: Path, profile: str):
    """A workspace without .memzoi: the server is ready and has nothing to scan (the VS Code status bar leaves
    "starting…" on this answer instead of waiting for a scan that never comes)."""
    root = tmp_path / "plain"
    root.mkdir()
    lsp = await start_client(profile, root, memzoi_home)
    try:
        assert await command(lsp, "memzoi.proposals.list", {}) == {"scanning": False, "proposals": []}
    finally:
        await asyncio.wait_for(lsp.shutdown_session(), 10)
        await lsp.stop()


async def test_history_says_whether_undo_is_available(git_workspace_with_packet: Path, client):
    root = git_workspace_with_packet
    uri = open_doc(client, root / ".memzoi" / "proposals" / "pending" / "mem-new.md")
    applied = await run(client, find(await actions_for(client, uri), "Apply proposal"))
    [change] = await command(client, "memzoi.history", {})
    assert change["change_id"] == applied["change_id"] and change["undo_available"] is True
    # The applied record is edited afterwards: the change stays applied, but the ledger would refuse its undo.
    [record] = [f["path"] for f in applied["files"] if f["path"].startswith(".memzoi/records/")]
    (root / record).write_text((root / record).read_text() + "\nEdited by hand.\n")
    [change] = await command(client, "memzoi.history", {})
    assert change["status"] == "applied" and change["undo_available"] is False


@pytest.fixture
def git_workspace_with_packet(workspace: Path) -> Path:
    git_init(workspace)
    return workspace
