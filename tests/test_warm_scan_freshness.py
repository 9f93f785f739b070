"""The language server's warm start follows the one freshness rule (:mod:`memzoi.base.freshness`, issue 29): its
scan takes each file's first stage from the project store that ``memzoi check`` filled
(:func:`memzoi.runs.scanverdicts.cached_stages`, the call the warm start makes) only where the store vouches for
the file's current bytes. After each change below exactly the changed file is handed back for analysis (or every
file, when the tool or the configuration changed), and its analysis reports the credential the edit planted.

The server runs in another process, so these tests call the warm start's core the way ``tests/test_scan_verdicts.py``
does; what a warm start re-judges for git's state, the configuration and the ledger is held over LSP in
``tests/lsp/test_warm_start_inputs.py`` and ``tests/lsp/test_input_freshness.py``. The edits and the simulated
mounts are those of ``tests/test_freshness.py`` (the racy window closed and no sample drawn unless a test says
otherwise)."""

from __future__ import annotations

import json
import os
import sqlite3
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from memzoi.base import freshness
from memzoi.project.gitfacts import GitFacts
from memzoi.project.verdict import ProjectContext
from memzoi.runs import check as checkmod, scanverdicts
from memzoi.stores import toolstamp, verdictcache

from .builders import edit
from .test_freshness import _cache_db, closed, keep_stat_edit, lying_stat, planted, repo, token  # noqa: F401
from .test_scan_verdicts import _files
from .test_verdict_cache import cli

NAMES = {"alpha.md", "beta.md", "gamma.md"}


def _ctx(root: Path, now: datetime | None = None) -> ProjectContext:
    git = GitFacts(root)
    git.ask(_files(root))
    return ProjectContext.of(root / ".memzoi", git=git, now=now)


def warm(root: Path, now: datetime | None = None) -> dict[str, object]:
    """Each file's first stage as the server's warm start takes it from the store (``None``: to be analysed)."""
    ctx = _ctx(root, now)
    files = _files(root)
    hits = scanverdicts.cached_stages(files, ctx, scanverdicts.open_cache(root, ctx))
    return {Path(p).name: h for p, h in zip(files, hits)}


def missed(root: Path) -> set[str]:
    return {name for name, hit in warm(root).items() if hit is None}


def filled(capsys, root: Path) -> None:
    """The store as a ``memzoi check`` leaves it: the warm start then takes every file from it."""
    assert cli(capsys, "check", str(root / ".memzoi"))[0] in (0, 1)  # 1: a finding of the error severity
    assert missed(root) == set() and set(warm(root)) >= NAMES


def analysed_codes(root: Path, name: str) -> list[str]:
    """The codes the warm start's analysis of a missed file gives (:func:`scanverdicts.analyse`); its messages
    never hold the planted value."""
    path = str(root / ".memzoi/records" / name)
    ctx = _ctx(root)
    [scanned] = list(scanverdicts.analyse([path], ctx, index_root=root, workers=1))
    assert scanned is not None
    own = scanned.verdict.first.own
    assert all(token() not in f.message for f in own)
    return [f.code for f in own]


def test_an_edit_keeping_size_and_mtime_on_ext4(repo, capsys, closed):
    filled(capsys, repo)
    keep_stat_edit(repo / ".memzoi/records/beta.md")
    assert missed(repo) == {"beta.md"}
    assert "credential_token" in analysed_codes(repo, "beta.md")


@pytest.mark.parametrize("kind", ["fuse.sshfs", "vfat", "exfat"])
def test_an_edit_keeping_the_stat_where_ctime_follows_mtime(repo, capsys, closed, monkeypatch, kind):
    monkeypatch.setattr(freshness, "fs_type", lambda dev: kind)
    filled(capsys, repo)
    path = repo / ".memzoi/records/beta.md"
    lying_stat(monkeypatch, path)
    keep_stat_edit(path)
    assert missed(repo) == {"beta.md"}
    assert "credential_token" in analysed_codes(repo, "beta.md")


