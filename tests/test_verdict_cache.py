"""The verdict cache (:mod:`memzoi.stores.verdictcache`): ``memzoi check`` prints byte for byte the same report with and
without it, cold and warm, after edits; each kind of change invalidates exactly what it must (an edit, the
configuration, the tool, ``.gitignore``, a commit, a retention boundary passing with no edit); a damaged, foreign,
locked, unwritable or full cache is survived; no secret ever reaches it; its files are private.

Nothing here measures time. Which files a run analysed or read is counted by wrapping the functions that do it.
"""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import stat
import subprocess
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from memzoi.base import freshness
from memzoi.base.runtime import STORE_DB
from memzoi.cli.formats import to_json
from memzoi.cli.main import main
from memzoi.runs import check as checkmod
from memzoi.runs.check import check_paths
from memzoi.stores import firststage, store, verdictcache

from .builders import edit
from .conftest import CORPUS, corpus_or_skip
from .test_admission import git, rec
from .test_revision import attested

ROOT = Path(__file__).resolve().parents[1]
FORMATS = ("json", "text", "sarif", "github")


@pytest.fixture(autouse=True)
def entries_only(monkeypatch):
    """These tests are about the store's entries: every run judges (a whole report's replay, which would answer
    before any entry is read, is tested in ``tests/test_replay.py``)."""
    from memzoi.runs import check as _check

    monkeypatch.setattr(_check, "replayed", lambda *a, **k: None)


def cli(capsys, *argv: str) -> tuple[int, str]:
    capsys.readouterr()
    code = main(list(argv))
    return code, capsys.readouterr().out


def outputs(capsys, target: Path, *extra: str) -> dict[str, tuple[int, str]]:
    return {fmt: cli(capsys, "check", str(target), "--format", fmt, *extra) for fmt in FORMATS}


def cache_db() -> Path | None:
    found = sorted(Path(os.environ["MEMZOI_HOME"]).rglob(STORE_DB))
    return found[0] if found else None


def entries() -> int:
    """How many verdict entries are stored (not counting entries of facts alone, verdictpayload.facts_only)."""
    db = cache_db()
    if db is None:
        return 0
    with sqlite3.connect(db) as conn:
        return conn.execute("SELECT count(*) FROM entries WHERE payload NOT LIKE '[[%'").fetchone()[0]


@pytest.fixture
def counts(monkeypatch):
    """How many files this process analysed (``analysed``) and how many the cache read to confirm by hash
    (``hashed``) since the last :meth:`reset`."""

    class Counts(dict):
        def reset(self) -> None:
            self.update(analysed=0, hashed=0)

    n = Counts()
    n.reset()
    real = {name: getattr(firststage, name) for name in ("analyze_bytes", "analyze_path")}
    real_read = verdictcache.read_stable

    def counting(name):
        def wrapper(*a, **k):
            n["analysed"] += 1
            return real[name](*a, **k)

        return wrapper

    def read(path):
        n["hashed"] += 1
        return real_read(path)

    for name in real:
        monkeypatch.setattr(firststage, name, counting(name))
    monkeypatch.setattr(verdictcache, "read_stable", read)
    return n


@pytest.fixture
def trusted(monkeypatch):
    """Files written no later than their entry are trusted by stat (the racy window is closed, so the test need
    not wait two seconds; a clock tick that gives the file and the entry one time still counts as before), on a
    file system taken to keep its ctime, and no entry is drawn for a re-hash."""
    monkeypatch.setattr(freshness, "RACY_NS", -1)
    monkeypatch.setattr(freshness, "SAMPLE_SHARE", 0)
    monkeypatch.setattr(freshness, "fs_type", lambda dev: "ext4")


def copy(src: Path, dst: Path) -> Path:
    shutil.copytree(src, dst, copy_function=shutil.copyfile)
    return dst


def edit_one(root: Path) -> Path:
    """Append a line to the body of the first record (or Markdown file) under ``root``."""
    path = (sorted(root.rglob("records/**/*.md")) or sorted(root.rglob("*.md")))[0]
    path.write_bytes(path.read_bytes() + b"\nOne more line of guidance.\n")
    return path


def sources() -> list[tuple[str, Path]]:
    out = [("examples", ROOT / "examples")]
    if CORPUS.is_dir():
        out += [("corpus", CORPUS), ("corpus-repo", CORPUS / "memzoi-repo")]
    return out


