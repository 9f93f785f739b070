"""The editor's resident inbox on a read-only memzoi home (a read-only mount, folders without write permission):
the server lists the candidates (``memzoi.resident.list``, ``memzoi.resident.review``, ``memzoi.resident.state``)
from a home it cannot write, started on it, and writes nothing there. The home is made read-only for real
(``tests.readonly_home``: ``chmod`` without root, a read-only bind mount as root, else skipped): the server is
another process, which no patch of this one reaches."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from lsprotocol import types

from memzoi.judge.config import clear_cache
from memzoi.resident import service

from ..readonly_home import read_only, tree
from .conftest import PROFILES, start_client


@pytest.mark.parametrize("profile", list(PROFILES))
async def test_the_inbox_lists_resident_candidates_from_a_read_only_home(tmp_path: Path, monkeypatch, profile):
    home, zuno = tmp_path / "home", tmp_path / "zuno"
    home.mkdir()
    monkeypatch.setenv("MEMZOI_HOME", str(home))
    monkeypatch.setenv("ZUNO_CONFIG_DIR", str(zuno))
    root = tmp_path / "ws"
    (root / ".memzoi" / "records").mkdir(parents=True)
    (root / ".zuno").mkdir()
    clear_cache()
    cid = service.propose(
        root, scope="project", action="add", content="Run ruff first.", reason="r", confidence=0.5, actor="ada"
    ).candidate.id
    before = tree(home)
    with read_only(home):
        lsp = await start_client(profile, root, home)
        try:
            uri = (root / ".zuno" / "RULES.md").as_uri()
            listing = await lsp.workspace_execute_command_async(
                types.ExecuteCommandParams(command="memzoi.resident.list", arguments=[{"uri": uri}])
            )
            review = await lsp.workspace_execute_command_async(
                types.ExecuteCommandParams(command="memzoi.resident.review", arguments=[{"uri": uri}])
            )
            state = await lsp.workspace_execute_command_async(
                types.ExecuteCommandParams(command="memzoi.resident.state", arguments=[{"uri": uri}])
            )
        finally:
            await asyncio.wait_for(lsp.shutdown_session(), 10)
            await lsp.stop()
            clear_cache()
        after = tree(home)
    assert [(c["id"], c["decidable"]) for c in listing["candidates"]] == [(cid, True)], listing
    assert [c["id"] for c in review] == [cid]
    assert [c["id"] for c in state["memory_candidates"]] == [cid]
    assert after == before
