"""A repository of another user, which git refuses to work in (``detected dubious ownership``, ``safe.directory``):
``memzoi doctor`` and ``memzoi init`` name git's refusal and its one-line fix, not "not inside a git worktree"
(new user's D9). Without root: git takes every repository for another user's under
``GIT_TEST_ASSUME_DIFFERENT_OWNER=1``, which a ``git`` wrapper first on ``PATH`` sets (memzoi clears inherited
``GIT_*`` variables, so the variable itself would not reach git)."""

from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
from pathlib import Path

import pytest

from memzoi.base.gitowner import git_refusal
from memzoi.cli.main import main
from memzoi.project.admission import GitVisibility, git_visibility
from memzoi.runs.check import check_paths

from .test_admission import rec
from .test_revision import attested


@pytest.fixture
def repo(tmp_path, monkeypatch):
    monkeypatch.setenv("MEMZOI_HOME", str(tmp_path / "home"))
    root = tmp_path / "repo"
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    return root


def refusing_git(tmp_path: Path, monkeypatch, repo: Path) -> None:
    """git takes every repository for another user's (``GIT_TEST_ASSUME_DIFFERENT_OWNER``, set by a wrapper first on
    ``PATH`` in ``tmp_path/bin``: memzoi clears inherited ``GIT_*`` variables); skips where git does not check
    ownership (probed in ``repo``)."""
    real = shutil.which("git")
    assert real is not None
    bindir = tmp_path / "bin"
    bindir.mkdir()
    wrapper = bindir / "git"
    wrapper.write_text(f'#!/bin/sh\nGIT_TEST_ASSUME_DIFFERENT_OWNER=1 exec {shlex.quote(real)} "$@"\n')
    wrapper.chmod(0o755)
    monkeypatch.setenv("PATH", f"{bindir}{os.pathsep}{os.environ['PATH']}")
    probe = subprocess.run(["git", "rev-parse", "--git-dir"], cwd=repo, capture_output=True)
    if b"dubious ownership" not in probe.stderr:
        pytest.skip("this git does not check ownership (older than 2.35.2)")


def test_git_refusal_is_none_in_a_repository_and_outside_git(repo, tmp_path):
    assert git_refusal(repo) is None
    (tmp_path / "plain").mkdir()
    assert git_refusal(tmp_path / "plain") is None


def test_doctor_names_gits_refusal_and_the_fix(repo, tmp_path, monkeypatch, capsys):
    assert main(["init", str(repo)]) == 0
    refusing_git(tmp_path, monkeypatch, tmp_path / "repo")
    assert git_refusal(repo) == str(repo)
    capsys.readouterr()
    main(["doctor", "--root", str(repo), "--json"])
    report = json.loads(capsys.readouterr().out)
    (check,) = [c for c in report["checks"] if c["name"] == "git"]
    assert check["status"] == "warning", check
    assert "dubious ownership" in check["message"] and "not inside a git worktree" not in check["message"]
    fix = f"git config --global --add safe.directory {repo}"
    assert any(fix in step for step in report["next_steps"]), report["next_steps"]


def test_init_names_gits_refusal(repo, tmp_path, monkeypatch, capsys):
    refusing_git(tmp_path, monkeypatch, tmp_path / "repo")
    capsys.readouterr()
    assert main(["init", str(repo)]) == 0
    out = capsys.readouterr().out
    assert "dubious ownership" in out and "safe.directory" in out and "not inside a git worktree" not in out, out


def test_check_names_gits_refusal_for_an_attested_record(repo, tmp_path, monkeypatch):
    """check's admission: an attested record in a repository git refuses is refused (review-visibility) as outside
    git, and the finding says why and what to do; an unattested one still passes."""
    records = repo / ".memzoi/records"
    records.mkdir(parents=True)
    (records / "unattested.md").write_text(rec("unattested"), encoding="utf-8")
    (records / "attested.md").write_text(attested(rec("attested"), "attested"), encoding="utf-8")
    refusing_git(tmp_path, monkeypatch, tmp_path / "repo")
    assert set(git_visibility(repo, [records / "attested.md"]).values()) == {GitVisibility.REFUSED}
    report = check_paths([str(repo)])
    assert [(Path(f.path).name, f.finding.code) for f in report.findings] == [("attested.md", "review_visibility")]
    message = report.findings[0].finding.message
    assert "dubious ownership" in message and "safe.directory" in message and "not in a git worktree" not in message
