"""Replay of ``memzoi check`` (:mod:`memzoi.stores.replay`, :mod:`memzoi.runs.checkreplay`): when no input of a report changed,
the stored report is printed, byte for byte what ``--no-cache`` prints in every format; each input that changes
(an edit, also one keeping size and mtime, on a file system whose ctime follows the mtime too; a new file; the
configuration; ``.gitignore``, ``info/exclude``, ``git add``/``git rm --cached``, a commit; the ledger; the tool;
a retention boundary passing; a damaged stored row) makes the run judge again, and what it prints is again
``--no-cache``'s.

Whether a run replayed is told by wrapping the planner (``memzoi.runs.check.plan_check``) and the partial re-judging
(``memzoi.runs.checkpartial.rejudge``): a replayed run does neither.
Nothing here measures time.
"""

from __future__ import annotations

import os
import sqlite3
import zlib
from dataclasses import asdict
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from hypothesis import given, settings, strategies as st

from memzoi.base import freshness
from memzoi.base.runtime import STORE_DB
from memzoi.cli.main import main
from memzoi.runs import check as checkmod, checkpartial
from memzoi.stores import toolstamp, verdictcache
from memzoi.stores.replayinputs import decode

from .builders import edit
from .test_admission import git, rec
from .test_verdict_cache import EPISODE

FORMATS = ("json", "text", "sarif", "github")


@pytest.fixture
def planned(monkeypatch):
    """How many runs judged (planned every file, or re-judged the changed ones: ``partial``) rather than
    replayed, since the last reset."""
    n = {"runs": 0, "partial": 0}
    real = checkmod.plan_check
    real_partial = checkpartial.rejudge

    def counting(*a, **k):
        n["runs"] += 1
        return real(*a, **k)

    def counting_partial(*a, **k):
        got = real_partial(*a, **k)
        if got is not None:
            n["runs"] += 1
            n["partial"] += 1
        return got

    monkeypatch.setattr(checkmod, "plan_check", counting)
    monkeypatch.setattr(checkpartial, "rejudge", counting_partial)
    return n


@pytest.fixture
def repo(tmp_path: Path, monkeypatch) -> Path:
    git(tmp_path, "init", "-q")
    records = tmp_path / ".memzoi/records"
    records.mkdir(parents=True)
    for rid in ("alpha", "beta", "gamma"):
        (records / f"{rid}.md").write_text(rec(rid), encoding="utf-8")
    (records / "bad.md").write_text(edit(rec("bad"), "lane: semantic", "lane: nope"), encoding="utf-8")
    git(tmp_path, "add", ".")
    git(tmp_path, "commit", "-q", "-m", "records")
    (records / "new.md").write_text(rec("new"), encoding="utf-8")  # untracked
    monkeypatch.chdir(tmp_path)
    return tmp_path


def run(capsys, *argv: str) -> tuple[int, str]:
    capsys.readouterr()
    code = main(["check", *argv])
    return code, capsys.readouterr().out


def every_format(capsys, *extra: str) -> dict[str, tuple[int, str]]:
    return {fmt: run(capsys, ".memzoi", "--format", fmt, *extra) for fmt in FORMATS}


def replays(capsys, planned) -> dict[str, tuple[int, str]]:
    """Every format of a run that must replay, after a run of each that stores its report."""
    every_format(capsys)
    planned["runs"] = 0
    got = every_format(capsys)
    assert planned["runs"] == 0, "a run with no changed input judged again"
    return got


def judged_again(capsys, planned) -> None:
    """The next run judges again and prints what --no-cache prints, in every format; the run after it replays."""
    base = every_format(capsys, "--no-cache")
    planned["runs"] = 0
    assert run(capsys, ".memzoi", "--format", "json") == base["json"]
    assert planned["runs"] == 1, "a changed input was not seen"
    assert replays(capsys, planned) == base


def reports() -> int:
    [db] = sorted(Path(os.environ["MEMZOI_HOME"]).rglob(STORE_DB))
    with sqlite3.connect(db) as conn:
        return conn.execute("SELECT count(*) FROM reports").fetchone()[0]


def test_cold_warm_and_replayed_reports_are_identical_in_every_format(repo, capsys, planned):
    base = every_format(capsys, "--no-cache")
    assert "invalid_value" in base["json"][1] and base["json"][0] == 1
    assert every_format(capsys) == base  # cold (fills the store), then stored and replayed
    assert reports() == 1
    with sqlite3.connect(sorted(Path(os.environ["MEMZOI_HOME"]).rglob(STORE_DB))[0]) as conn:
        conn.execute("DELETE FROM reports")
    assert every_format(capsys) == base  # warm: entries, no stored report
    assert replays(capsys, planned) == base


