"""The exclude pattern of memzoi's atomic writes' temporary files (``.<name>.<12 hex>.tmp``) in a repository's
``info/exclude``: written atomically under the file's lock (two processes adding at once keep both lines), never
through a symlink, added again once removed, and found for a repository made after a folder was seen outside git.
The lifecycle end of it (a killed change, worktrees, ``git add -A``) is in ``lifecycle/test_temporaries_ignored``."""

from __future__ import annotations

import os
import subprocess

import pytest

from memzoi.base import gitexclude
from memzoi.base.gitexclude import TEMP_PATTERN, exclude, hide_temporaries
from memzoi.base.runtime import git_env


def _git(root, *args):
    return subprocess.run(["git", "-C", str(root), *args], capture_output=True, text=True, check=True, env=git_env())


@pytest.fixture(autouse=True)
def _fresh_process_caches(monkeypatch):
    monkeypatch.setattr(gitexclude, "_repository_of", {})
    monkeypatch.setattr(gitexclude, "_hidden", {})


def _lines(repo):
    return (repo / ".git" / "info" / "exclude").read_text(encoding="utf-8").splitlines()


def test_the_pattern_matches_only_temporary_names(tmp_path):
    _git(tmp_path, "init", "-q", "--template=")
    assert hide_temporaries(tmp_path)
    names = [".x.md.0123456789ab.tmp", ".notes.tmp", ".a.b.tmp", "x.md.0123456789ab.tmp", ".x.md.0123456789a.tmp"]
    for name in names:
        (tmp_path / name).write_bytes(b"")
    listed = _git(tmp_path, "status", "--porcelain", "--untracked-files=all").stdout.splitlines()
    assert sorted(line[3:] for line in listed) == sorted(names[1:])


def test_a_repository_made_after_a_folder_was_seen_outside_git_is_found(tmp_path):
    folder = tmp_path / "proj" / ".memzoi" / "records"
    folder.mkdir(parents=True)
    assert hide_temporaries(folder) is False
    assert not (tmp_path / "proj" / ".git").exists()
    _git(tmp_path / "proj", "init", "-q", "--template=")
    assert hide_temporaries(folder)
    assert TEMP_PATTERN in _lines(tmp_path / "proj")


def test_a_pattern_removed_by_hand_is_added_again(tmp_path):
    _git(tmp_path, "init", "-q", "--template=")
    assert hide_temporaries(tmp_path / ".git" / "..")
    exclude_file = tmp_path / ".git" / "info" / "exclude"
    exclude_file.write_text("# emptied by hand\n", encoding="utf-8")
    assert hide_temporaries(tmp_path)
    assert _lines(tmp_path) == ["# emptied by hand", gitexclude.TEMP_COMMENT, TEMP_PATTERN]


def test_an_exclude_file_that_is_a_symlink_is_not_written(tmp_path):
    _git(tmp_path, "init", "-q", "--template=")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.write_text("# not git's\n", encoding="utf-8")
    (tmp_path / ".git" / "info").mkdir()
    (tmp_path / ".git" / "info" / "exclude").symlink_to(elsewhere)
    assert hide_temporaries(tmp_path) is False
    assert elsewhere.read_text(encoding="utf-8") == "# not git's\n"


@pytest.mark.skipif(not hasattr(os, "fork"), reason="forks processes")
def test_processes_adding_patterns_at_once_keep_every_line(tmp_path):
    """Each rewrite renames a whole new file in; the lock makes each writer read the last one first."""
    _git(tmp_path, "init", "-q", "--template=")
    target = gitexclude.exclude_path(tmp_path)
    r, w = os.pipe()
    children = []
    for i in range(8):
        pid = os.fork()
        if pid == 0:  # pragma: no cover - child
            os.close(w)
            os.read(r, 1)  # all start together
            ok = all(exclude(tmp_path, f"/p{i}-{k}", "# t", target=target) for k in range(5))
            os._exit(0 if ok else 1)
        children.append(pid)
    os.close(r)
    os.write(w, b"x" * 8)
    os.close(w)
    codes = [os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]) for pid in children]
    assert codes == [0] * 8
    lines = [line for line in _lines(tmp_path) if line.startswith("/p")]
    assert sorted(lines) == sorted(f"/p{i}-{k}" for i in range(8) for k in range(5))
    assert not [p.name for p in (tmp_path / ".git" / "info").iterdir() if p.name != "exclude"]
