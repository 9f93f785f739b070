"""Issue 34 in a real batch Emacs with eglot against the real memzoi-lsp: ``memzoi-resident`` shows the
WorkStateProjection (a reflection job made against a local OpenAI-compatible stub, the candidate naming its job),
``memzoi-resident-job`` opens the job's request and outcome, ``memzoi-resident-edit`` and
``memzoi-resident-remove`` write through the review flow (preview diff, then Apply)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from memzoi.judge.config import clear_cache
from memzoi.resident import reflection
from memzoi.resident.format import parse

from ..resident.reflection_helpers import ADD, transcript, user_config
from ..resident.stub_endpoint import Reply, Stub, call
from .conftest import REPO, require, venv_bin

HERE = Path(__file__).parent
pytestmark = pytest.mark.timeout(300)


@pytest.mark.editor_packages
def test_reflection_jobs_edit_and_remove_in_emacs(tmp_path, monkeypatch):
    emacs, server = shutil.which("emacs"), venv_bin("memzoi-lsp")
    require(emacs is not None, "emacs is not installed (scripts/install_editor_prereqs.sh)")
    require(server is not None, "memzoi-lsp is not installed (pip install -e .)")
    home, zuno = tmp_path / "memzoi-home", tmp_path / "zuno"
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
        MEMZOI_EMACS_DIR=str(REPO / "editors" / "emacs"),
        MEMZOI_HOME=str(home),
        ZUNO_CONFIG_DIR=str(zuno),
        MEMZOI_ACTOR="reviewer",
        HOME=str(tmp_path / "h"),
    )
    p = subprocess.run(
        [
            emacs,
            "--batch",
            "-q",
            "-l",
            str(HERE / "emacs_reflection.el"),
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
    report = json.loads(out.read_text()) if out.exists() else {}
    assert p.returncode == 0, (report.get("error"), p.stdout[-2000:], p.stderr[-2000:])
    view = report["view"]
    assert any(f"(job {res.job.id})" in line and res.candidates[0] in line for line in view), view
    assert any(line.startswith(f"reflection completed {res.job.id} periodic message msg_1") for line in view), view
    assert report["job_status"] == "completed"
    assert "## request" in report["job_buffer"] and "promptDigest" in report["job_buffer"]
    assert (report["edited_status"], report["edited_original"]) == ("applied", ADD["content"])
    assert (report["removed_status"], report["removed_action"]) == ("applied", "remove")
    questions = report["questions"]
    assert len(questions) == 2 and "Approve edited" in questions[0]["prompt"] and "Remove" in questions[1]["prompt"]
    assert "Run make lint and make test before pushing." in (questions[0]["diff"] or "")
    assert parse(rules.read_text(encoding="utf-8")) == ["Run make lint and make test before pushing."]
