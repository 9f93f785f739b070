"""``memzoi capture plan|review|apply`` on the command line: the three stages with their artifacts, --output placed
by data class (a repo-safe plan outside the project's .memzoi; a private one refused outside the runtime directory;
never replacing a path), the replayed apply, and a blocked plan whose output carries no planted secret."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from memzoi.cli.main import main
from tests import builders
from tests.lifecycle.test_capture import EXAMPLE, MIXED


@pytest.fixture
def project(runtime_project: Path) -> Path:
    return runtime_project


def run(capsys, project: Path, *argv: str) -> tuple[int, str, str]:
    capsys.readouterr()
    code = main([*argv, "--root", str(project)])
    out, err = capsys.readouterr()
    return code, out, err


def test_plan_review_apply_with_artifacts(capsys, project, tmp_path):
    builders.write(project, "notes/findings.md", EXAMPLE)
    plan_file = tmp_path / "plan.json"
    code, out, err = run(
        capsys, project, "capture", "plan", "--source", "notes/findings.md", "--output", str(plan_file)
    )
    assert code == 0, err
    assert "create_proposal" in out and plan_file.exists()
    plan = json.loads(plan_file.read_text(encoding="utf-8"))
    code, _, err = run(capsys, project, "capture", "plan", "--source", "notes/findings.md", "--output", str(plan_file))
    assert code == 1 and "artifact_exists" in err
    decisions = tmp_path / "decisions.json"
    decisions.write_text(
        json.dumps(
            {
                "schema": "memzoi/capture-review-input",
                "plan_id": plan["plan_id"],
                "decisions": [{"candidate_id": plan["candidates"][0]["candidate_id"], "outcome": "accept"}],
            }
        ),
        encoding="utf-8",
    )
    review_file = tmp_path / "review.json"
    code, out, err = run(
        capsys,
        project,
        "capture",
        "review",
        "--plan-file",
        str(plan_file),
        "--decisions-file",
        str(decisions),
        "--reviewed-by",
        "zoki",
        "--reviewed-at",
        "2026-07-10T12:00:00Z",
        "--output",
        str(review_file),
        "--json",
    )
    assert code == 0, out
    review = json.loads(out)
    assert review == json.loads(review_file.read_text(encoding="utf-8"))
    args = (
        "capture",
        "apply",
        "--plan-file",
        str(plan_file),
        "--review-file",
        str(review_file),
        "--plan-id",
        plan["plan_id"],
        "--review-id",
        review["review_id"],
    )
    code, out, err = run(capsys, project, *args)
    assert code == 0, err
    assert "capture applied: change" in out and "mem_capture_verify-downloaded-release-archives.md" in out
    code, out, _ = run(capsys, project, *args)
    assert code == 0 and "capture applied (replayed)" in out


def test_private_plan_is_not_saved_in_the_project(capsys, project, tmp_path):
    builders.write(project, "notes/findings.md", MIXED)
    code, _, err = run(
        capsys, project, "capture", "plan", "--source", "notes/findings.md", "--output", str(tmp_path / "p.json")
    )
    assert code == 1 and "artifact_output_refused" in err and not (tmp_path / "p.json").exists()
    # the refusal names where a private plan may be saved, and saving it there works
    from memzoi.base.runtime import project_runtime_dir

    runtime = project_runtime_dir(project)
    assert f"only under this project's runtime directory, {runtime}," in err
    runtime.mkdir(parents=True, exist_ok=True)
    code, _, err = run(
        capsys, project, "capture", "plan", "--source", "notes/findings.md", "--output", str(runtime / "p.json")
    )
    assert code == 0, err
    assert (runtime / "p.json").exists()


def test_blocked_plan_prints_no_secret(capsys, project):
    secret = "xoxb-" + "1234567890-abcdefghij"  # built at run time, never printed
    builders.write(project, "notes/findings.md", EXAMPLE + f"\nslack {secret}\n")
    code, out, err = run(capsys, project, "capture", "plan", "--source", "notes/findings.md", "--json")
    assert code == 0 and secret not in out + err and json.loads(out)["status"] == "blocked"