@pytest.mark.parametrize("name,src", sources(), ids=[n for n, _ in sources()])
def test_every_format_is_identical_without_cache_cold_warm_and_after_an_edit(name, src, tmp_path, capsys, counts):
    ws = copy(src, tmp_path / "ws")
    # Markdown outside any .memzoi folder belongs to no project, so it has no runtime directory and no cache.
    outside = sum(1 for p in ws.rglob("*.md") if ".memzoi" not in p.parts and p.read_bytes().startswith(b"---"))
    base = outputs(capsys, ws, "--no-cache")
    assert cache_db() is None  # --no-cache neither reads nor writes
    counts.reset()
    assert cli(capsys, "check", str(ws), "--format", "json") == base["json"]  # cold: fills the cache
    cold = counts["analysed"]
    counts.reset()
    assert outputs(capsys, ws) == base  # warm, four times
    assert counts["analysed"] == outside * len(FORMATS) and cold > outside
    assert entries() > 0
    edit_one(ws)
    base = outputs(capsys, ws, "--no-cache")
    counts.reset()
    assert outputs(capsys, ws) == base
    # the edited file once (the next runs take it from the cache), and every time what no project holds
    assert counts["analysed"] == 1 + outside * len(FORMATS)


def test_a_generated_workspace_with_every_planted_finding(tmp_path, capsys, counts):
    from tests.benchmarks.generate import generate

    man = generate(tmp_path / "ws", 150, seed=3, git=True)
    target = man.root / ".memzoi"
    base = outputs(capsys, target, "--no-cache")
    assert {"credential_token", "pii_detected", "duplicate_content", "dangling_reference"} <= {
        f["code"] for f in json.loads(base["json"][1])["findings"]
    }
    assert outputs(capsys, target) == base
    counts.reset()
    assert outputs(capsys, target) == base
    # Only the files holding a secret (credential, connection string, personal data) are analysed again.
    secret = {p for kind in ("credential", "connection_string", "pii") for p in man.planted[kind]}
    assert 0 < counts["analysed"] == len(secret) * len(FORMATS)


def test_an_unchanged_file_is_not_even_read_once_stat_vouches_for_it(tmp_path, capsys, counts, trusted):
    ws = copy(ROOT / "examples", tmp_path / "ws")
    cli(capsys, "check", str(ws))
    counts.reset()
    cli(capsys, "check", str(ws))
    assert counts == {"analysed": 0, "hashed": 0}


def test_a_file_changed_within_the_racy_window_is_confirmed_by_hash(tmp_path, capsys, counts):
    ws = copy(ROOT / "examples", tmp_path / "ws")
    n = cli(capsys, "check", str(ws), "--format", "json")
    counts.reset()
    assert cli(capsys, "check", str(ws), "--format", "json") == n
    assert counts["analysed"] == 0 and counts["hashed"] > 0  # just written: read and hashed, not analysed


def stored(ctx: str, e: verdictcache.Entry) -> tuple:
    """The row ``e`` as the database holds it under ``ctx`` (the columns after the key, checksum last)."""
    cols = (e.size, e.mtime_ns, e.ino, e.ctime_ns, e.checked_ns, e.digest, e.payload)
    return (*cols, verdictcache.entry_sum(e.key, ctx, *cols))


def test_stat_that_looks_unchanged_is_not_trusted_inside_the_racy_window(tmp_path, monkeypatch):
    path = tmp_path / ".memzoi/records/a.md"
    path.parent.mkdir(parents=True)
    path.write_bytes(b"first")
    read = verdictcache.read_stable(str(path))
    assert read is not None
    cache = verdictcache.ProjectCache(tmp_path / "db", "stamp")
    cache.store(str(path), verdictcache.blake3.blake3(read[0]).digest(), read[1], read[2], "payload")
    entry = cache.put.pop(verdictcache.path_key(str(path)))
    cache.rows[entry.key] = stored(cache.stamp, entry)
    assert cache.lookup(str(path)) == "payload"
    path.write_bytes(b"other")  # same size, written in the same clock tick as far as stat can tell:
    dev = os.lstat(path).st_dev
    monkeypatch.setattr(freshness, "lstat", lambda p: freshness.Stat(read[1], dev))
    monkeypatch.setattr(freshness, "SAMPLE_SHARE", 0)
    monkeypatch.setattr(freshness, "fs_type", lambda dev: "ext4")
    assert cache.lookup(str(path)) is None  # the hash decides
    # Outside the racy window the same stat is trusted without reading.
    cache.rows[entry.key] = stored(
        cache.stamp,
        verdictcache.Entry(
            entry.key,
            *cache.rows[entry.key][:4],
            entry.checked_ns + 10 * freshness.RACY_NS,
            *cache.rows[entry.key][5:7],
        ),
    )
    assert cache.lookup(str(path)) == "payload"