def test_an_edit_within_the_racy_window(repo, capsys, monkeypatch):
    monkeypatch.setattr(freshness, "SAMPLE_SHARE", 0)
    monkeypatch.setattr(freshness, "fs_type", lambda dev: "ext4")
    monkeypatch.setattr(freshness, "RACY_NS", 10**15)  # every entry was made within the window of its file
    filled(capsys, repo)
    path = repo / ".memzoi/records/beta.md"
    lying_stat(monkeypatch, path)  # the same clock tick: the stat shows nothing
    path.write_bytes(planted(path))
    assert missed(repo) == {"beta.md"}


def test_a_rename_over_the_file(repo, capsys, closed):
    filled(capsys, repo)
    path = repo / ".memzoi/records/beta.md"
    st = path.stat()
    other = repo / "beta.tmp"
    other.write_bytes(planted(path))
    os.utime(other, ns=(st.st_atime_ns, st.st_mtime_ns))
    os.replace(other, path)
    assert missed(repo) == {"beta.md"}
    assert "credential_token" in analysed_codes(repo, "beta.md")


def test_an_edit_through_a_hard_link(repo, capsys, closed):
    path = repo / ".memzoi/records/beta.md"
    link = repo / "beta-link"
    os.link(path, link)
    filled(capsys, repo)
    st = link.stat()
    with open(link, "r+b") as fh:
        fh.write(planted(path))
    os.utime(link, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert missed(repo) == {"beta.md"}
    assert "credential_token" in analysed_codes(repo, "beta.md")


def test_a_corrupted_payload_is_a_miss_never_a_verdict(repo, capsys, closed):
    path = repo / ".memzoi/records/beta.md"
    path.write_text(edit(path.read_text(), "status: active", "status: bogus"))
    filled(capsys, repo)
    key = verdictcache.path_key(str(path))
    with sqlite3.connect(_cache_db()) as conn:  # a well-formed payload with its findings taken out
        [payload] = conn.execute("SELECT payload FROM entries WHERE key = ?", (key,)).fetchone()
        value = json.loads(payload)
        assert value[4]
        value[4] = []
        conn.execute("UPDATE entries SET payload = ? WHERE key = ?", (json.dumps(value), key))
    assert missed(repo) == {"beta.md"}
    assert "invalid_value" in analysed_codes(repo, "beta.md")


def test_a_code_change_under_the_same_version(repo, capsys, closed, monkeypatch):
    filled(capsys, repo)
    toolstamp.tool_stamp.cache_clear()
    monkeypatch.setattr(toolstamp, "source_digest", lambda top, store=None: "another build of the same version")
    try:
        assert missed(repo) >= NAMES
    finally:
        toolstamp.tool_stamp.cache_clear()


def test_a_tool_version_change(repo, capsys, closed, monkeypatch):
    filled(capsys, repo)
    monkeypatch.setattr(verdictcache, "tool_stamp", lambda: "another version")
    assert missed(repo) >= NAMES


def test_a_configuration_change(repo, capsys, closed):
    filled(capsys, repo)
    (repo / ".memzoi/config.toml").write_text('[rules]\nseverity = { prompt_injection = "hint" }\n')
    assert missed(repo) >= NAMES


def test_a_retention_boundary_passing_is_judged_at_the_warm_starts_clock(repo, capsys, closed, monkeypatch):
    episode = edit(
        edit((repo / ".memzoi/records/alpha.md").read_text(), "lane: semantic", "lane: episodic"),
        "retention: {}",
        'retention:\n  occurred_at: "2026-06-01T00:00:00Z"',
    )
    (repo / ".memzoi/records/episode.md").write_text(episode.replace("id: alpha", "id: episode"))
    boundary = datetime(2026, 7, 1, tzinfo=UTC)  # occurred_at + 30 days
    monkeypatch.setattr(checkmod, "utc_now", lambda: boundary - timedelta(seconds=1))
    assert cli(capsys, "check", str(repo / ".memzoi"))[0] in (0, 1)
    before = warm(repo, boundary - timedelta(seconds=1))["episode.md"]
    after = warm(repo, boundary)["episode.md"]  # the boundary is inclusive
    assert before is not None and after is not None  # the entry still vouches: the bytes did not change
    assert "retention_query_only" not in [f.code for f in before.first.own]
    assert "retention_query_only" in [f.code for f in after.first.own]
