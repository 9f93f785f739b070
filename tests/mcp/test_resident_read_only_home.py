"""An agent reads the resident candidates from a read-only memzoi home (a read-only mount, folders without write
permission): ``list_pending`` and ``get_resident_memory``, asked over the SDK's client, list them instead of a
warning that they cannot be read. ``real``: the home made read-only for real (``tests.readonly_home``: ``chmod``,
or a read-only bind mount as root); ``erofs``/``eacces``: emulated in this process (``Fault``)."""

from __future__ import annotations

import pytest

from memzoi.agent import tools

from ..readonly_home import tree
from ..resident.test_readonly_home import broken
from .test_pending_broken_home import in_process

RESIDENT = {"scope": "project", "action": "add", "content": "Run ruff first.", "reason": "r", "confidence": 0.5}


@pytest.mark.parametrize("how", ["real", "erofs", "eacces"])
async def test_list_pending_lists_resident_candidates_from_a_read_only_home(project, home, how, monkeypatch):
    session = tools.Session(project, "agent", tools.RateLimit(10))
    candidate = tools.call(session, "propose_resident_memory", RESIDENT)
    assert not candidate.is_error, candidate.text
    before = tree(home)
    with broken(how, home, monkeypatch):
        async with in_process(project) as s:
            pending = await s.call_tool("list_pending", {})
            state = await s.call_tool("get_resident_memory", {})
        after = tree(home)
    assert not pending.is_error, pending.content[0].text
    data = pending.structured_content
    assert [c["id"] for c in data["resident_candidates"]] == [candidate.data["id"]], data
    assert not any(w.startswith("resident candidates cannot be read") for w in data["warnings"]), data["warnings"]
    assert not state.is_error, state.content[0].text
    assert [c["id"] for c in state.structured_content["memory_candidates"]] == [candidate.data["id"]]
    assert [c["id"] for c in state.structured_content["pending"]] == [candidate.data["id"]]
    assert after == before  # nothing written to the home