# --- what invalidates what --------------------------------------------------------------------------------------


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    git(tmp_path, "init", "-q")
    records = tmp_path / ".memzoi/records"
    records.mkdir(parents=True)
    for rid in ("alpha", "beta", "gamma"):
        (records / f"{rid}.md").write_text(rec(rid), encoding="utf-8")
    git(tmp_path, "add", ".")
    git(tmp_path, "commit", "-q", "-m", "init")
    return tmp_path


def same_as_uncached(capsys, target: Path) -> str:
    base = cli(capsys, "check", str(target), "--format", "json", "--no-cache")
    got = cli(capsys, "check", str(target), "--format", "json")
    assert got == base
    return got[1]


def test_an_edit_invalidates_that_file_only(repo, capsys, counts):
    same_as_uncached(capsys, repo / ".memzoi")
    (repo / ".memzoi/records/beta.md").write_text(edit(rec("beta"), "status: active", "status: bogus"))
    counts.reset()
    out = same_as_uncached(capsys, repo / ".memzoi")
    assert counts["analysed"] == 3 + 1  # every file without the cache; with it, only beta
    assert "invalid_value" in out


def test_a_configuration_change_invalidates_every_file(repo, capsys, counts):
    same_as_uncached(capsys, repo / ".memzoi")
    (repo / ".memzoi/config.toml").write_text('[project]\nid = "demo"\n')
    counts.reset()
    same_as_uncached(capsys, repo / ".memzoi")
    assert counts["analysed"] == 4 + 4  # three records and the configuration, without and with the cache


def test_a_tool_change_invalidates_every_file(repo, capsys, counts, monkeypatch):
    same_as_uncached(capsys, repo / ".memzoi")
    monkeypatch.setattr(verdictcache, "tool_stamp", lambda: "another build")
    counts.reset()
    cli(capsys, "check", str(repo / ".memzoi"))
    assert counts["analysed"] == 3
    assert entries() == 3  # the other build's entries were replaced, not kept beside


def test_a_gitignore_change_is_seen_without_analysing_anything(repo, capsys, counts):
    (repo / ".memzoi/records/delta.md").write_text(rec("delta"))  # untracked
    before = same_as_uncached(capsys, repo / ".memzoi")
    (repo / ".gitignore").write_text(".memzoi/records/delta.md\n")
    counts.reset()
    after = cli(capsys, "check", str(repo / ".memzoi"), "--format", "json")
    assert counts["analysed"] == 0
    assert "ignored_untracked" in after[1] and "ignored_untracked" not in before
    assert after == cli(capsys, "check", str(repo / ".memzoi"), "--format", "json", "--no-cache")


def test_a_commit_that_changes_admission_is_seen_without_analysing_anything(repo, capsys, counts):
    path = repo / ".memzoi/records/delta.md"
    path.write_text(rec("delta"))
    (repo / ".gitignore").write_text(".memzoi/records/delta.md\n")
    before = same_as_uncached(capsys, repo / ".memzoi")
    git(repo, "add", "-f", ".gitignore", str(path))
    git(repo, "commit", "-q", "-m", "admit delta")
    counts.reset()
    after = cli(capsys, "check", str(repo / ".memzoi"), "--format", "json")
    assert counts["analysed"] == 0
    assert "ignored_untracked" in before and "ignored_untracked" not in after[1]
    assert after == cli(capsys, "check", str(repo / ".memzoi"), "--format", "json", "--no-cache")


EPISODE = edit(
    edit(rec("episode"), "lane: semantic", "lane: episodic"),
    "retention: {}",
    'retention:\n  occurred_at: "2026-06-01T00:00:00Z"',
)


