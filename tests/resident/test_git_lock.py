"""Issue 28: the lock companion Zuno's writers take beside a resident file (``<name>.zuno-write-lock``) never shows
as an untracked file of the repository: a real git repository, ``git status --porcelain`` before and after. Nor
does the temporary file a resident write makes beside the file (``.<name>.<12 hex>.tmp``), left by a write killed
before its rename."""

from __future__ import annotations

import subprocess

from memzoi.base.gitexclude import COMMENT, TEMP_PATTERN, exclude
from memzoi.resident import service
from memzoi.resident.store import WRITE_LOCK_SUFFIX

from .conftest import rules


def _git(root, *args):
    return subprocess.run(["git", "-C", str(root), *args], capture_output=True, text=True, check=True).stdout


def _repo(root):
    _git(root, "init", "-q")
    _git(root, "config", "user.email", "t@example.invalid")
    _git(root, "config", "user.name", "t")
    _git(root, "add", "-A")
    _git(root, "commit", "-qm", "init")


def _approve(root, content):
    res = service.propose(root, scope="project", action="add", content=content, reason="r", confidence=0.5, actor="a")
    return service.apply(root, res.candidate.id, actor="b")


def test_an_approve_leaves_no_untracked_lock_file(project):
    _repo(project)
    assert _git(project, "status", "--porcelain", "--untracked-files=all") == ""
    _approve(project, "Run make lint.")
    lock = rules(project).with_name(rules(project).name + WRITE_LOCK_SUFFIX)
    assert lock.is_file()  # the companion is there, beside the file, where Zuno locks it too
    # the first approve creates the resident file itself, and nothing else
    assert _git(project, "status", "--porcelain", "--untracked-files=all").splitlines() == ["?? .zuno/RULES.md"]
    _git(project, "add", ".zuno/RULES.md")
    _git(project, "commit", "-qm", "rules")
    _approve(project, "Use tabs.")
    assert _git(project, "status", "--porcelain", "--untracked-files=all").splitlines() == [" M .zuno/RULES.md"]
    assert _git(project, "status", "--porcelain", "--ignored", "--untracked-files=all").splitlines() == [
        " M .zuno/RULES.md",
        "!! .zuno/RULES.md" + WRITE_LOCK_SUFFIX,
    ]
    exclude_file = project / ".git" / "info" / "exclude"
    assert exclude_file.read_text(encoding="utf-8").count("*" + WRITE_LOCK_SUFFIX) == 1  # added once


def test_a_linked_worktree_uses_the_common_exclude_file(project, tmp_path):
    _repo(project)
    linked = tmp_path / "linked"
    _git(project, "worktree", "add", "-q", str(linked))
    (linked / ".zuno").mkdir()
    assert exclude(linked / ".zuno", "*" + WRITE_LOCK_SUFFIX)
    (linked / ".zuno" / ("RULES.md" + WRITE_LOCK_SUFFIX)).write_bytes(b"")
    assert _git(linked, "status", "--porcelain", "--untracked-files=all") == ""
    text = (project / ".git" / "info" / "exclude").read_text(encoding="utf-8")
    assert f"{COMMENT}\n*{WRITE_LOCK_SUFFIX}\n" in text


def test_outside_a_repository_nothing_is_excluded(tmp_path):
    assert exclude(tmp_path, "*" + WRITE_LOCK_SUFFIX) is False
    assert list(tmp_path.iterdir()) == []


def test_a_resident_writes_temporary_file_never_shows(project):
    """After a write, a file of the name and folder a write killed before its rename leaves is not listed; a
    name a user chose there is."""
    _repo(project)
    _approve(project, "Run make lint.")
    exclude_file = project / ".git" / "info" / "exclude"
    assert exclude_file.read_text(encoding="utf-8").splitlines().count(TEMP_PATTERN) == 1
    left = rules(project).with_name(f".{rules(project).name}.0123456789ab.tmp")
    left.write_bytes(b"half\n")  # the name and place the killed write leaves (memzoi.base.fsio.temp_name)
    mine = rules(project).with_name(".RULES.draft.tmp")
    mine.write_bytes(b"mine\n")
    assert _git(project, "status", "--porcelain", "--untracked-files=all").splitlines() == [
        "?? .zuno/.RULES.draft.tmp",
        "?? .zuno/RULES.md",
    ]
