"""An agent reads from a read-only memzoi home (a read-only mount, folders without write permission):
``list_pending`` and ``get_resident_memory``, asked over the SDK's client, list the resident candidates instead of
a warning that they cannot be read, and ``search_memory`` answers from a private index. ``real``: the home made read-only for real (``tests.readonly_home``: ``chmod``,
or a read-only bind mount as root); ``erofs``/``eacces``: emulated in this process (``Fault``)."""

from __future__ import annotations

import tempfile

import pytest

from memzoi.agent import tools

from ..readonly_home import tree
from ..resident.test_readonly_home import broken
from .conftest import FACT_ID
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


@pytest.mark.parametrize("how", ["real", "erofs", "eacces"])
async def test_search_answers_from_a_read_only_home(project, home, how, monkeypatch, tmp_path):
    """A search needs an index the home cannot hold now: a private one in a temporary folder answers, as fresh as
    the home's would (memzoi.stores.readindex), and is removed after the read."""
    session = tools.Session(project, "agent", tools.RateLimit(10))
    assert FACT_ID in _ids(tools.call(session, "search_memory", {"query": "hatch"}))  # the home's index made
    before = tree(home)
    monkeypatch.setenv("TMPDIR", str(tmp_path / "tmp"))
    (tmp_path / "tmp").mkdir()
    tempfile.tempdir = None  # TMPDIR read again
    try:
        with broken(how, home, monkeypatch):
            async with in_process(project) as s:
                res = await s.call_tool("search_memory", {"query": "hatch"})
            after = tree(home)
    finally:
        tempfile.tempdir = None
    assert not res.is_error, res.content[0].text
    assert FACT_ID in [h["id"] for h in res.structured_content["results"]], res.structured_content
    assert after == before  # nothing written to the home
    assert list((tmp_path / "tmp").iterdir()) == []  # the private index is gone


def _ids(res) -> list[str]:
    assert not res.is_error, res.text
    return [h["id"] for h in res.data["results"]]
