"""``memzoi import plan|apply`` on the command line: the plan (text and ``--json``, without ``writes``), apply with
the printed id, a stale id (exit 1, nothing written), the replayed retry, and a blocked repo subset whose output
(stdout, stderr, JSON) carries none of the planted content."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from memzoi.cli.main import main
from tests.lifecycle.test_import import MIXED, cand, manifest


@pytest.fixture
def project(runtime_project: Path) -> Path:
    return runtime_project


def run(capsys, project: Path, *argv: str) -> tuple[int, str, str]:
    capsys.readouterr()
    code = main([*argv, "--root", str(project)])
    out, err = capsys.readouterr()
    return code, out, err


def pending(project: Path) -> list[Path]:
    folder = project / ".memzoi" / "proposals" / "pending"
    return sorted(folder.iterdir()) if folder.exists() else []


def test_plan_then_apply_then_replay(capsys, project, tmp_path):
    path = tmp_path / "m.yml"
    path.write_text(MIXED, encoding="utf-8")
    code, out, err = run(capsys, project, "import", "plan", "--from-file", str(path))
    assert code == 0, err
    assert "create_proposal .memzoi/proposals/pending/mem_import_repository-convention.md" in out
    assert pending(project) == []
    code, out, _ = run(capsys, project, "import", "plan", "--from-file", str(path), "--json")
    plan = json.loads(out)
    assert code == 0 and plan["mode"] == "plan" and "writes" not in plan and plan["source_file"] is None
    code, out, err = run(capsys, project, "import", "apply", "--from-file", str(path), "--plan-id", "import_0")
    assert code == 1 and "import_plan_stale" in err and pending(project) == []
    code, out, err = run(
        capsys, project, "import", "apply", "--from-file", str(path), "--plan-id", plan["plan_id"], "--json"
    )
    applied = json.loads(out)
    assert code == 0, err
    assert applied["mode"] == "apply" and [w["kind"] for w in applied["writes"]] == [
        "proposal_file",
        "runtime_record",
        "runtime_record",
    ]
    assert len(pending(project)) == 1
    code, out, _ = run(capsys, project, "import", "apply", "--from-file", str(path), "--plan-id", plan["plan_id"])
    assert code == 0 and "applied (replayed)" in out and len(pending(project)) == 1


def test_blocked_repo_subset_prints_no_content(capsys, project, tmp_path):
    path = tmp_path / "m.yml"
    path.write_text(
        manifest(
            cand("repo", "PLANTED-TITLE-2R", "PLANTED-BODY-6T", reason="PLANTED-REASON-1Y"),
            cand("repo", "Safe", "Safe body.", sensitivity="repo-safe"),
        ),
        encoding="utf-8",
    )
    for extra in ((), ("--json",)):
        code, out, err = run(capsys, project, "import", "plan", "--from-file", str(path), *extra)
        assert code == 0 and "PLANTED" not in out + err and "blocked" in out
    plan_id = json.loads(run(capsys, project, "import", "plan", "--from-file", str(path), "--json")[1])["plan_id"]
    code, out, err = run(capsys, project, "import", "apply", "--from-file", str(path), "--plan-id", plan_id)
    assert code == 0 and "PLANTED" not in out + err and "nothing to write" in out and pending(project) == []
