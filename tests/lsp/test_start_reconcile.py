"""The server reconciles the project's ledger as it starts (SPEC §6: on start, every ``applying``/``undoing``
change is reconciled; nothing is replayed): a change a killed process left in flight shows as ``ledger_uncertain``
without any command, and a damaged ledger is said once, in a warning that names what to run."""

from __future__ import annotations

from pathlib import Path

import pytest
from lsprotocol import types

from memzoi import ledger as L

from ..test_store import _damage_table as damage_table
from .conftest import PROFILES, diagnostics, git_init, start_client, stop_client, wait_until
from .test_lifecycle import crash_mid_change, snapshot


@pytest.fixture
def git_workspace(workspace: Path) -> Path:
    git_init(workspace)
    return workspace


@pytest.mark.parametrize("profile", list(PROFILES))
async def test_a_change_left_in_flight_is_reconciled_as_the_server_starts(
    git_workspace: Path, memzoi_home: Path, monkeypatch, profile
):
    root = git_workspace
    monkeypatch.setenv("MEMZOI_HOME", str(memzoi_home))
    crash_mid_change(root, memzoi_home)
    [change] = L.history(root)
    assert change.status == "applying"
    on_disk = snapshot(root)
    lsp = await start_client(profile, root, memzoi_home)
    try:
        await wait_until(lambda: L.history(root)[0].status == "uncertain")
        # the record the change half wrote says so, closed (push) or asked for (pull), with no command run
        uri = (root / ".memzoi" / "records" / "use-pnpm.md").as_uri()
        found = await diagnostics(lsp, uri, lambda d: any(x.code == "ledger_uncertain" for x in d))
        [d] = [x for x in found if x.code == "ledger_uncertain"]
        assert change.id[:12] in d.message
        assert snapshot(root) == on_disk  # classified, never replayed
        assert not lsp.messages  # nothing to warn about
    finally:
        await stop_client(lsp)


@pytest.mark.parametrize("profile", list(PROFILES))
async def test_code_lenses_are_asked_for_again_when_the_start_settled_a_change(
    git_workspace: Path, memzoi_home: Path, monkeypatch, profile
):
    # The packet's lenses (Apply · Reject…) change once its change is uncertain; the client that can be asked to
    # fetch them again (VS Code) is asked, the one that cannot (Neovim 0.11) is never sent the request.
    root = git_workspace
    monkeypatch.setenv("MEMZOI_HOME", str(memzoi_home))
    crash_mid_change(root, memzoi_home)
    lsp = await start_client(profile, root, memzoi_home)
    try:
        supports = bool(lsp.capabilities.workspace.code_lens and lsp.capabilities.workspace.code_lens.refresh_support)
        assert supports == (profile == "vscode")
        await wait_until(lambda: L.history(root)[0].status == "uncertain")
        uri = (root / ".memzoi" / "records" / "use-pnpm.md").as_uri()
        await diagnostics(lsp, uri, lambda d: any(x.code == "ledger_uncertain" for x in d))
        if supports:
            await wait_until(lambda: lsp.lens_refreshes >= 1)
        await lsp.text_document_code_lens_async(
            types.CodeLensParams(text_document=types.TextDocumentIdentifier(uri=uri))
        )  # answered after any request the reconciliation's end sent
        assert lsp.lens_refreshes == (1 if supports else 0)
    finally:
        await stop_client(lsp)


async def test_a_project_without_a_ledger_gets_none_made_at_start(git_workspace: Path, memzoi_home: Path):
    lsp = await start_client("vscode", git_workspace, memzoi_home)
    try:
        assert lsp.diagnostics  # the scan ran
    finally:
        await stop_client(lsp)
    assert not list(memzoi_home.rglob("memzoi-lsp-ledger.db"))


async def test_a_damaged_ledger_is_said_once_as_the_server_starts(git_workspace: Path, memzoi_home: Path, monkeypatch):
    root = git_workspace
    monkeypatch.setenv("MEMZOI_HOME", str(memzoi_home))
    crash_mid_change(root, memzoi_home)
    [db] = memzoi_home.rglob("memzoi-lsp-ledger.db")
    damage_table(db, "change")
    before = db.read_bytes()
    lsp = await start_client("vscode", root, memzoi_home)
    try:
        [shown] = await wait_until(lambda: [m for m in lsp.messages if "ledger" in m.message])
        assert shown.type == types.MessageType.Warning
        assert "is damaged" in shown.message and "memzoi doctor" in shown.message, shown.message
    finally:
        await stop_client(lsp)
    assert db.read_bytes() == before