def test_a_retention_boundary_that_passes_with_no_edit_is_reported(repo, capsys, counts, monkeypatch):
    (repo / ".memzoi/records/episode.md").write_text(EPISODE)
    boundary = datetime(2026, 7, 1, tzinfo=UTC)  # occurred_at + 30 days
    monkeypatch.setattr(checkmod, "utc_now", lambda: boundary - timedelta(seconds=1))
    assert "retention_query_only" not in same_as_uncached(capsys, repo / ".memzoi")
    monkeypatch.setattr(checkmod, "utc_now", lambda: boundary)  # the boundary is inclusive
    counts.reset()
    after = cli(capsys, "check", str(repo / ".memzoi"), "--format", "json")
    assert counts["analysed"] == 0
    assert "past its retention boundary 2026-07-01T00:00:00Z" in after[1]
    assert after == cli(capsys, "check", str(repo / ".memzoi"), "--format", "json", "--no-cache")


def test_a_stale_attestation_is_never_cached_because_git_explains_it(repo, capsys, counts):
    path = repo / ".memzoi/records/reviewed.md"
    text = attested(rec("reviewed"), "reviewed")
    path.write_text(text)
    git(repo, "add", ".")
    git(repo, "commit", "-q", "-m", "reviewed")
    path.write_text(edit(text, "Body text of reviewed", "Body text of edited"))
    first = same_as_uncached(capsys, repo / ".memzoi")
    assert "changed since decision time: `body`" in first
    counts.reset()
    assert cli(capsys, "check", str(repo / ".memzoi"), "--format", "json")[1] == first
    assert counts["analysed"] == 1  # the stale record, every time
    assert entries() == 3


def test_checking_one_file_takes_the_facts_of_the_others_from_the_cache(repo, capsys, counts, monkeypatch):
    import memzoi.judge.analysis

    real = memzoi.judge.analysis.analyze_path
    for_facts = []  # files the cross-file check analyses because it has no facts of theirs
    monkeypatch.setattr(memzoi.judge.analysis, "analyze_path", lambda p, **k: for_facts.append(p) or real(p, **k))
    one = repo / ".memzoi/records/delta.md"
    one.write_text(edit(rec("delta"), "retention: {}", "supersedes: alpha\nretention: {}"))
    cli(capsys, "check", str(repo / ".memzoi"))
    base = cli(capsys, "check", str(one), "--format", "json", "--no-cache")
    assert "lifecycle_inconsistent" in base[1]  # needs alpha's facts
    counts.reset()
    for_facts.clear()
    assert cli(capsys, "check", str(one), "--format", "json") == base
    assert counts["analysed"] == 0 and for_facts == []  # neither the file nor the three it is judged against
    (repo / ".memzoi/records/alpha.md").write_text(edit(rec("alpha"), "status: active", "status: superseded"))
    base = cli(capsys, "check", str(one), "--format", "json", "--no-cache")
    assert "lifecycle_inconsistent" not in base[1]
    for_facts.clear()
    counts.reset()
    assert cli(capsys, "check", str(one), "--format", "json") == base
    # changed: analysed for its facts as a checked file is, and given its entry, so the next check reads it
    assert counts["analysed"] == 1 and for_facts == []
    counts.reset()
    assert cli(capsys, "check", str(one), "--format", "json") == base
    assert counts["analysed"] == 0


def test_deleted_files_leave_the_cache_after_a_full_walk(repo, capsys):
    cli(capsys, "check", str(repo / ".memzoi"))
    assert entries() == 3
    (repo / ".memzoi/records/gamma.md").unlink()
    cli(capsys, "check", str(repo / ".memzoi/records/alpha.md"))  # a partial run forgets nothing
    assert entries() == 3
    cli(capsys, "check", str(repo / ".memzoi"))
    assert entries() == 2


# --- survived faults ----------------------------------------------------------------------------------------------


def test_a_corrupt_cache_is_replaced(repo, capsys, counts):
    base = same_as_uncached(capsys, repo / ".memzoi")
    db = cache_db()
    for suffix in ("-wal", "-shm"):
        Path(str(db) + suffix).unlink(missing_ok=True)
    db.write_bytes(b"this is not an SQLite database\n" * 100)
    assert same_as_uncached(capsys, repo / ".memzoi") == base
    assert entries() == 3


