"""A full or read-only runtime home costs the index, never the agent's view of what is pending (newuser5 D1):
``list_pending``, asked over the SDK's client, lists the packets from the files (as ``memzoi proposals list``
does) and names each part it could not read, instead of refusing with ``index_unavailable``; where the home
cannot be written, a private index answers and nothing is missing."""

from __future__ import annotations

from contextlib import asynccontextmanager

import anyio
import mcp_types as types
import pytest
from mcp.client.session import ClientSession
from mcp.shared.memory import create_client_server_memory_streams

import memzoi_mcp.server as mcp_server
from memzoi.agent import tools

from ..lifecycle.test_runtime_failures import CODES, UNWRITABLE, _apply
from .conftest import draft_args


@asynccontextmanager
async def in_process(project):
    """The SDK's client talking to this process's server (so the runtime faults patched here apply to it)."""
    server = mcp_server.make_server(project, None, env={}, cwd=project)
    async with create_client_server_memory_streams() as (client_streams, server_streams):
        async with anyio.create_task_group() as tg:
            tg.start_soon(lambda: server.run(*server_streams, server.create_initialization_options()))
            async with ClientSession(*client_streams, client_info=types.Implementation(name="agent", version="1")) as s:
                await s.initialize()
                yield s
            tg.cancel_scope.cancel()


@pytest.mark.parametrize("kind", list(CODES))
async def test_list_pending_answers_from_the_files_when_the_home_is_broken(project, home, kind, monkeypatch):
    session = tools.Session(project, "agent", tools.RateLimit(10))
    packet = tools.call(session, "propose_memory", draft_args())
    assert not packet.is_error, packet.text
    resident = {"scope": "project", "action": "add", "content": "Run ruff first.", "reason": "r", "confidence": 0.5}
    candidate = tools.call(session, "propose_resident_memory", resident)
    assert not candidate.is_error, candidate.text
    async with in_process(project) as s:
        before = await s.call_tool("list_pending", {})
        assert not before.is_error and not before.structured_content.get("warnings"), before.content[0].text
        _apply(kind, home, monkeypatch)
        res = await s.call_tool("list_pending", {})
    assert not res.is_error, res.content[0].text
    data = res.structured_content
    assert [p["id"] for p in data["proposals"]] == [packet.data["proposal_id"]]
    if kind in UNWRITABLE:  # a private index answers where the home cannot be written (memzoi.stores.readindex)
        assert not any("cross-file facts" in w for w in data["warnings"]), data["warnings"]
    else:
        assert data["warnings"] and "cross-file facts are read from the files" in data["warnings"][0]
        assert str(home) in data["warnings"][0]
        assert res.content[0].text.startswith("warning: ")
    # the resident candidate is listed, or a warning says why it cannot be: it never silently disappears
    listed = [c["id"] for c in data["resident_candidates"]] == [candidate.data["id"]]
    assert listed or any(w.startswith("resident candidates cannot be read: ") for w in data["warnings"])