def test_an_edit_is_seen(repo, capsys, planned):
    replays(capsys, planned)
    path = repo / ".memzoi/records/alpha.md"
    path.write_text(edit(path.read_text(), "lane: semantic", "lane: nope"))
    judged_again(capsys, planned)


@pytest.mark.parametrize("fs", ["ext4", "fuse.sshfs"])
def test_an_edit_keeping_size_and_mtime_is_seen(repo, capsys, planned, monkeypatch, fs):
    """On ext4 the ctime moves; where the ctime follows the mtime (a FUSE mount) the content hash decides."""
    monkeypatch.setattr(freshness, "RACY_NS", -1)  # the stat would vouch: only the ctime or the hash can tell
    monkeypatch.setattr(freshness, "SAMPLE_SHARE", 0)
    monkeypatch.setattr(freshness, "fs_type", lambda dev: fs)
    replays(capsys, planned)
    path = repo / ".memzoi/records/alpha.md"
    before = os.stat(path)
    text = path.read_text()
    changed = edit(text, "lane: semantic", "lane: semantix")  # the same length, now invalid
    assert len(changed) == len(text)
    path.write_text(changed)
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
    if fs != "ext4":  # as such a file system shows it: the ctime is the mtime
        real = freshness.lstat

        def lying(p):
            st = real(p)
            if st is not None and os.path.abspath(p) == str(path):
                return freshness.Stat((*st.stamp[:3], st.stamp[1]), st.dev)
            return st

        monkeypatch.setattr(freshness, "lstat", lying)
    judged_again(capsys, planned)


def test_a_new_file_and_a_removed_file_are_seen(repo, capsys, planned):
    replays(capsys, planned)
    (repo / ".memzoi/records/delta.md").write_text(rec("delta"))
    judged_again(capsys, planned)
    (repo / ".memzoi/records/delta.md").unlink()
    judged_again(capsys, planned)


def test_a_configuration_change_is_seen(repo, capsys, planned):
    replays(capsys, planned)
    (repo / ".memzoi/config.toml").write_text('[rules]\ninvalid_value = "warning"\n')
    judged_again(capsys, planned)


@pytest.mark.parametrize("change", ["gitignore", "exclude", "add", "rm-cached", "commit"])
def test_a_change_of_git_state_is_seen(repo, capsys, planned, change):
    replays(capsys, planned)
    if change == "gitignore":
        (repo / ".gitignore").write_text(".memzoi/records/new.md\n")
    elif change == "exclude":
        (repo / ".git/info").mkdir(exist_ok=True)
        (repo / ".git/info/exclude").write_text(".memzoi/records/new.md\n")
    elif change == "add":
        git(repo, "add", ".memzoi/records/new.md")
    elif change == "rm-cached":
        git(repo, "rm", "-q", "--cached", ".memzoi/records/beta.md")
    else:
        git(repo, "add", ".memzoi/records/new.md")
        git(repo, "commit", "-q", "-m", "new")
    judged_again(capsys, planned)


def test_a_ledger_change_is_seen(repo, capsys, planned):
    from memzoi.ledger import Ledger

    replays(capsys, planned)
    with Ledger.for_project(repo).connect() as conn:  # a ledger appears: its head is an input
        conn.execute("SELECT count(*) FROM change").fetchone()
    judged_again(capsys, planned)


def test_a_tool_change_is_seen(repo, capsys, planned, monkeypatch):
    replays(capsys, planned)
    monkeypatch.setattr(toolstamp, "tool_stamp", lambda: "another build")
    monkeypatch.setattr(verdictcache, "tool_stamp", toolstamp.tool_stamp)  # its entries' stamp too
    judged_again(capsys, planned)


def test_a_retention_boundary_passing_is_seen(repo, capsys, planned, monkeypatch):
    (repo / ".memzoi/records/episode.md").write_text(EPISODE)
    boundary = datetime(2026, 7, 1, tzinfo=UTC)  # occurred_at + 30 days
    monkeypatch.setattr(checkmod, "utc_now", lambda: boundary - timedelta(seconds=1))
    assert "retention_query_only" not in replays(capsys, planned)["json"][1]
    monkeypatch.setattr(checkmod, "utc_now", lambda: boundary)  # the boundary is inclusive
    base = every_format(capsys, "--no-cache")
    assert "retention_query_only" in base["json"][1]
    planned["runs"] = 0
    assert every_format(capsys) == base
    assert planned["runs"] >= 1


def test_a_damaged_stored_report_is_a_miss(repo, capsys, planned):
    base = replays(capsys, planned)
    [db] = sorted(Path(os.environ["MEMZOI_HOME"]).rglob(STORE_DB))
    with sqlite3.connect(db) as conn:
        conn.execute("UPDATE reports SET report = zeroblob(40)")
    planned["runs"] = 0
    assert run(capsys, ".memzoi", "--format", "json") == base["json"]
    assert planned["runs"] == 1


