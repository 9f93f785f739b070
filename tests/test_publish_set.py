"""The rule of the language server's stored publish set (:mod:`memzoi.stores.publishset`, issue 29: warm start),
called without a server: a set is given back only while every input it was judged from is unchanged (the listing,
each file's bytes by the one freshness rule, the configuration, git's state, the ledger's head, the tool, the
earliest retention boundary; the server's own parts are in its key), and it is stored only when it is still true of
the files. Over LSP: ``tests/lsp/test_publish_set.py``."""

from __future__ import annotations

import os
from datetime import UTC, datetime, timedelta
from pathlib import Path

import blake3
import pytest
from hypothesis import given, strategies as st

from memzoi.base import freshness
from memzoi.stores import publishset
from memzoi.stores.replayinputs import Stamps

from .test_admission import git
from .test_freshness import closed, keep_stat_edit, repo  # noqa: F401

NOW = datetime.now(UTC)
PARTS = ["utf-16", "[]", "[]", "code"]


def _paths(root: Path) -> list[str]:
    return sorted(str(p) for p in (root / ".memzoi").rglob("*.md"))


def _stamps(paths: list[str]) -> Stamps:
    out: Stamps = {}
    for p in paths:
        read = freshness.read_stable(p)
        assert read is not None
        packed = freshness.pack_stamp(blake3.blake3(read[0]).digest(), read[1], read[2])
        assert packed is not None
        out[p] = packed
    return out


def _messages(paths: list[str]) -> publishset.Messages:
    return {Path(p).as_uri(): b'{"diagnostics": ["%d"]}' % i for i, p in enumerate(paths)}


def _stored(root: Path, until: datetime | None = None, parts: list[str] = PARTS) -> publishset.Messages:
    paths = _paths(root)
    messages = _messages(paths)
    key = publishset.set_key(root, parts)
    projects = publishset.project_inputs(root, paths)
    assert publishset.save(root, key, paths, _stamps(paths), until, projects, messages)
    return messages


def _load(root: Path, now: datetime = NOW, parts: list[str] = PARTS) -> publishset.Messages | None:
    got = publishset.load(root, publishset.set_key(root, parts), _paths(root), now)
    return got[0] if got is not None else None


def test_an_unchanged_project_gives_its_set_back_with_the_stamps_it_vouched_by(repo, closed):
    messages = _stored(repo)
    got = publishset.load(repo, publishset.set_key(repo, PARTS), _paths(repo), NOW)
    assert got is not None and got[0] == messages and set(got[1]) == set(_paths(repo))


def test_an_edit_keeping_size_and_mtime_on_ext4(repo, closed):
    _stored(repo)
    keep_stat_edit(repo / ".memzoi/records/beta.md")
    assert _load(repo) is None


def test_an_edit_keeping_the_stat_where_ctime_follows_mtime(repo, closed, monkeypatch):
    monkeypatch.setattr(freshness, "fs_type", lambda dev: "fuse.sshfs")  # every file is hashed
    _stored(repo)
    assert _load(repo) is not None
    keep_stat_edit(repo / ".memzoi/records/beta.md")
    assert _load(repo) is None


def test_a_configuration_change(repo, closed):
    _stored(repo)
    (repo / ".memzoi/config.toml").write_text('[rules]\nseverity = { prompt_injection = "hint" }\n')
    assert _load(repo) is None


def test_an_untrack_and_a_gitignore_rule(repo, closed):
    _stored(repo)
    git(repo, "rm", "-q", "--cached", ".memzoi/records/beta.md")
    assert _load(repo) is None
    _stored(repo)
    (repo / ".gitignore").write_text(".memzoi/records/beta.md\n")
    assert _load(repo) is None


def test_a_retention_boundary_passing(repo, closed):
    boundary = NOW + timedelta(hours=1)
    _stored(repo, until=boundary)
    assert _load(repo, boundary - timedelta(microseconds=1)) is not None
    assert _load(repo, boundary) is None  # the boundary is inclusive


@pytest.mark.parametrize(
    "parts", [["utf-8", "[]", "[]", "code"], ["utf-16", '[["prompt_injection", "hint"]]', "[]", "code"]]
)
def test_another_position_encoding_or_setting_is_another_set(repo, closed, parts):
    _stored(repo)
    assert _load(repo, parts=parts) is None
    assert _load(repo) is not None


def test_a_new_or_removed_file(repo, closed):
    _stored(repo)
    (repo / ".memzoi/records/delta.md").write_text((repo / ".memzoi/records/beta.md").read_text())
    assert _load(repo) is None
    (repo / ".memzoi/records/delta.md").unlink()
    assert _load(repo) is not None
    (repo / ".memzoi/records/beta.md").unlink()
    assert _load(repo) is None


