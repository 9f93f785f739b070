"""``:Memzoi local`` in a real headless Neovim against the real memzoi-lsp: the local-memory candidates agents
proposed are listed in the quickfix list, approved and rejected through the server's ``memzoi.local.*``
commands."""

from __future__ import annotations

import pytest

from memzoi.ledger.local_records import list_local
from memzoi.lifecycle.candidates import propose_local
from memzoi.lifecycle.propose import Draft

from ..mcp.conftest import FACT_ID, draft_args, make_project
from .editor_runs import editor, editor_env, run_script

pytestmark = pytest.mark.timeout(300)


def test_memzoi_local_lists_approves_and_rejects(tmp_path, monkeypatch):
    nvim, server = editor("nvim")
    home = tmp_path / "memzoi-home"
    monkeypatch.setenv("MEMZOI_HOME", str(home))
    root = make_project(tmp_path / "repo").resolve()
    a = propose_local(root, Draft(**draft_args()), actor="codex").candidate
    b = propose_local(root, Draft(**draft_args(body="Prefer small pull requests.")), actor="codex").candidate
    record = root / ".memzoi" / "records" / f"{FACT_ID}.md"
    env = editor_env("nvim", tmp_path, server, home)
    run = run_script(nvim, "nvim_local.lua", [str(record), a.id, b.id], tmp_path / "out.json", env)
    assert run.proc.returncode == 0, run.ok()
    report = run.report
    assert len(report["listed"]) == 2 and a.id in report["listed"][0] and "by codex" in report["listed"][0]
    assert report["approved"]["status"] == "applied" and report["approved"]["operation"] == "local_promote"
    assert report["rejected"]["state"] == "rejected"
    assert [r.proposal_id for r in list_local(root)] == [a.id]