def test_a_report_with_a_secret_is_replayed_and_the_store_holds_no_byte_of_it(repo, capsys, planned):
    token = "ghp_" + "".join(chr(ord("a") + (i * 7) % 26) for i in range(36))  # built here, never printed
    path = repo / ".memzoi/records/alpha.md"
    path.write_text(edit(path.read_text(), "Body text of alpha", f"Body text of alpha {token}"))
    base = every_format(capsys, "--no-cache")
    assert "credential_token" in base["json"][1]
    assert replays(capsys, planned) == base
    assert all(token not in out for _, out in base.values())
    [db] = sorted(Path(os.environ["MEMZOI_HOME"]).rglob(STORE_DB))
    for f in (db, db.with_name(db.name + "-wal")):
        assert not f.exists() or token.encode() not in f.read_bytes()
    with sqlite3.connect(db) as conn:  # the report and its inputs are stored compressed: look inside them too
        stored = conn.execute("SELECT inputs, report FROM reports").fetchall()
    assert stored and all(
        token not in repr(asdict(decode(inputs))) and token.encode() not in zlib.decompress(report)
        for inputs, report in stored
    )


def test_a_check_of_a_few_files_is_replayed_and_sees_the_other_files(repo, capsys, planned):
    """Its report depends on the project's other records and packets (cross-file facts): their bytes and their
    listing are inputs too (tests/test_check_partial.py re-judges it partially)."""
    base = run(capsys, ".memzoi/records/alpha.md", "--no-cache")
    for _ in range(2):
        assert run(capsys, ".memzoi/records/alpha.md") == base
    planned["runs"] = 0
    assert run(capsys, ".memzoi/records/alpha.md") == base
    assert planned["runs"] == 0
    (repo / ".memzoi/records/other.md").write_text(rec("other"), encoding="utf-8")
    assert run(capsys, ".memzoi/records/alpha.md") == run(capsys, ".memzoi/records/alpha.md", "--no-cache")
    assert planned["runs"] == 2  # the cached run judged again, and the --no-cache one


def test_a_rename_over_the_file_is_seen(repo, capsys, planned):
    replays(capsys, planned)
    path = repo / ".memzoi/records/alpha.md"
    other = repo / "alpha.tmp"
    other.write_text(edit(path.read_text(), "lane: semantic", "lane: semantix"))
    os.replace(other, path)
    judged_again(capsys, planned)


def test_an_edit_through_a_hard_link_is_seen(repo, capsys, planned):
    path = repo / ".memzoi/records/alpha.md"
    link = repo / "alpha-link.md"
    os.link(path, link)
    replays(capsys, planned)
    with open(link, "r+", encoding="utf-8") as fh:  # the same inode, written in place
        text = fh.read()
        fh.seek(0)
        fh.write(edit(text, "lane: semantic", "lane: semantix"))
    judged_again(capsys, planned)


def test_files_in_the_racy_window_are_confirmed_by_hash_then_trusted_by_stat(repo, capsys, planned, monkeypatch):
    """Just written, every file is racy: the replay reads and hashes them, and stores their new stamps, so once the
    window is past (taken as closed here) the next replay reads none."""
    monkeypatch.setattr(freshness, "SAMPLE_SHARE", 0)
    monkeypatch.setattr(freshness, "fs_type", lambda dev: "ext4")
    reads = {"n": 0}
    real = freshness.confirm

    def counting(*a, **k):
        reads["n"] += 1
        return real(*a, **k)

    monkeypatch.setattr(freshness, "confirm", counting)
    base = replays(capsys, planned)
    assert reads["n"] > 0  # racy: confirmed by hash, and still replayed
    monkeypatch.setattr(freshness, "RACY_NS", -1)
    reads["n"] = 0
    planned["runs"] = 0
    assert every_format(capsys) == base
    assert planned["runs"] == 0 and reads["n"] == 0