def test_a_damaged_row_is_a_miss(repo, closed):
    import sqlite3

    from memzoi.stores.store import store_path

    _stored(repo)
    conn = sqlite3.connect(store_path(repo))
    conn.execute("UPDATE reports SET report = zeroblob(length(report))")
    conn.commit()
    conn.close()
    assert _load(repo) is None


def test_a_set_is_stored_only_while_it_is_true_of_the_files(repo, closed):
    paths = _paths(repo)
    key = publishset.set_key(repo, PARTS)
    projects = publishset.project_inputs(repo, paths)
    stamps = _stamps(paths)
    missing = dict(stamps)
    missing.pop(paths[0])
    assert not publishset.save(repo, key, paths, missing, None, projects, {})  # a file without a stamp
    (repo / ".memzoi/config.toml").write_text("[rules]\n")
    assert not publishset.save(repo, key, paths, stamps, None, projects, {})  # inputs changed since judging
    projects = publishset.project_inputs(repo, paths)
    keep_stat_edit(repo / ".memzoi/records/beta.md")
    assert not publishset.save(repo, key, paths, stamps, None, projects, {})  # bytes changed since judged
    assert publishset.save(repo, key, paths, _stamps(paths), None, projects, {})


def test_no_store_is_created_to_look(tmp_path):
    (tmp_path / ".memzoi/records").mkdir(parents=True)
    assert publishset.load(tmp_path, publishset.set_key(tmp_path, PARTS), [], NOW) is None
    assert not any(Path(os.environ["MEMZOI_HOME"]).rglob("memzoi-lsp-store.db"))


def test_the_recorder_keeps_each_files_last_message():
    r = publishset.Recorder()
    r.add("a", b"1")
    r.add("b", b"2")
    r.add("a", b"3")
    r.add("b", None)  # clean again
    r.add("c", b"4")
    r.add("elsewhere", b"5")
    assert r.messages({"a", "b", "c", "d"}, {"c", "d"}) == {"a": b"3", "c": b"", "d": b""}
    r.add("a", b"line\nbreak")
    assert r.messages({"a"}, set()) is None


@given(
    st.dictionaries(
        st.text().filter(lambda k: "\0" not in k and "\n" not in k), st.binary().map(lambda b: b.replace(b"\n", b""))
    )
)
def test_the_stored_form_reads_back(messages):
    assert publishset.decode(publishset.encode(messages)) == messages


def test_a_message_or_key_it_cannot_store_is_refused():
    with pytest.raises(ValueError):
        publishset.encode({"a": b"x\ny"})
    with pytest.raises(ValueError):
        publishset.encode({"a\0b": b"x"})
    with pytest.raises(ValueError):
        publishset.decode(b"no separator\n")


def test_the_stamps_of_the_judged_bytes_come_from_the_store_entries(repo, closed, capsys):
    """What a scan stores with its set: each file's stamp as its store entry has it, where that entry is of the very
    bytes the stage was made from (its stamp and revision); else the packed stamp the scan kept (a file holding a
    secret has no entry); else none, and the set is not stored."""
    from memzoi.project.gitfacts import GitFacts
    from memzoi.project.verdict import ProjectContext
    from memzoi.runs import scanverdicts

    from .test_verdict_cache import cli

    assert cli(capsys, "check", str(repo / ".memzoi"))[0] in (0, 1)  # the store's entries
    paths = _paths(repo)
    ctx = ProjectContext.of(repo / ".memzoi", git=GitFacts(repo))
    cache = scanverdicts.open_cache(repo, ctx)
    assert cache is not None
    stages = scanverdicts.cached_stages(paths, ctx, cache)
    held = {s.path: (s.stamp, s.revision) for s in stages if s is not None and s.stamp is not None}
    assert set(held) == set(paths)
    got = publishset.judged_stamps(repo, cache.stamp, paths, held, {})
    assert got is not None and set(got) == set(paths)
    now = _stamps(paths)
    for p in paths:  # the stat stamp and digest of the bytes on disk (the read clock is the entry's own)
        mine, theirs = freshness.stamp_list(got[p]), freshness.stamp_list(now[p])
        assert mine[:4] == theirs[:4] and mine[5] == theirs[5]
    other = dict(held)
    other[paths[0]] = (held[paths[0]][0], "0" * 32)  # a stage of other bytes
    assert publishset.judged_stamps(repo, cache.stamp, paths, other, {}) is None
    assert publishset.judged_stamps(repo, "another configuration", paths, held, {}) is None
    extra = {p: v for p, v in _stamps(paths).items() if isinstance(v, bytes)}
    got = publishset.judged_stamps(repo, "another configuration", paths, held, extra)
    assert got is not None and set(got) == set(paths)  # every stamp from what the scan kept
    assert publishset.judged_stamps(repo, cache.stamp, [*paths, str(repo / "new.md")], held, {}) is None
