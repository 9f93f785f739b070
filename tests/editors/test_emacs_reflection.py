"""Issue 34 in a real batch Emacs with eglot against the real memzoi-lsp: ``memzoi-resident`` shows the
WorkStateProjection (a reflection job made against a local OpenAI-compatible stub, the candidate naming its job),
``memzoi-resident-job`` opens the job's request and outcome, ``memzoi-resident-edit`` and
``memzoi-resident-remove`` write through the review flow (preview diff, then Apply)."""

from __future__ import annotations

import pytest

from memzoi.resident.format import parse

from ..resident.reflection_helpers import ADD
from .editor_runs import editor, editor_env, reflection_project, run_script

pytestmark = pytest.mark.timeout(300)


@pytest.mark.editor_packages
def test_reflection_jobs_edit_and_remove_in_emacs(tmp_path, monkeypatch):
    emacs, server = editor("emacs")
    project = reflection_project(tmp_path, monkeypatch)
    job, cand = project.job_id, project.candidate_id
    env = editor_env("emacs", tmp_path, server, project.memzoi_home, ZUNO_CONFIG_DIR=str(project.zuno))
    run = run_script(emacs, "emacs_reflection.el", [str(project.rules), job, cand], tmp_path / "out.json", env)
    assert run.proc.returncode == 0, run.ok()
    report = run.report
    view = report["view"]
    assert any(f"(job {job})" in line and cand in line for line in view), view
    assert any(line.startswith(f"reflection completed {job} periodic message msg_1") for line in view), view
    assert report["job_status"] == "completed"
    assert "## request" in report["job_buffer"] and "promptDigest" in report["job_buffer"]
    assert (report["edited_status"], report["edited_original"]) == ("applied", ADD["content"])
    assert (report["removed_status"], report["removed_action"]) == ("applied", "remove")
    questions = report["questions"]
    assert len(questions) == 2 and "Approve edited" in questions[0]["prompt"] and "Remove" in questions[1]["prompt"]
    assert "Run make lint and make test before pushing." in (questions[0]["diff"] or "")
    assert parse(project.rules.read_text(encoding="utf-8")) == ["Run make lint and make test before pushing."]
