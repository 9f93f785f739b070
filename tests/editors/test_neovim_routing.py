"""``:Memzoi route`` in a real headless Neovim against the real memzoi-lsp: an agent's session-end file gets the
gate's diagnostic on its unsafe repo candidate, the routing preview lists each candidate's outcome in the quickfix
list and writes nothing when cancelled, and after the fix Apply writes the packet (then in the inbox) and the
checkpoint (then in the checkpoint list) as one ledgered change."""

from __future__ import annotations

import pytest

from memzoi import ledger as L
from memzoi.lifecycle import checkpoints as C

from .editor_runs import editor, editor_env, run_script

pytestmark = pytest.mark.timeout(300)
SESSION = """task: "Implement auth middleware"
candidates:
  - destination: repo
    type: decision
    lane: semantic
    title: Protected routes validate sessions server-side
    body: Protected routes must validate sessions server-side.
    sensitivity: unknown
  - destination: session
    type: episode
    lane: session
    title: Where I stopped
    body: Refresh flow half done.
"""


def test_memzoi_route_previews_then_applies(tmp_path, monkeypatch):
    nvim, server = editor("nvim")
    home = tmp_path / "memzoi-home"
    monkeypatch.setenv("MEMZOI_HOME", str(home))
    root = tmp_path / "repo"
    (root / ".memzoi" / "records").mkdir(parents=True)
    session = root / "session.yml"
    session.write_text(SESSION, encoding="utf-8")
    run = run_script(
        nvim, "nvim_routing.lua", [str(session)], tmp_path / "out.json", editor_env("nvim", tmp_path, server, home)
    )
    assert run.proc.returncode == 0, run.ok()
    report = run.report
    assert {"code": "sensitivity_not_repo_safe", "lnum": 2} in report["diagnostics"]
    assert report["preview"][0].startswith("[0] repo blocked sensitivity_not_repo_safe")
    assert report["preview"][1].startswith("[1] session")
    assert "some are blocked" in report["prompts"][0]
    applied = report["applied"]
    assert applied["status"] == "routed" and [c["outcome"] for c in applied["candidates"]] == ["created", "created"]
    pending = root / applied["candidates"][0]["path"]
    assert pending.is_file() and "status: proposed" in pending.read_text(encoding="utf-8")
    assert [cp.title for cp in C.list_checkpoints(root)[1]] == ["Where I stopped"]
    assert [c.operation for c in L.history(root)] == ["session_end"]
