"""The agent loop end to end in a real VS Code (code-server with the packaged .vsix, driven by cs_agent_loop.js in
headless Chromium), issue 31: an agent (the MCP SDK's stdio client driving ``memzoi-mcp``, mcp_agent.py) proposes
a memory while the Memory Inbox is shown; the inbox lists it without a refresh; the reviewer applies it from its
row; the agent's next ``search_memory`` finds the applied record (provenance ``git``), which it did not before."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from .conftest import captures_dir, make_workspace, require, venv_bin
from .mcp_agent import TITLE
from .test_vscode_e2e import USER_SETTINGS, code_server, drive  # noqa: F401  (code_server is a fixture)

pytestmark = pytest.mark.editor_packages

QUERY = "how do token refreshes avoid racing?"


@pytest.mark.timeout(1800)
def test_an_agents_proposal_reaches_the_inbox_is_applied_and_is_then_found(
    code_server: Path,
    vsix: Path,  # noqa: F811
    tmp_path: Path,
    corpus: Path,
) -> None:
    server = venv_bin("memzoi-lsp")
    require(server is not None, "memzoi-lsp is not installed (pip install -e .)")
    ws = make_workspace(tmp_path / "ws", corpus)
    shots = captures_dir()
    shots.mkdir(parents=True, exist_ok=True)
    p, report, exthost = drive(
        code_server,
        vsix,
        tmp_path,
        ws,
        dict(USER_SETTINGS, **{"memzoi.server.path": server}),
        shots,
        script="cs_agent_loop.js",
        PYTHON=sys.executable,
        AGENT=str(Path(__file__).with_name("mcp_agent.py")),
        QUERY=QUERY,
    )
    assert p.returncode == 0, f"{p.stdout}\n{p.stderr}\n--- Memzoi output\n{exthost}"
    steps = {s["name"]: s for s in report["steps"]}
    for name in (
        "agent proposed",
        "inbox shows the agent proposal without a refresh",
        "applied from the inbox",
        "the inbox no longer lists it",
    ):
        assert name in steps, (name, list(steps))
    assert steps["agent search before review"]["ids"] == []  # pending is not yet memory
    (hit,) = [h for h in report["search_after"]["results"] if h["title"] == TITLE]
    assert hit["kind"] == "record" and hit["provenance"] == "git" and hit["status"] == "active"
    record = ws["root"] / hit["path"]
    assert record.is_file() and "RefreshLock" in record.read_text(encoding="utf-8")
    assert (shots / "vscode-agent-inbox.png").stat().st_size > 10_000