def test_files_drawn_for_a_re_hash_are_read_every_time_and_the_report_is_not_written_again(
    repo, capsys, planned, monkeypatch
):
    """A file whose stat would vouch but that is drawn for a re-hash (here: every file) is read and compared at each
    replay; its stored stamp is as good as the read's, so the stored report is not written again. An edit keeping
    the stat is still seen by the read."""
    from memzoi.stores import replay

    monkeypatch.setattr(freshness, "RACY_NS", -1)
    monkeypatch.setattr(freshness, "fs_type", lambda dev: "ext4")
    replays(capsys, planned)  # stored, and replayed once with nothing drawn
    monkeypatch.setattr(freshness, "SAMPLE_SHARE", 1)
    reads, saves = {"n": 0}, {"n": 0}
    real_confirm, real_save = freshness.confirm, replay.save

    def counting(*a, **k):
        reads["n"] += 1
        return real_confirm(*a, **k)

    def saving(*a, **k):
        saves["n"] += 1
        return real_save(*a, **k)

    monkeypatch.setattr(freshness, "confirm", counting)
    monkeypatch.setattr(replay, "save", saving)
    base = every_format(capsys, "--no-cache")
    planned["runs"] = reads["n"] = 0
    assert every_format(capsys) == base
    assert planned["runs"] == 0 and reads["n"] >= 5 * len(FORMATS) and saves["n"] == 0
    path = repo / ".memzoi/records/alpha.md"
    before = os.stat(path)
    path.write_text(edit(path.read_text(), "lane: semantic", "lane: semantix"))
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
    real_lstat = freshness.lstat

    def lying(p):  # as a file system whose ctime follows the mtime shows it: the stamp kept whole
        st = real_lstat(p)
        if st is not None and os.path.abspath(p) == str(path):
            return freshness.Stat((before.st_size, before.st_mtime_ns, before.st_ino, before.st_ctime_ns), st.dev)
        return st

    monkeypatch.setattr(freshness, "lstat", lying)
    planned["runs"] = 0
    assert run(capsys, ".memzoi", "--format", "json") == run(capsys, ".memzoi", "--format", "json", "--no-cache")
    assert planned["runs"] == 2  # the edit was seen by the read, and the --no-cache run


def test_a_replayed_check_loads_no_judging_code(repo):
    """A replayed run needs neither the analysis, the detectors nor the configuration models (pydantic)."""
    import subprocess
    import sys

    probe = (
        "import sys\nfrom memzoi.cli.main import main\ncode = main(['check', '.memzoi', '--format', 'json'])\n"
        "loaded = [m for m in ('pydantic', 'memzoi.judge.analysis', 'memzoi.safety', 'memzoi.project.verdict', 'yaml') "
        "if m in sys.modules]\nprint('LOADED', loaded, file=sys.stderr)\n"
    )
    runs = [
        subprocess.run([sys.executable, "-c", probe], cwd=repo, capture_output=True, text=True, env=os.environ)
        for _ in range(2)
    ]
    assert "LOADED []" not in runs[0].stderr  # the first run judged
    assert runs[1].stdout == runs[0].stdout and "LOADED []" in runs[1].stderr, runs[1].stderr[-500:]


def test_the_walks_name_of_the_configuration_is_the_configurations():
    from memzoi.judge import config
    from memzoi.project import checkpaths

    assert checkpaths.CONFIG_NAME == config.CONFIG_NAME


_PATHS = st.text(st.sampled_from('ab/."\\:[],{}é\u2028'), min_size=1, max_size=10).map(lambda s: "/p/" + s)
_STAMP = st.tuples(st.lists(st.integers(0, 2**62), min_size=5, max_size=5), st.text("0123456789abcdef", max_size=64))


@settings(max_examples=200, deadline=None)
@given(
    stamps=st.dictionaries(_PATHS, _STAMP, min_size=1, max_size=8),
    picks=st.lists(st.tuples(st.integers(0, 7), _STAMP), max_size=4),
    until=st.none() | st.integers(0, 2**60),
    links=st.none() | st.text("ab |", max_size=20),
    added=st.booleans(),
)
def test_inputs_with_a_few_stamps_changed_read_back_as_changed(stamps, picks, until, links, added):
    """Inputs read back (:mod:`memzoi.stores.replayinputs`), a few of their stamps changed (as a partial run and a
    restamp change them), a file added, are stored and read back as they are now (paths spelling quotes, colons and
    brackets included)."""
    from memzoi.stores.replayinputs import Inputs, decode, encode

    as_list = {p: [*n, d] for p, (n, d) in stamps.items()}
    listing = [["/p/.memzoi"], {"/p/.memzoi": [4096, 1, 2, 3, 4]}]
    read = decode(encode(Inputs("w" * 8, "p" * 8, as_list, 5, {"/p": ["/p/a"]}, "x y|z", ["/p/.memzoi"], listing)))
    assert read.listing == listing and read.stamps == as_list
    paths = list(as_list)
    for i, (n, d) in picks:
        read.stamps[paths[i % len(paths)]] = [*n, d]
    if added:
        read.stamps["/p/new"] = [1, 2, 3, 4, 5, "ab"]
    read.until_us, read.links = until, links
    again = decode(encode(read))
    assert again == read and list(again.stamps) == list(read.stamps)
