"""The user's global ignore rules as an input of stored verdicts (:mod:`memzoi.project.gitexcludes`): git's
``check-ignore`` honours the file ``core.excludesFile`` names (by default ``$XDG_CONFIG_HOME/git/ignore``), so a
rule added there, or a configuration naming another file, must end a stored publish set and ``memzoi check``'s
replay as a ``.gitignore`` rule does: the untracked file it ignores then shows ``ignored_untracked``."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from memzoi.project import gitexcludes
from memzoi.stores import publishset

from .mcp.conftest import home, project  # noqa: F401 - fixtures
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


def _excludes(configs: list[tuple[Path, bytes]], top: Path) -> list[Path]:
    return gitexcludes.excludes_files(gitexcludes.expand(configs)[1], top)


def test_the_excludes_file_git_reads(tmp_path: Path, xdg: Path, monkeypatch: pytest.MonkeyPatch):
    assert _excludes([], tmp_path) == [xdg / "git/ignore"]
    monkeypatch.setenv("XDG_CONFIG_HOME", "")
    assert _excludes([], tmp_path) == [tmp_path / "user-home/.config/git/ignore"]
    configs = [
        (tmp_path / "global", b"[core]\n\texcludesFile = ~/mine\n"),
        (tmp_path / "repo", b'[user]\n\texcludesfile = no\n[Core]\n  ExcludesFile = "rel/ignore" # why\n'),
    ]
    assert _excludes(configs[:1], tmp_path) == [tmp_path / "user-home/mine"]
    assert _excludes(configs, tmp_path) == [tmp_path / "rel/ignore"]  # the last one, top-relative
    assert _excludes([(tmp_path / "x", b"[user]\nexcludesFile = /no\n")], tmp_path) == [
        tmp_path / "user-home/.config/git/ignore"
    ]
    assert _excludes([(tmp_path / "x", b"[core] excludesFile = /same/line\n")], tmp_path) == [Path("/same/line")]


def test_includes_are_followed_as_git_follows_them(tmp_path: Path, xdg: Path):
    """``include.path`` relative to the including file and ``~``-expanded; the included value read in place (a
    later value of the including file wins); a missing file skipped; ``includeIf`` makes every value an input."""
    conf = tmp_path / "conf"
    conf.mkdir()
    (conf / "extra").write_text("[core]\n\texcludesFile = ~/team-ignore\n[include]\n\tpath = ../deeper\n")
    (tmp_path / "deeper").write_text("[user]\n\tname = x\n")
    (tmp_path / "user-home/from-home").write_text("[core]\n\texcludesFile = /from/home\n")
    top = tmp_path / "top"
    included = [(conf / "x", b"[include]\n\tpath = extra\n\tpath = missing\n")]
    files, named = gitexcludes.expand(included)
    assert [p for p, _ in files] == [conf / "extra", conf / "../deeper", conf / "missing"]  # as the kernel opens it
    assert files[-1][1] == b"\0absent"
    assert gitexcludes.excludes_files(named, top) == [tmp_path / "user-home/team-ignore"]
    later = [(conf / "x", b"[include]\n\tpath = extra\n[core]\n\texcludesFile = /later\n")]
    assert _excludes(later, top) == [Path("/later")]
    home = [(tmp_path / "y", b"[include]\n\tpath = ~/from-home\n")]
    assert _excludes(home, top) == [Path("/from/home")]
    conditional = [(conf / "x", b'[includeIf "gitdir:/nowhere/"]\n\tpath = extra\n')]
    assert _excludes(conditional, top) == [tmp_path / "user-home/team-ignore", xdg / "git/ignore"]


def test_an_include_cycle_is_read_once_and_bounded(tmp_path: Path, xdg: Path):
    (tmp_path / "a").write_text("[include]\n\tpath = b\n[core]\n\texcludesFile = /from/a\n")
    (tmp_path / "b").write_text("[include]\n\tpath = a\n\tpath = b\n[core]\n\texcludesFile = /from/b\n")
    files, named = gitexcludes.expand([(tmp_path / "x", b"[include]\npath = a\n")])
    assert [p for p, _ in files] == [tmp_path / "a", tmp_path / "b"]
    assert set(gitexcludes.excludes_files(named, tmp_path)) == {Path("/from/a"), Path("/from/b"), xdg / "git/ignore"}
    chain = [tmp_path / f"c{i}" for i in range(gitexcludes.MAX_INCLUDE_DEPTH + 2)]
    for here, there in zip(chain, chain[1:], strict=False):
        here.write_text(f"[include]\n\tpath = {there.name}\n")
    chain[-1].write_text("[core]\n\texcludesFile = /too/deep\n")
    files, named = gitexcludes.expand([(tmp_path / "x", b"[include]\npath = c0\n")])
    assert len(files) == gitexcludes.MAX_INCLUDE_DEPTH and named == []


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


def _include_excludes(config: Path, conf: Path, rules: Path, section: str = "[include]") -> None:
    """``config`` includes ``conf`` (relative to ``config``'s folder), which names ``rules`` as the excludes file."""
    conf.parent.mkdir(parents=True, exist_ok=True)
    conf.write_text(f"[core]\n\texcludesFile = {rules}\n")
    with config.open("a") as f:
        f.write(f"{section}\n\tpath = {os.path.relpath(conf, config.parent)}\n")


@pytest.mark.parametrize("where", ["global include", "repository includeIf"])
def test_replay_follows_a_rule_of_an_included_excludes_file(repo, closed, xdg, capsys, where, tmp_path):
    _untracked(repo)
    rules = tmp_path / "team-ignore"
    rules.write_text("")
    if where == "global include":
        _include_excludes(tmp_path / "user-home/.gitconfig", tmp_path / "user-home/conf/git-extra", rules)
    else:
        section = f'[includeIf "gitdir:{repo.resolve()}/"]'  # a trailing slash: every git directory below
        _include_excludes(repo / ".git/config", tmp_path / "conf/repo-extra", rules, section)
    target = str(repo / ".memzoi")
    cli(capsys, "check", target, "--format", "json")  # the report is stored
    rules.write_text("local-only.md\n")
    base = cli(capsys, "check", target, "--format", "json", "--no-cache")
    got = cli(capsys, "check", target, "--format", "json")
    assert "ignored_untracked" in [f["code"] for f in json.loads(base[1])["findings"]]
    assert got == base


def test_an_included_configuration_made_later_ends_a_stored_publish_set(repo, closed, xdg, tmp_path):
    """The included file is an input even while it is missing: made later naming a rule file, it ends the set."""
    _untracked(repo)
    rules = tmp_path / "team-ignore"
    rules.write_text("local-only.md\n")
    conf = tmp_path / "user-home/conf/later"
    (tmp_path / "user-home/.gitconfig").write_text("[include]\n\tpath = conf/later\n")
    _stored(repo)
    assert _load(repo) is not None
    conf.parent.mkdir()
    conf.write_text(f"[core]\n\texcludesFile = {rules}\n")
    assert _load(repo) is None
    _stored(repo)
    rules.write_text("nothing-here.md\n")
    assert _load(repo) is None


def test_a_rule_of_an_included_excludes_file_reaches_every_search(project, xdg, capsys, tmp_path):
    from .mcp.conftest import WARNING_ID
    from .test_index_inputs import admitted

    rules = tmp_path / "team-ignore"
    rules.write_text("")
    _include_excludes(tmp_path / "user-home/.gitconfig", tmp_path / "user-home/git-extra", rules)
    assert admitted(capsys, project, WARNING_ID, "refresh") == {True}  # untracked, not ignored
    rules.write_text(".memzoi/records/warnings/\n")
    assert admitted(capsys, project, WARNING_ID, "refresh") == {False}  # untracked and ignored: refused
    rules.write_text("")
    assert admitted(capsys, project, WARNING_ID, "refresh") == {True}
