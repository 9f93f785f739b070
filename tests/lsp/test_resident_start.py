"""The server's start-up resident reconciliation re-diagnoses the resident files it settled: a file opened before
the reconciliation finished was judged from the unsettled history (an entry an ``applying`` candidate wrote reads
as a hand edit), and that verdict must not stay on screen once the candidate is ``applied``."""

from __future__ import annotations

import asyncio
from contextlib import ExitStack
from pathlib import Path

import pytest
from lsprotocol import types
from pytest_lsp import client_capabilities

from memzoi.judge.config import clear_cache
from memzoi.resident import candidates as db, service
from memzoi.resident.store import resident_lock

from ..ledger.faults import CRASH_EXIT, run_child
from .conftest import PROFILES, diagnostics, is_pull, open_doc, start_client, wait_until


def _hand_edits(diags: list[types.Diagnostic]) -> list[types.Diagnostic]:
    return [d for d in diags if d.code == "resident_hand_edit"]


@pytest.mark.parametrize("profile", list(PROFILES))
async def test_start_reconciliation_republishes_what_it_settled(tmp_path: Path, monkeypatch, profile):
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("MEMZOI_HOME", str(home))
    monkeypatch.setenv("ZUNO_CONFIG_DIR", str(tmp_path / "zuno"))
    root = tmp_path / "ws"
    (root / ".memzoi" / "records").mkdir(parents=True)
    rules = root / ".zuno" / "RULES.md"
    clear_cache()
    cand = service.propose(
        root, scope="project", action="add", content="Keep it.", reason="r", confidence=0.5, actor="ada"
    ).candidate
    code, _ = run_child(lambda: service.apply(root, cand.id, actor="ada"), crash_at="apply:written")
    assert code == CRASH_EXIT  # the file holds the entry, the candidate stays `applying`

    def status() -> str:
        with db.connect() as conn:
            return db.get(conn, cand.id).status

    assert status() == "applying"
    caps = client_capabilities(PROFILES[profile])
    if profile == "neovim":  # a pull client that can be asked to pull again
        caps.workspace.diagnostics = types.DiagnosticWorkspaceClientCapabilities(refresh_support=True)
    held = ExitStack()
    # The reconciliation waits for this lock: the file is opened and diagnosed while the candidate is `applying`.
    held.enter_context(resident_lock(rules.resolve()))
    try:
        lsp = await start_client(profile, root, home, capabilities=caps)
    except BaseException:
        held.close()
        raise
    refreshes: list[None] = []
    features = lsp.protocol.fm.features
    default = features[types.WORKSPACE_DIAGNOSTIC_REFRESH]

    def refresh(params):
        refreshes.append(None)
        return default(params)

    features[types.WORKSPACE_DIAGNOSTIC_REFRESH] = refresh
    try:
        uri = open_doc(lsp, rules)
        stale = await diagnostics(lsp, uri, lambda d: bool(_hand_edits(d)))
        assert "no reviewed candidate wrote this entry" in _hand_edits(stale)[0].message
        asked = len(refreshes)
        held.close()
        await wait_until(lambda: status() == "applied")
        if is_pull(lsp):
            await wait_until(lambda: len(refreshes) > asked)  # told to pull again, without any edit
        lenses = lsp.capabilities.workspace.code_lens
        if lenses and lenses.refresh_support:  # the files' lenses count candidates by status: asked for again
            await wait_until(lambda: lsp.lens_refreshes >= 1)
        assert await diagnostics(lsp, uri, lambda d: not _hand_edits(d)) == []
        assert rules.read_text(encoding="utf-8") == "Keep it."  # settled, never replayed
    finally:
        held.close()
        await asyncio.wait_for(lsp.shutdown_session(), 10)
        await lsp.stop()
        clear_cache()
