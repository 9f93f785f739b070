"""``memzoi safety scan``: Memzoi's ``memzoi/repository-safety-scan-v1`` over staged blobs, a range or one file;
exit 0 allowed, 2 blocked, 1 operational failure; a planted secret is never printed (its path is redacted)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from memzoi.base.runtime import git_env
from memzoi.cli.main import main
from memzoi.runs.safety_scan import SCHEMA, ScanError, safety_scan, scan_blob

from . import builders


def _git(root: Path, *args: str) -> None:
    subprocess.run(
        ["git", "-C", str(root), *args],
        check=True,
        env={
            **git_env(),
            "GIT_AUTHOR_NAME": "t",
            "GIT_AUTHOR_EMAIL": "t@example.org",
            "GIT_COMMITTER_NAME": "t",
            "GIT_COMMITTER_EMAIL": "t@example.org",
        },
        capture_output=True,
    )


def _token() -> str:
    return "ghp_" + "Zq8" * 4 + "Xw7" * 4 + "Kp2" * 3  # built at run time, never written literally


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    (root / ".memzoi" / "records").mkdir(parents=True)
    _git(tmp_path, "init", "-q", "--template=", str(root))
    builders.write(root, builders.record_path("clean"), builders.record("clean"))
    _git(root, "add", "-A")
    _git(root, "commit", "-qm", "base")
    return root


def test_clean_staged_and_file_scans_are_allowed(repo, capsys):
    builders.write(repo, builders.record_path("also-clean"), builders.record("also-clean"))
    _git(repo, "add", "-A")
    out = safety_scan(repo, staged=True)
    assert out["schema"] == SCHEMA and out["allowed"] is True
    assert [f["path"] for f in out["files"]] == [".memzoi/records/also-clean.md"]
    report = out["files"][0]["report"]
    assert report["schema"] == "memzoi/repository-write-safety-v1" and report["findings"] == []
    assert main(["safety", "scan", "--root", str(repo), "--file", ".memzoi/records/clean.md"]) == 0
    assert "allowed 1 blob(s)" in capsys.readouterr().out


def test_a_staged_secret_blocks_with_exit_2_and_is_never_printed(repo, capsys):
    token = _token()
    builders.write(repo, builders.record_path("leaky"), builders.record("leaky", body=f"CI pushes with {token}."))
    _git(repo, "add", "-A")
    assert main(["safety", "scan", "--root", str(repo), "--staged", "--json"]) == 2
    printed = capsys.readouterr().out
    assert token not in printed
    out = json.loads(printed)
    assert out["allowed"] is False
    (f,) = out["files"]
    assert f["path"].startswith("<redacted-path:") and "leaky" not in f["path"]
    codes = {(x["code"], x["field"]) for x in f["report"]["findings"]}
    assert ("credential_token", "projection[0].bytes") in codes
    assert all(len(x["fingerprint"]) == 64 for x in f["report"]["findings"])
    assert main(["safety", "scan", "--root", str(repo), "--staged"]) == 2
    text = capsys.readouterr().out
    assert "repository safety scan blocked" in text and token not in text


def test_range_scans_the_head_side_of_changed_files(repo):
    builders.write(repo, builders.record_path("unclassified"), builders.record("unclassified", content_class=None))
    _git(repo, "add", "-A")
    _git(repo, "commit", "-qm", "second")
    out = safety_scan(repo, range_spec="HEAD~1...HEAD")
    (f,) = out["files"]
    assert [x["code"] for x in f["report"]["findings"]] == ["unknown_content_class"]
    assert safety_scan(repo, range_spec="HEAD...HEAD")["files"] == []


def test_not_utf8_and_unsupported_entries_are_blocked():
    assert [x["code"] for x in scan_blob(".memzoi/records/x.md", b"\xff\xfe")["findings"]] == ["invalid_encoding"]
    probe = scan_blob(".memzoi/records/link.md", None)
    assert probe["allowed"] is False and "unsafe_output_path" in {x["code"] for x in probe["findings"]}


@pytest.mark.parametrize(
    "args",
    [
        ["--range", "HEAD"],
        ["--range=-x...HEAD"],
        ["--range", "nope...HEAD"],
        ["--file", "../outside.md"],
        ["--file", "README.md"],
        ["--file", ".memzoi/records/missing.md"],
    ],
)
def test_operational_failures_exit_1(repo, args, capsys):
    assert main(["safety", "scan", "--root", str(repo), *args]) == 1
    assert "scan_failed" in capsys.readouterr().err


def test_exactly_one_source(repo):
    with pytest.raises(ScanError):
        safety_scan(repo)
    with pytest.raises(ScanError):
        safety_scan(repo, staged=True, file=".memzoi/records/clean.md")
