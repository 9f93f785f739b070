"""``memzoi-checkpoints``, ``memzoi-checkpoint-continue``/``-close`` and ``memzoi-memory-health`` in a real batch
Emacs with eglot against the real memzoi-lsp: the checkpoint is listed with its actions, continued and closed
through the preview question, a continue after the close is refused, and the health buffer's record buttons open
the records' files."""

from __future__ import annotations

import json
import os
import shutil
import subprocess

import pytest

from memzoi.lifecycle.checkpoints import add_checkpoint, get_checkpoint

from .. import builders
from ..mcp.conftest import FACT_ID, make_project
from .conftest import PREREQS_HINT, REPO, require, venv_bin

HERE = os.path.dirname(__file__)
pytestmark = pytest.mark.timeout(300)


@pytest.mark.editor_packages
def test_emacs_checkpoints_and_memory_health(tmp_path, monkeypatch):
    emacs, server = shutil.which("emacs"), venv_bin("memzoi-lsp")
    require(emacs is not None, f"emacs is not installed: {PREREQS_HINT}")
    require(server is not None, "memzoi-lsp is not installed (pip install -e .)")
    home = tmp_path / "memzoi-home"
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
        MEMZOI_EMACS_DIR=str(REPO / "editors" / "emacs"),
        MEMZOI_HOME=str(home),
        MEMZOI_ACTOR="reviewer",
        HOME=str(tmp_path / "home"),
    )
    record = root / ".memzoi" / "records" / f"{FACT_ID}.md"
    p = subprocess.run(
        [emacs, "--batch", "-q", "-l", os.path.join(HERE, "emacs_checkpoints.el"), str(record), cid, str(out)],
        env=env,
        capture_output=True,
        text=True,
        timeout=240,
        stdin=subprocess.DEVNULL,
    )
    report = json.loads(out.read_text()) if out.exists() else {}
    assert p.returncode == 0, (report.get("error"), p.stdout[-2000:], p.stderr[-2000:])
    assert report["listed"].startswith(f"open checkpoint {cid} v1 (actions: continue, close): Auth middleware")
    assert report["prompts"][0].startswith(f"continue checkpoint {cid}") and report["prompts"][0].endswith("Apply? ")
    assert report["continued"]["checkpoint"]["version"] == 2 and report["closed"]["checkpoint"]["status"] == "closed"
    assert report["relisted"].startswith(f"closed checkpoint {cid} v3 (actions: none)")
    assert "checkpoint_closed" in json.dumps(report["refused"]) or "closed" in report["refused"]["error"]
    assert get_checkpoint(root, cid).status == "closed"
    assert "exact duplicate: dup-a [dup-a, dup-b]" in report["health"]
    assert report["first_button_file"] == str(root / ".memzoi" / "records" / "dup-a.md")
    assert report["opened_buffer"] == str(root / ".memzoi" / "records" / "dup-a.md")
