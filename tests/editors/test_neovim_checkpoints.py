"""``:Memzoi checkpoints`` and ``:Memzoi health`` in a real headless Neovim against the real memzoi-lsp: the
checkpoint an agent left is listed with its actions, continued and closed through the preview-then-apply flow
(the reviewer confirms the previewed summary), and the Memory health view lists duplicate records by file."""

from __future__ import annotations

import pytest

from memzoi.lifecycle.checkpoints import get_checkpoint

from .editor_runs import checkpoint_project, editor, editor_env, run_script

pytestmark = pytest.mark.timeout(300)


def test_memzoi_checkpoints_and_health(tmp_path, monkeypatch):
    nvim, server = editor("nvim")
    project = checkpoint_project(tmp_path, monkeypatch)
    root, cid = project.root, project.checkpoint_id
    env = editor_env("nvim", tmp_path, server, project.memzoi_home)
    run = run_script(nvim, "nvim_checkpoints.lua", [str(project.record), cid], tmp_path / "out.json", env)
    assert run.proc.returncode == 0, run.ok()
    report = run.report
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
