"""What a session's first ``search_memory`` does not do (issue 29: the first call at 50,000 records, whose critical
path is the server's own CPU while find lists): load the core a second time beside the load begun at
``initialized``, read the ``[mcp]`` section a proposal needs, import the lifecycle to read local records or the
record models for the tools' argument models, or the tools' output models."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
from pathlib import Path
from types import ModuleType, SimpleNamespace
from typing import Any

import mcp_types as types

import memzoi_mcp.server as mcp_server
from memzoi.agent.search import search_memory
from memzoi.lifecycle.local import add_local
from memzoi.stores.findlisting import Ahead
from memzoi.stores.index import Index

from .conftest import FACT_ID, draft_args, home, project  # noqa: F401 - fixtures


def test_a_caller_during_the_load_waits_for_it_and_the_core_is_loaded_once(monkeypatch):
    monkeypatch.setattr(mcp_server, "_CORE", [])
    entered, release = threading.Event(), threading.Event()
    loads: list[int] = []
    core = ModuleType("core")

    def importing() -> ModuleType:
        loads.append(1)
        entered.set()
        assert release.wait(60)
        return core

    monkeypatch.setattr(mcp_server, "_import_core", importing)
    got: list[ModuleType] = []
    first = threading.Thread(target=lambda: got.append(mcp_server._load_core()))
    first.start()
    assert entered.wait(60)  # the warm-up is importing: the first call comes now
    second = threading.Thread(target=lambda: got.append(mcp_server._load_core()))
    second.start()
    release.set()
    first.join(60)
    second.join(60)
    assert loads == [1] and got == [core, core]
    assert mcp_server._load_core() is core and loads == [1]


async def test_a_call_that_reads_takes_no_rate_limit_and_a_proposal_does(project, monkeypatch):
    asked: list[Path] = []
    real = mcp_server._limit_for
    monkeypatch.setattr(mcp_server, "_limit_for", lambda tools, root, n: (asked.append(root), real(tools, root, n))[1])
    server = mcp_server.make_server(project, None, env={}, cwd=project)
    call = server.get_request_handler("tools/call")
    assert call is not None
    ctx = SimpleNamespace(session=None, request_id=None)
    res = await call.handler(ctx, types.CallToolRequestParams(name="search_memory", arguments={"query": "hatch"}))
    assert not res.is_error, res.content[0].text
    assert [h["id"] for h in res.structured_content["results"]] == [FACT_ID]
    assert asked == []  # the [mcp] section is not read for a read
    for _ in range(2):
        params = types.CallToolRequestParams(name="propose_memory", arguments=draft_args())
        await call.handler(ctx, params)
    assert asked == [project]  # read at the project's first proposal, kept for the next


CHILD = """
import json, sys
from pathlib import Path
import memzoi_mcp.server as server
tools = server._load_core()
root = Path(sys.argv[1])
got = tools.call(tools.Session(root, "c", tools.RateLimit(0)), "search_memory", {"query": sys.argv[2]})
heavy = ("memzoi.lifecycle", "memzoi.judge.config_model", "memzoi.models", "memzoi.agent.outputs")
print(json.dumps({"ids": [h["id"] for h in got.data["results"]], "loaded": [m for m in heavy if m in sys.modules]}))
"""


def test_the_first_search_of_a_server_reads_local_records_without_the_lifecycle(project, home):
    """In a fresh server process: the core as the warm-up loads it, then a search that finds a local record (read
    from the ledger), without importing the lifecycle, the configuration's model, the record models or the tools'
    output models (imported when ``tools/list`` asks for their schemas)."""
    add_local(project, title="Release notes live in docs", body="Write the release notes in docs/.", actor="me")
    for _ in range(2):  # the index current, as a session finds it
        index = Index(project, workers=1)
        try:
            index.refresh(walked=Ahead(project))
        finally:
            index.close()
    assert [h["kind"] for h in search_memory(project, "release notes")["results"]] == ["local"]
    out = subprocess.run(
        [sys.executable, "-c", CHILD, str(project), "release notes"], capture_output=True, text=True, check=True
    )
    got: dict[str, Any] = json.loads(out.stdout)
    assert len(got["ids"]) == 1 and got["loaded"] == []
