"""``memzoi-route`` in a real batch Emacs 28 with eglot (Debian packages) against the real memzoi-lsp: an agent's
session-end file opens in ``memzoi-routing-mode`` with the gate's diagnostic on its unsafe repo candidate; the
preview shows each candidate's outcome and writes nothing when declined; after the fix, yes writes the packet and
the checkpoint as one ledgered change."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from memzoi import ledger as L
from memzoi.lifecycle import checkpoints as C

from .conftest import PREREQS_HINT, REPO, require, venv_bin
from .test_neovim_routing import SESSION

HERE = Path(__file__).parent
pytestmark = [pytest.mark.editor_packages, pytest.mark.timeout(600)]


def test_memzoi_route_in_emacs(tmp_path, monkeypatch):
    emacs = shutil.which("emacs")
    require(emacs is not None, f"emacs is not installed: {PREREQS_HINT}")
    server = venv_bin("memzoi-lsp")
    require(server is not None, "memzoi-lsp is not installed (pip install -e .)")
    home = tmp_path / "memzoi-home"
    monkeypatch.setenv("MEMZOI_HOME", str(home))
    root = tmp_path / "repo"
    (root / ".memzoi" / "records").mkdir(parents=True)
    session = root / "session.yml"
    session.write_text(SESSION, encoding="utf-8")
    out = tmp_path / "out.json"
    env = dict(
        os.environ,
        MEMZOI_LSP_CMD=server,
        MEMZOI_EMACS_DIR=str(REPO / "editors" / "emacs"),
        MEMZOI_HOME=str(home),
        MEMZOI_ACTOR="reviewer",
        HOME=str(tmp_path / "home"),
    )
    # -q, not -Q: Debian's site-start puts the elpa-eglot package on the load path.
    p = subprocess.run(
        [emacs, "--batch", "-q", "-l", str(HERE / "emacs_routing.el"), str(session), str(out)],
        env=env,
        capture_output=True,
        text=True,
        timeout=180,
        stdin=subprocess.DEVNULL,
    )
    res = json.loads(out.read_text()) if out.exists() else {}
    assert p.returncode == 0 and not res.get("error"), (res.get("error"), p.stderr[-2000:])
    assert res["mode"] == "memzoi-routing-mode"
    assert any("sensitivity" in d["text"].lower() and d["line"] == 3 for d in res["diagnostics"])
    first, second = res["questions"]
    assert "some are blocked" in first["prompt"] and "sensitivity_not_repo_safe" in first["shown"]
    assert "create_proposal" in second["shown"] and "create_runtime" in second["shown"]
    assert res["cancelled_result"]["blocked"] is True  # the preview's answer: nothing was applied
    applied = res["applied"]
    assert applied["status"] == "routed" and applied["change_id"]
    assert (root / applied["candidates"][0]["path"]).is_file()
    assert [cp.title for cp in C.list_checkpoints(root)[1]] == ["Where I stopped"]
    assert [c.operation for c in L.history(root)] == ["session_end"]
