"""Issue 34 in a real headless Neovim against the real memzoi-lsp: ``:Memzoi resident jobs`` lists a reflection job
(made against a local OpenAI-compatible stub) and the candidate it proposed, ``:Memzoi resident job ID`` opens its
request and outcome, ``:Memzoi resident edit`` approves with edited content and ``:Memzoi resident remove`` removes
an entry in one audited step, both through the review flow."""

from __future__ import annotations

import pytest

from memzoi.resident.format import parse

from ..resident.reflection_helpers import ADD
from .editor_runs import editor, editor_env, reflection_project, run_script

pytestmark = pytest.mark.timeout(300)


def test_reflection_jobs_edit_and_remove_in_neovim(tmp_path, monkeypatch):
    nvim, server = editor("nvim")
    project = reflection_project(tmp_path, monkeypatch)
    job, cand = project.job_id, project.candidate_id
    env = editor_env("nvim", tmp_path, server, project.memzoi_home, ZUNO_CONFIG_DIR=str(project.zuno))
    run = run_script(nvim, "nvim_reflection.lua", [str(project.rules), job, cand], tmp_path / "out.json", env)
    assert run.proc.returncode == 0, run.ok()
    report = run.report
    jobs = report["jobs_quickfix"]
    assert any(t.startswith(f"reflection completed {job} periodic message msg_1") and cand in t for t in jobs), jobs
    assert any(f"(job {job})" in t and cand in t for t in jobs), jobs
    assert report["job_buffer_name"].endswith(f"memzoi-job://{job}")
    text = "\n".join(report["job_buffer"])
    assert "## request" in text and "promptDigest" in text and "## outcome" in text and '"completed"' in text
    assert report["edited"]["status"] == "applied" and report["edited"]["original_content"] == ADD["content"]
    assert report["removed"]["action"] == "remove" and report["removed"]["status"] == "applied"
    assert len(report["prompts"]) == 2  # each write was previewed, then applied
    assert parse(project.rules.read_text(encoding="utf-8")) == ["Run make lint and make test before pushing."]
