"""Admission: git review visibility (batched git calls), canonical paths, refusal order."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from memzoi.base.findings import finding
from memzoi.judge.analysis import analyze_path, analyze_text
from memzoi.project import admission
from memzoi.project.admission import GitVisibility, admit, git_visibility
from memzoi.project.refusals import refusals
from memzoi.runs.check import check_paths

from .builders import edit
from .test_revision import RECORD, attested

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")


def git(cwd: Path, *args: str) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    subprocess.run(
        ["git", "-c", "user.email=t@example.invalid", "-c", "user.name=t", *args],
        cwd=cwd,
        env=env,
        check=True,
        capture_output=True,
    )


def rec(rid: str) -> str:
    return edit(edit(RECORD, "vector-record", rid), "Body text", f"Body text of {rid}")  # no duplicates


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    git(tmp_path, "init", "-q")
    records = tmp_path / ".memzoi/records"
    records.mkdir(parents=True)
    for rid in ("tracked", "untracked", "ignored"):
        (records / f"{rid}.md").write_text(rec(rid), encoding="utf-8")
    (tmp_path / ".gitignore").write_text(".memzoi/records/ignored.md\n.memzoi/records/tracked.md\n")
    git(tmp_path, "add", "-f", ".gitignore", ".memzoi/records/tracked.md")  # tracked wins over the ignore rule
    git(tmp_path, "commit", "-q", "-m", "init")
    return tmp_path


def test_tracked_untracked_ignored_gives_exactly_one_ignored_untracked(repo, monkeypatch):
    # Inherited GIT_* variables must not redirect the queries.
    monkeypatch.setenv("GIT_DIR", str(repo / "nowhere"))
    monkeypatch.setenv("GIT_INDEX_FILE", str(repo / "nowhere-index"))
    report = check_paths([str(repo / ".memzoi")])
    assert report.files_checked == 3
    found = [(Path(l.path).name, l.finding.code) for l in report.findings]
    assert found == [("ignored.md", "ignored_untracked")]
    vis = git_visibility(repo, sorted((repo / ".memzoi/records").glob("*.md")))
    assert {Path(p).name: v for p, v in vis.items()} == {
        "ignored.md": GitVisibility.IGNORED,
        "tracked.md": GitVisibility.TRACKED,
        "untracked.md": GitVisibility.UNTRACKED,
    }


def test_an_absolute_path_string_is_its_own_key(repo):
    """The server holds one string per file (issue 29, peak RSS): git's answers are keyed by the strings it gave,
    not by a normalised copy of each; a path that is not its ``abspath`` string yet is keyed by that string."""
    given = [os.path.abspath(p) for p in sorted((repo / ".memzoi/records").glob("*.md"))]
    vis = git_visibility(repo, given)
    assert len(vis) == len(given) == 3
    assert all(any(k is p for p in given) for k in vis), "a key is a copy of the given path"
    odd = str(repo / ".memzoi" / "records" / ".." / "records" / "tracked.md")
    assert list(git_visibility(repo, [odd])) == [os.path.abspath(odd)]


def test_git_is_called_a_bounded_number_of_times(repo, monkeypatch):
    records = repo / ".memzoi/records"
    for i in range(40):
        (records / f"extra-{i}.md").write_text(rec(f"extra-{i}"), encoding="utf-8")
    calls: list[list[str]] = []
    real = subprocess.Popen

    def spy(args, *a, **kw):
        calls.append(list(args))
        return real(args, *a, **kw)

    monkeypatch.setattr(admission.subprocess, "Popen", spy)
    vis = git_visibility(repo, sorted(records.glob("*.md")))
    assert len(vis) == 43
    assert [c[1] for c in calls] == ["rev-parse", "ls-files", "check-ignore"]
    assert sum(v is GitVisibility.IGNORED for v in vis.values()) == 1


@pytest.mark.parametrize("file_specs", [admission._FILE_SPECS, 0], ids=["by file", "by folder"])
def test_a_few_files_of_a_large_folder_are_answered_for(repo, monkeypatch, file_specs):
    """A folder's listing can pass a bound set by the files asked (one record of a folder of 50,000 is 3.4 MB of
    ``ls-files`` output against about 1 MB): its files were all ``unknown``, so no admission finding was derived and
    ``check FILE`` passed an ignored, untracked record. A few files are asked by themselves; many by their folders, whose
    whole listing may be read."""
    records = repo / ".memzoi/records"
    for i in range(120):  # a listing of about 4.4 KB, over 1 KB per file asked
        (records / f"tracked-extra-{i:03}.md").write_text(rec(f"tracked-extra-{i}"), encoding="utf-8")
    git(repo, "add", ".memzoi/records")
    git(repo, "commit", "-q", "-m", "more")
    (records / "new.md").write_text(rec("new"), encoding="utf-8")
    monkeypatch.setattr(admission, "_LS_FILES_BASE", 0)  # the folder's listing passes the bound of a few files
    monkeypatch.setattr(admission, "_FILE_SPECS", file_specs)
    vis = git_visibility(repo, [records / "new.md", records / "tracked-extra-007.md", records / "ignored.md"])
    assert {Path(p).name: v for p, v in vis.items()} == {
        "new.md": GitVisibility.UNTRACKED,
        "tracked-extra-007.md": GitVisibility.TRACKED,
        "ignored.md": GitVisibility.IGNORED,
    }
    monkeypatch.setattr(admission, "_FILE_SPECS", admission._FILE_SPECS)
    report = check_paths([str(records / "ignored.md")])
    assert [l.finding.code for l in report.findings] == ["ignored_untracked"]


def test_outside_git_only_attested_records_are_refused(tmp_path):
    records = tmp_path / "plain/.memzoi/records"
    records.mkdir(parents=True)
    (records / "unattested.md").write_text(rec("unattested"), encoding="utf-8")
    (records / "attested.md").write_text(attested(rec("attested"), "attested"), encoding="utf-8")
    report = check_paths([str(tmp_path / "plain")])
    assert [(Path(l.path).name, l.finding.code) for l in report.findings] == [("attested.md", "review_visibility")]


def test_symlinked_directory_is_not_canonical(tmp_path):
    real = tmp_path / "elsewhere"
    real.mkdir()
    (real / "linked.md").write_text(rec("sub/linked"), encoding="utf-8")
    records = tmp_path / "p/.memzoi/records"
    records.mkdir(parents=True)
    (records / "sub").symlink_to(real, target_is_directory=True)
    path = records / "sub/linked.md"
    a = analyze_path(path)
    result = admit(path, a, GitVisibility.UNTRACKED)
    assert [f.code for f in result.findings] == ["canonical_path", "unsafe_output_path"]
    assert not result.admitted and result.refusals[0] == "canonical-path"


def test_refusal_order_and_safety_scan():
    fs = [
        finding("stale_attestation", "m", 0, 1),
        finding("credential_token", "m", 0, 1),
        finding("private_key", "m", 0, 1),
        finding("visibility_not_repository_safe", "m", 0, 1),
        finding("pii_detected", "m", 0, 1),
        finding("high_entropy_value", "m", 0, 1),
        finding("yaml_syntax", "m", 0, 1),
        finding("dangling_reference", "m", 0, 1),
    ]
    assert refusals(fs) == [
        "typed-record",
        "visibility-not-repository",
        "materialization-revision",
        "safety-scan[credential_token,high_entropy_value,pii_detected]",
    ]
    assert refusals([finding("retention_query_only", "m", 0, 1)]) == []


def test_clean_record_is_admitted(tmp_path):
    a = analyze_text(rec("ok"), tmp_path / ".memzoi/records/ok.md")
    result = admit(tmp_path / ".memzoi/records/ok.md", a, GitVisibility.TRACKED)
    assert result.admitted and result.findings == []


def test_missing_git_gives_unknown(repo, monkeypatch):
    monkeypatch.setenv("PATH", str(repo / "no-bin"))
    vis = git_visibility(repo, [repo / ".memzoi/records/ignored.md"])
    assert list(vis.values()) == [GitVisibility.UNKNOWN]


def test_stale_attestation_names_changed_fields_from_the_committed_version(tmp_path):
    git(tmp_path, "init", "-q")
    records = tmp_path / ".memzoi/records"
    records.mkdir(parents=True)
    path = records / "reviewed.md"
    text = attested(rec("reviewed"), "reviewed")
    path.write_text(text, encoding="utf-8")
    git(tmp_path, "add", ".")
    git(tmp_path, "commit", "-q", "-m", "reviewed")
    assert check_paths([str(records)]).findings == []
    path.write_text(edit(text, "Body text of reviewed", "Body text of edited"), encoding="utf-8")
    [stale] = [l.finding for l in check_paths([str(records)]).findings]
    assert stale.code == "stale_attestation"
    assert "changed since decision time: `body`" in stale.message
    path.write_text(
        edit(edit(text, 'title: "Vector record"', 'title: "Other"'), "# Vector record", "# Other"), encoding="utf-8"
    )
    [stale] = [l.finding for l in check_paths([str(records)]).findings]
    assert "changed since decision time: `title`" in stale.message