def test_a_cache_of_another_format_version_is_recreated(repo, capsys):
    base = same_as_uncached(capsys, repo / ".memzoi")
    with sqlite3.connect(cache_db()) as conn:
        conn.execute("PRAGMA user_version=9999")
    assert same_as_uncached(capsys, repo / ".memzoi") == base
    with sqlite3.connect(cache_db()) as conn:
        assert conn.execute("PRAGMA user_version").fetchone()[0] == store.STORE_VERSION


def test_payloads_it_cannot_read_are_analysed_again(repo, capsys, counts):
    base = same_as_uncached(capsys, repo / ".memzoi")
    with sqlite3.connect(cache_db()) as conn:
        conn.execute("UPDATE entries SET payload = '[\"record\", 0]'")
    counts.reset()
    assert cli(capsys, "check", str(repo / ".memzoi"), "--format", "json")[1] == base
    assert counts["analysed"] == 3
    counts.reset()
    assert cli(capsys, "check", str(repo / ".memzoi"), "--format", "json")[1] == base
    assert counts["analysed"] == 0  # and rewritten


@pytest.mark.parametrize("fault", ["unwritable", "full", "locked"])
def test_an_unusable_runtime_directory_changes_nothing_but_speed(repo, capsys, monkeypatch, fault):
    base = cli(capsys, "check", str(repo / ".memzoi"), "--format", "json", "--no-cache")
    home = os.environ["MEMZOI_HOME"]
    real_connect, real_mkdir = sqlite3.connect, os.mkdir
    if fault == "locked":
        cli(capsys, "check", str(repo / ".memzoi"))  # a cache exists; another process holds its write lock
        (repo / ".memzoi/records/alpha.md").write_text(rec("alpha") + "\nEdited.\n")
        base = cli(capsys, "check", str(repo / ".memzoi"), "--format", "json", "--no-cache")
        holder = real_connect(cache_db(), isolation_level=None)
        holder.execute("BEGIN EXCLUSIVE")
        monkeypatch.setattr(store, "BUSY_TIMEOUT_S", 0.05)  # the store opens the database
    else:

        def connect(path, *a, **k):
            if os.path.abspath(os.fsdecode(path)).startswith(home):
                if fault == "unwritable":
                    raise sqlite3.OperationalError("unable to open database file")
                conn = real_connect(path, *a, **k)
                return _FullDisk(conn)
            return real_connect(path, *a, **k)

        def mkdir(path, *a, **k):
            if fault == "unwritable" and os.path.abspath(os.fsdecode(path)).startswith(home):
                raise OSError(30, "Read-only file system", os.fsdecode(path))
            return real_mkdir(path, *a, **k)

        monkeypatch.setattr(sqlite3, "connect", connect)
        monkeypatch.setattr(os, "mkdir", mkdir)
    try:
        capsys.readouterr()
        code = main(["check", str(repo / ".memzoi"), "--format", "json"])
        captured = capsys.readouterr()
    finally:
        if fault == "locked":
            holder.execute("ROLLBACK")
            holder.close()
    assert (code, captured.out) == base
    assert "cache" not in captured.err


