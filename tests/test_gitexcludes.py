"""The user's global ignore rules as an input of stored verdicts (:mod:`memzoi.project.gitexcludes`): git's
``check-ignore`` honours the file ``core.excludesFile`` names (by default ``$XDG_CONFIG_HOME/git/ignore``), so a
rule added there, or a configuration naming another file, must end a stored publish set and ``memzoi check``'s
replay as a ``.gitignore`` rule does: the untracked file it ignores then shows ``ignored_untracked``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from memzoi.project import gitexcludes
from memzoi.stores import publishset

from .test_admission import rec
from .test_freshness import closed, repo  # noqa: F401
from .test_publish_set import _load, _stored
from .test_verdict_cache import cli


@pytest.fixture
def xdg(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An empty ``XDG_CONFIG_HOME`` and ``HOME`` of the test's own (no global rule of the machine counts)."""
    home = tmp_path / "user-home"
    (home / "xdg/git").mkdir(parents=True)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / "xdg"))
    monkeypatch.setattr(gitexcludes, "SYSTEM_CONFIG", home / "no-system-config")
    return home / "xdg"


def _untracked(repo: Path) -> Path:
    local = repo / ".memzoi/records/local-only.md"
    local.write_text(rec("local-only"))
    return local


def test_the_excludes_file_git_reads(tmp_path: Path, xdg: Path, monkeypatch: pytest.MonkeyPatch):
    assert gitexcludes.excludes_file([], tmp_path) == xdg / "git/ignore"
    monkeypatch.setenv("XDG_CONFIG_HOME", "")
    assert gitexcludes.excludes_file([], tmp_path) == tmp_path / "user-home/.config/git/ignore"
    configs = [
        (tmp_path / "global", b"[core]\n\texcludesFile = ~/mine\n"),
        (tmp_path / "repo", b'[user]\n\texcludesfile = no\n[Core]\n  ExcludesFile = "rel/ignore" # why\n'),
    ]
    assert gitexcludes.excludes_file(configs[:1], tmp_path) == tmp_path / "user-home/mine"
    assert gitexcludes.excludes_file(configs, tmp_path) == tmp_path / "rel/ignore"  # the last one, top-relative
    assert gitexcludes.excludes_file([(tmp_path / "x", b"[user]\nexcludesFile = /no\n")], tmp_path) == (
        tmp_path / "user-home/.config/git/ignore"
    )


def test_a_global_ignore_rule_ends_a_stored_publish_set(repo, closed, xdg):
    _untracked(repo)
    _stored(repo)
    assert _load(repo) is not None
    (xdg / "git/ignore").write_text("local-only.md\n")
    assert _load(repo) is None


def test_a_repository_configuration_naming_an_excludes_file_ends_it(repo, closed, xdg, tmp_path):
    _untracked(repo)
    rules = tmp_path / "team-ignore"
    rules.write_text("local-only.md\n")
    _stored(repo)
    with (repo / ".git/config").open("a") as f:
        f.write(f"[core]\n\texcludesFile = {rules}\n")
    assert _load(repo) is None
    _stored(repo)
    rules.write_text("nothing-here.md\n")  # the named file's rules changed
    assert _load(repo) is None
    assert publishset.project_inputs(repo, []) == publishset.project_inputs(repo, [])


def test_checks_replay_follows_a_global_ignore_rule(repo, closed, xdg, capsys):
    _untracked(repo)
    target = str(repo / ".memzoi")
    cli(capsys, "check", target, "--format", "json")  # the report is stored
    (xdg / "git/ignore").write_text("local-only.md\n")
    base = cli(capsys, "check", target, "--format", "json", "--no-cache")
    got = cli(capsys, "check", target, "--format", "json")
    assert "ignored_untracked" in [f["code"] for f in json.loads(base[1])["findings"]]
    assert got == base
