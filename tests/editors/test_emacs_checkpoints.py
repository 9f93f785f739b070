"""``memzoi-checkpoints``, ``memzoi-checkpoint-continue``/``-close`` and ``memzoi-memory-health`` in a real batch
Emacs with eglot against the real memzoi-lsp: the checkpoint is listed with its actions, continued and closed
through the preview question, a continue after the close is refused, and the health buffer's record buttons open
the records' files."""

from __future__ import annotations

import json

import pytest

from memzoi.lifecycle.checkpoints import get_checkpoint

from .editor_runs import checkpoint_project, editor, editor_env, run_script

pytestmark = pytest.mark.timeout(300)


@pytest.mark.editor_packages
def test_emacs_checkpoints_and_memory_health(tmp_path, monkeypatch):
    emacs, server = editor("emacs")
    project = checkpoint_project(tmp_path, monkeypatch)
    root, cid = project.root, project.checkpoint_id
    env = editor_env("emacs", tmp_path, server, project.memzoi_home)
    run = run_script(emacs, "emacs_checkpoints.el", [str(project.record), cid], tmp_path / "out.json", env)
    assert run.proc.returncode == 0, run.ok()
    report = run.report
    assert report["listed"].startswith(f"open checkpoint {cid} v1 (actions: continue, close): Auth middleware")
    assert report["prompts"][0].startswith(f"continue checkpoint {cid}") and report["prompts"][0].endswith("Apply? ")
    assert report["continued"]["checkpoint"]["version"] == 2 and report["closed"]["checkpoint"]["status"] == "closed"
    assert report["relisted"].startswith(f"closed checkpoint {cid} v3 (actions: none)")
    assert "checkpoint_closed" in json.dumps(report["refused"]) or "closed" in report["refused"]["error"]
    assert get_checkpoint(root, cid).status == "closed"
    assert "exact duplicate: dup-a [dup-a, dup-b]" in report["health"]
    assert report["first_button_file"] == str(root / ".memzoi" / "records" / "dup-a.md")
    assert report["opened_buffer"] == str(root / ".memzoi" / "records" / "dup-a.md")