class _FullDisk:
    """A connection on a full disk: reading works, every write fails as SQLite reports it."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        self._conn = conn

    def execute(self, sql, *args):
        if sql.lstrip().upper().startswith(("INSERT", "DELETE", "CREATE", "DROP")):
            raise sqlite3.OperationalError("database or disk is full")
        return self._conn.execute(sql, *args)

    def executemany(self, *args):
        raise sqlite3.OperationalError("database or disk is full")

    @property
    def in_transaction(self) -> bool:
        return self._conn.in_transaction

    def close(self) -> None:
        self._conn.close()


def test_two_checks_at_once_agree_and_leave_a_sound_cache(tmp_path):
    from tests.benchmarks.generate import generate

    man = generate(tmp_path / "ws", 400, seed=5, git=False)  # enough files for worker processes
    env = dict(os.environ)
    cmd = [sys.executable, "-m", "memzoi", "check", str(man.root / ".memzoi"), "--format", "json"]
    base = subprocess.run([*cmd, "--no-cache"], env=env, capture_output=True)
    for _ in range(2):  # two cold runs racing, then two warm ones
        procs = [subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE) for _ in range(2)]
        results = [(p.wait(), p.stdout.read(), p.stderr.read()) for p in procs]
        for p in procs:
            p.stdout.close()
            p.stderr.close()
        for code, out, _ in results:
            assert (code, out) == (base.returncode, base.stdout)
    with sqlite3.connect(cache_db()) as conn:
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        assert conn.execute("SELECT count(*) FROM entries").fetchone()[0] > 400


# --- secrets and modes --------------------------------------------------------------------------------------------


def test_no_secret_byte_reaches_the_cache(repo, capsys, counts):
    from .lifecycle.test_secrets_at_rest import BODY, PLANTED, leaks

    records = repo / ".memzoi/records"
    (records / "body.md").write_text(rec("body") + BODY)
    (records / "front.md").write_text(edit(rec("front"), "  - a\n", f'  - "{PLANTED["bearer token"]}"\n'))
    named = "ghp_" + "Zx9" * 12  # a token-shaped file name (assembled, so no literal sits here)
    (records / f"{named}.md").write_text(rec(named))
    pending = repo / ".memzoi/proposals/pending"
    pending.mkdir(parents=True)
    (pending / "leaky.md").write_text(edit(rec("leaky"), "Body text", f"Use {PLANTED['postgres password']} now"))
    home = Path(os.environ["MEMZOI_HOME"])
    base = same_as_uncached(capsys, repo / ".memzoi")
    counts.reset()
    assert cli(capsys, "check", str(repo / ".memzoi"), "--format", "json")[1] == base
    assert counts["analysed"] == 4  # the four files with a secret are never cached
    assert entries() == 3
    assert leaks(home) == []
    blobs = b"".join(p.read_bytes() for p in home.rglob("*") if p.is_file())
    assert named.encode() not in blobs and b"Body text of" not in blobs  # no name, no text


def test_cache_files_are_private(repo, capsys):
    cli(capsys, "check", str(repo / ".memzoi"))
    db = cache_db()
    for p in [db, *(q for q in (Path(str(db) + s) for s in ("-wal", "-shm")) if q.exists())]:
        assert stat.S_IMODE(p.stat().st_mode) == 0o600, p
    home = Path(os.environ["MEMZOI_HOME"])
    d = db.parent
    while d != home.parent:
        assert stat.S_IMODE(d.stat().st_mode) == 0o700, d
        d = d.parent


def test_check_outside_a_project_caches_nothing(tmp_path, capsys):
    path = tmp_path / "notes.md"
    path.write_text(rec("loose"))
    cli(capsys, "check", str(path))
    assert cache_db() is None


# --- the same verdict either way, for any text --------------------------------------------------------------------


def test_every_corpus_file_reads_back_as_it_was_judged(tmp_path):
    """The first stage of each corpus file's verdict read back from its payload equals the one computed."""
    from memzoi.judge.analysis import analyze_path
    from memzoi.judge.retention import utc_now
    from memzoi.project.filefacts import facts_from_analysis
    from memzoi.project.verdict import ProjectContext, local
    from memzoi.stores.verdictpayload import make_payload, read_payload

    ws = copy(corpus_or_skip(), tmp_path / "corpus")
    now = utc_now()
    seen = 0
    for path in sorted(ws.rglob("*.md")):
        analysis = analyze_path(path, now=now)
        md = analysis.placement.memzoi_dir
        analysis, first = local(str(path), analysis, ProjectContext.of(md, now=now))
        facts = facts_from_analysis(analysis)
        payload = make_payload(analysis, first, facts, analysis.document.lines.starts)
        if payload is None:
            continue
        seen += 1
        back, back_facts, starts, length = read_payload(payload, str(path), os.path.abspath(md), now)
        plain = lambda fs: [(f.code, f.message, f.start, f.end, f.severity, f.data) for f in fs]  # noqa: E731
        assert plain(back.own) == plain(first.own), path
        assert (back.role, back.opening, back.attested, back.canonical) == (
            first.role,
            first.opening,
            first.attested,
            first.canonical,
        )
        assert back_facts == facts
        assert verdictcache_lines(starts, length) == analysis.document.lines.starts
        assert json.loads(payload)  # plain JSON
    assert seen > 30


