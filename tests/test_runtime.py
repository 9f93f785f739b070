"""Runtime directory key derivation (reference §7.3)."""

from __future__ import annotations

import struct
import subprocess

import blake3

from memzoi.base.runtime import derive_keys, project_runtime_dir, runtime_key, sanitize


def test_sanitize():
    assert sanitize("My Repo!") == "my-repo"
    assert sanitize("---") == "project"
    assert sanitize("a_b-C") == "a_b-c"


def test_runtime_key_is_length_prefixed_blake3():
    fields = [b"abc", b""]
    h = blake3.blake3(struct.pack(">Q", 3) + b"abc" + struct.pack(">Q", 0)).hexdigest()[:16]
    assert runtime_key("Repo", fields) == f"repo-{h}"
    # Length prefixes keep field boundaries apart.
    assert runtime_key("x", [b"ab", b"c"]) != runtime_key("x", [b"a", b"bc"])


def test_keys_outside_git(tmp_path, monkeypatch):
    monkeypatch.setenv("MEMZOI_HOME", str(tmp_path / "home"))
    proj = tmp_path / "proj"
    proj.mkdir()
    keys = derive_keys(proj)
    assert not keys.in_git
    raw = str(proj.resolve()).encode()
    assert keys.repository_key == runtime_key("proj", [b"non-git-repository-v2", raw])
    path = project_runtime_dir(proj, create=True)
    assert path.is_dir() and path.parent.parent == tmp_path / "home"


def test_keys_in_git(tmp_path):
    repo = tmp_path / "Work Tree"
    repo.mkdir()
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    keys = derive_keys(repo)
    assert keys.in_git
    common = str((repo / ".git").resolve()).encode()
    assert keys.repository_key == runtime_key("Work Tree", [common, b""])
    assert keys.repository_key.startswith("work-tree-")
    sub = repo / "pkg"
    sub.mkdir()
    assert derive_keys(sub).repository_key == runtime_key("pkg", [common, b"pkg"])


def test_keys_of_a_linked_worktree_come_from_one_git_process(tmp_path, monkeypatch):
    repo = tmp_path / "main"
    repo.mkdir()
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    who = ["-c", "user.name=t", "-c", "user.email=t@e"]
    subprocess.run(["git", "-C", str(repo), *who, "commit", "-q", "--allow-empty", "-m", "c"], check=True)
    linked = tmp_path / "linked"
    subprocess.run(["git", "-C", str(repo), "worktree", "add", "-q", str(linked)], check=True)
    calls = []
    real_run = subprocess.run

    def counting(cmd, *a, **kw):
        calls.append(cmd)
        return real_run(cmd, *a, **kw)

    monkeypatch.setattr(subprocess, "run", counting)
    keys = derive_keys(linked)
    assert len(calls) == 1
    common = str((repo / ".git").resolve()).encode()
    git_dir = str((repo / ".git" / "worktrees" / "linked").resolve()).encode()
    assert keys.in_git
    assert keys.repository_key == runtime_key("main", [common, b""])
    assert keys.worktree_key == runtime_key("worktree", [git_dir, b""])
    bare = tmp_path / "bare.git"
    subprocess.run(["git", "init", "-q", "--bare", str(bare)], check=True)
    assert not derive_keys(bare).in_git  # no work tree: git answers no top, as before