def test_a_payload_made_from_joined_starts_and_encoded_facts_is_the_whole_lists_json(tmp_path):
    """make_payload splices the facts' text the caller made (the index row keeps the same) into the payload: the
    string is the compact JSON of the whole list, as it was when the list was encoded at once."""
    from memzoi.judge.analysis import analyze_path
    from memzoi.judge.retention import utc_now
    from memzoi.project.filefacts import facts_from_analysis
    from memzoi.project.verdict import ProjectContext, local
    from memzoi.stores.verdictpayload import cache_payload, facts_out, facts_text, make_payload

    ws = copy(corpus_or_skip(), tmp_path / "corpus")
    now = utc_now()
    seen = 0
    for path in sorted(ws.rglob("*.md")):
        analysis = analyze_path(path, now=now)
        analysis, first = local(str(path), analysis, ProjectContext.of(analysis.placement.memzoi_dir, now=now))
        facts = facts_from_analysis(analysis)
        starts = analysis.document.lines.starts
        payload = make_payload(analysis, first, facts, starts)
        joined = ",".join(map(str, starts))
        assert make_payload(analysis, first, facts, joined, facts_text(facts)) == payload, path
        assert cache_payload(analysis, first, facts, joined, facts_text(facts)) == cache_payload(
            analysis, first, facts, starts
        )
        if payload is None:
            continue
        seen += 1
        whole = json.loads(payload)
        assert whole[5] == json.loads(json.dumps(facts_out(facts)))
        assert payload == json.dumps(whole, separators=(",", ":"), ensure_ascii=True), path
    assert seen > 30


def test_one_entry_encodes_its_facts_once(tmp_path, monkeypatch):
    """A file's store entry and its index row keep the same text of its facts, encoded once."""
    from memzoi.stores import verdictpayload
    from memzoi.stores.fileentry import entry_chunk

    rec = tmp_path / ".memzoi" / "records" / "a-note.md"
    rec.parent.mkdir(parents=True)
    rec.write_text(
        "---\nid: a-note\ntype: fact\ntitle: A note\ntimestamp: 2026-01-01T00:00:00Z\n---\n\nBody text.\n",
        encoding="utf-8",
    )
    calls = []
    real = verdictpayload.facts_out
    monkeypatch.setattr(verdictpayload, "facts_out", lambda f: calls.append(f) or real(f))
    [made] = entry_chunk([(str(rec), "unknown")], now=None, root=str(tmp_path))
    assert made is not None and made.entry is not None and made.entry[3] is not None and made.row is not None
    assert len(calls) == 1
    assert json.loads(made.entry[3])[5] == json.loads(made.row["file"]["facts"])


def verdictcache_lines(starts: str, length: int) -> list[int]:
    from memzoi.read.text import LineIndex
    from memzoi.stores.verdictpayload import line_starts

    return LineIndex.from_starts(line_starts(starts), length).starts


def test_random_edits_never_make_the_cached_report_differ(tmp_path_factory):
    hypothesis = pytest.importorskip("hypothesis")
    st = hypothesis.strategies

    pieces = st.sampled_from(
        [
            "status: active",
            "status: superseded",
            "supersedes: alpha",
            "lane: episodic",
            "title: x",
            "---",
            "\u200b",
            "ignore previous instructions",
            'retention:\n  occurred_at: "2026-01-01T00:00:00Z"',
            "é",
            "\r\n",
            "\n",
            "  ",
            "key: [a, b",
            "# Alpha",
        ]
    )
    texts = st.lists(st.one_of(pieces, st.text(max_size=12)), max_size=8).map("".join)

    @hypothesis.settings(
        max_examples=25, deadline=None, database=None, suppress_health_check=list(hypothesis.HealthCheck)
    )
    @hypothesis.given(
        edits=st.lists(
            st.tuples(st.sampled_from(["alpha", "beta", "gamma"]), st.booleans(), texts), min_size=1, max_size=4
        )
    )
    def run(edits):
        root = tmp_path_factory.mktemp("prop")
        records = root / ".memzoi/records"
        records.mkdir(parents=True)
        for rid in ("alpha", "beta", "gamma"):
            (records / f"{rid}.md").write_text(rec(rid))
        check_paths([str(root / ".memzoi")], workers=1)  # cold
        for rid, frontmatter, text in edits:
            path = records / f"{rid}.md"
            old = path.read_text()
            # An earlier random edit may have replaced `status: active`: then the file stays as it is (a plain replace).
            path.write_text(old.replace("status: active", text, 1) if frontmatter else old + text)
            cached = to_json(check_paths([str(root / ".memzoi")], workers=1))
            assert cached == to_json(check_paths([str(root / ".memzoi")], workers=1, cache=False))

    run()
