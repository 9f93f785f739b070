"""The cross-file facts of the verdict cache, kept in each file's entry (:meth:`memzoi.stores.verdictcache.ProjectCache.facts_of`,
:func:`memzoi.stores.verdictpayload.payload_facts`), and the one-pass cross-file evaluation
(:meth:`memzoi.project.crossfile.Workspace.of`) that a check of a few files uses: the report of one file is byte for byte
``--no-cache``'s after every change that can alter the facts it is judged against (another file edited, even
with the same size; added; removed; the configuration; the tool's build; a damaged entry; a store of an earlier
build), and the facts are written, updated and dropped with the entries. Nothing here measures time."""

from __future__ import annotations

import random
import sqlite3

import pytest

from memzoi.project.crossfile import FileFacts, Ref, Workspace
from memzoi.stores import store, toolstamp, verdictcache
from memzoi.stores.verdictpayload import payload_facts

from .builders import edit
from .test_admission import git, rec
from .test_revision import attested
from .test_verdict_cache import cache_db, cli, counts, repo, trusted  # noqa: F401 - fixtures


def facts() -> dict | None:
    """Every stored entry's facts by key (one stamp at a time)."""
    db = cache_db()
    if db is None:
        return None
    with sqlite3.connect(db) as conn:
        rows = conn.execute("SELECT key, ctx, payload FROM entries").fetchall()
    assert len({r[1] for r in rows}) <= 1  # one stamp at a time
    return {k: payload_facts(p) for k, _, p in rows}


def same_as_uncached(capsys, target) -> str:
    base = cli(capsys, "check", str(target), "--format", "json", "--no-cache")
    got = cli(capsys, "check", str(target), "--format", "json")
    assert got == base
    return got[1]


@pytest.fixture
def linked(repo):
    """``delta`` supersedes ``alpha`` (a finding that needs alpha's facts)."""
    one = repo / ".memzoi/records/delta.md"
    one.write_text(rec("delta").replace("retention: {}", "supersedes: alpha\nretention: {}"))
    return one


def test_a_full_check_stores_every_files_facts_and_one_file_reads_the_others_in_one_query(
    repo, linked, capsys, counts, trusted, monkeypatch
):
    cli(capsys, "check", str(repo / ".memzoi"))
    assert len(facts()) == 4
    looked_up, queries = [], []
    real, real_all = verdictcache.ProjectCache.lookup, verdictcache.ProjectCache._read_all
    monkeypatch.setattr(verdictcache.ProjectCache, "lookup", lambda self, p: looked_up.append(p) or real(self, p))
    monkeypatch.setattr(verdictcache.ProjectCache, "_read_all", lambda self: queries.append(1) or real_all(self))
    monkeypatch.setattr(verdictcache, "EAGER_AFTER", 0)  # from the first other file on: every entry at once
    counts.reset()
    assert "lifecycle_inconsistent" in same_as_uncached(capsys, linked)
    assert counts["analysed"] == 1  # the --no-cache run only
    assert looked_up == [str(linked)]  # no other file's verdict was asked for: only its facts
    assert queries == [1]  # the others' facts came from one query of the entries


def test_a_first_check_of_one_file_caches_the_others_so_the_next_one_analyses_only_it(
    repo, linked, capsys, counts, trusted
):
    base = cli(capsys, "check", str(linked), "--format", "json", "--no-cache")
    counts.reset()
    assert cli(capsys, "check", str(linked), "--format", "json") == base  # nothing cached yet
    assert counts["analysed"] == 4  # the file and the project's three others, each given its entry
    assert len(facts()) == 4  # every file's entry, though the run loaded only the checked one's
    counts.reset()
    assert cli(capsys, "check", str(linked), "--format", "json") == base
    assert counts["analysed"] == 0 and counts["hashed"] == 0


def test_another_file_edited_with_the_same_size_is_not_trusted_for_its_facts(repo, linked, capsys, trusted):
    cli(capsys, "check", str(repo / ".memzoi"))
    alpha = repo / ".memzoi/records/alpha.md"
    text = alpha.read_text()
    edited = text.replace("status: active", "status: tabled")  # same length, another status
    assert len(edited) == len(text)
    alpha.write_text(edited)
    assert "lifecycle_inconsistent" not in same_as_uncached(capsys, linked)
    cli(capsys, "check", str(repo / ".memzoi"))
    assert facts()[verdictcache.path_key(str(alpha))][3] == "tabled"
    assert "lifecycle_inconsistent" not in same_as_uncached(capsys, linked)


def test_files_added_and_removed_after_the_entries_were_made(repo, capsys, trusted):
    one = repo / ".memzoi/records/delta.md"
    one.write_text(rec("delta").replace("retention: {}", "supersedes: omega\nretention: {}"))
    cli(capsys, "check", str(repo / ".memzoi"))
    assert "dangling_reference" in same_as_uncached(capsys, one)
    omega = repo / ".memzoi/records/omega.md"
    omega.write_text(rec("omega"))  # added: no entry, analysed for its facts
    assert "dangling_reference" not in same_as_uncached(capsys, one)
    cli(capsys, "check", str(repo / ".memzoi"))
    assert verdictcache.path_key(str(omega)) in facts()
    omega.unlink()  # removed: still stored, but no longer listed
    assert "dangling_reference" in same_as_uncached(capsys, one)
    cli(capsys, "check", str(repo / ".memzoi"))
    assert verdictcache.path_key(str(omega)) not in facts()


def test_a_configuration_or_tool_change_stores_the_facts_under_another_stamp(
    repo, linked, capsys, trusted, monkeypatch
):
    cli(capsys, "check", str(repo / ".memzoi"))
    db = cache_db()
    before = sqlite3.connect(db).execute("SELECT DISTINCT ctx FROM entries").fetchone()[0]
    (repo / ".memzoi/config.toml").write_text('[project]\nid = "demo"\n')
    same_as_uncached(capsys, linked)
    cli(capsys, "check", str(repo / ".memzoi"))
    after = sqlite3.connect(db).execute("SELECT DISTINCT ctx FROM entries").fetchone()[0]
    assert after != before
    # a tool change changes the stamp everywhere it is read (the stored report's inputs too, memzoi.stores.replay)
    monkeypatch.setattr(toolstamp, "tool_stamp", lambda: "another build")
    monkeypatch.setattr(verdictcache, "tool_stamp", toolstamp.tool_stamp)
    same_as_uncached(capsys, linked)
    cli(capsys, "check", str(repo / ".memzoi"))
    assert sqlite3.connect(db).execute("SELECT DISTINCT ctx FROM entries").fetchall() not in ([], [(after,)])


def test_git_admission_and_retention_of_the_checked_file_are_judged_at_each_run(repo, linked, capsys, trusted):
    cli(capsys, "check", str(repo / ".memzoi"))
    (repo / ".gitignore").write_text(".memzoi/records/delta.md\n")
    assert "ignored_untracked" in same_as_uncached(capsys, linked)
    git(repo, "add", "-f", ".gitignore", str(linked))
    git(repo, "commit", "-q", "-m", "admit delta")
    assert "ignored_untracked" not in same_as_uncached(capsys, linked)


@pytest.mark.parametrize("damage", ["not json", "[1, 2]", '{"x": [1]}', "facts"])
def test_a_damaged_entry_is_not_a_source_of_facts_and_is_replaced(repo, linked, capsys, trusted, damage):
    cli(capsys, "check", str(repo / ".memzoi"))
    alpha = verdictcache.path_key(str(repo / ".memzoi/records/alpha.md"))
    with sqlite3.connect(cache_db()) as conn:
        if damage == "facts":  # alpha's facts say it is another record, its checksum left as it was
            (payload,) = conn.execute("SELECT payload FROM entries WHERE key = ?", (alpha,)).fetchone()
            damage = payload.replace('"alpha"', '"someone-else"')
            assert damage != payload
        conn.execute("UPDATE entries SET payload = ? WHERE key = ?", (damage, alpha))
    assert "lifecycle_inconsistent" in same_as_uncached(capsys, linked)
    cli(capsys, "check", str(repo / ".memzoi"))
    assert facts()[alpha][2] == "alpha"
    assert "lifecycle_inconsistent" in same_as_uncached(capsys, linked)


def test_a_store_of_an_earlier_build_with_its_facts_blob_is_dropped_not_served(repo, linked, capsys, trusted):
    cli(capsys, "check", str(repo / ".memzoi"))
    with sqlite3.connect(cache_db()) as conn:  # as an earlier build left it: its version and its facts blob
        conn.execute("CREATE TABLE facts (ctx TEXT PRIMARY KEY, blob TEXT NOT NULL, sum BLOB NOT NULL)")
        conn.execute(f"PRAGMA user_version={store.STORE_VERSION - 10}")
    assert "lifecycle_inconsistent" in same_as_uncached(capsys, linked)
    with sqlite3.connect(cache_db()) as conn:
        assert conn.execute("PRAGMA user_version").fetchone()[0] == store.STORE_VERSION
        tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    assert "facts" not in tables and len(facts()) == 4  # made again: the project's files, each with its entry


def _random_facts(rnd: random.Random, i: int) -> FileFacts:
    ids = ["a", "b", "c", "d"]
    if rnd.random() < 0.6:
        refs = tuple(
            Ref(rnd.choice(["supersedes", "lineage.predecessor_id"]), rnd.choice(ids), (1, 2))
            for _ in range(rnd.randrange(2))
        )
        return FileFacts(
            "record",
            "record",
            rnd.choice(ids),
            rnd.choice(["active", "superseded"]),
            "project",
            rnd.choice([None, "p"]),
            rnd.choice(["2026-01-01", "2026-03-01"]),
            None,
            rnd.choice([None, "h1", "h2"]),
            (),
            refs,
            (0, 1),
            (3, 9),
        )
    token = rnd.choice(["x", "y", f"z{i}"])
    return FileFacts(
        "proposal",
        rnd.choice(["pending", "applied"]),
        token,
        None,
        "project",
        None,
        rnd.choice(["2026-02-01", None]),
        rnd.choice(["create", "supersede", "tombstone"]),
        rnd.choice([None, "h1", "h2"]),
        (token,),
        (Ref("proposal.target", rnd.choice(ids), (4, 5)),),
        (0, 1),
        (3, 9),
    )


@pytest.mark.parametrize("seed", range(20))
def test_one_pass_evaluation_equals_the_incremental_one(seed):
    rnd = random.Random(seed)
    facts = {f"/p/{rnd.choice('rs')}/{i:02d}.md": _random_facts(rnd, i) for i in range(rnd.randrange(1, 30))}
    incremental = Workspace()
    for path in rnd.sample(list(facts), len(facts)):
        incremental.update(path, facts[path])
    bulk = Workspace.of(facts).evaluate(list(facts))
    assert bulk == {p: incremental.findings_for(p) for p in facts if incremental.findings_for(p)}


def _token() -> str:
    return "ghp_" + "aB3dE5fG7hJ9kL1mN2pQ4" + "rS6tU8vW0xY2zA4"  # assembled at run time


def test_a_stale_attestation_keeps_its_facts_but_a_file_with_a_secret_keeps_nothing(
    repo, linked, capsys, counts, trusted
):
    """Neither gets a verdict entry. The stale record gets an entry of its facts alone, so a check of another file
    does not analyse it again; a file with a secret keeps nothing, wherever the secret is (a detector's span may hold context: a
    frontmatter value holding a piece of a `password = …` secret must not be stored). No byte of a secret reaches
    the database."""
    records = repo / ".memzoi/records"
    reviewed = records / "reviewed.md"
    text = attested(rec("reviewed"), "reviewed")
    reviewed.write_text(text)
    git(repo, "add", ".")
    git(repo, "commit", "-q", "-m", "reviewed")
    reviewed.write_text(edit(text, "Body text of reviewed", "Body text of edited"))  # stale now
    secret = "Xk9#mQ2$" + "vL7pZ4wR"  # assembled at run time
    (records / "leaky.md").write_text(
        edit(
            edit(rec("leaky"), "Body text of leaky", f"password = {secret}"),
            "retention: {}",
            f"scope_id: {secret[8:]}-team\nretention: {{}}",
        )
    )
    (records / "spilt.md").write_text(edit(rec("spilt"), "retention: {}", f"source_ref: {_token()}\nretention: {{}}"))
    base = cli(capsys, "check", str(linked), "--format", "json", "--no-cache")
    cli(capsys, "check", str(repo / ".memzoi"))
    kept = facts()
    key = verdictcache.path_key
    assert key(str(reviewed)) in kept
    assert key(str(records / "leaky.md")) not in kept and key(str(records / "spilt.md")) not in kept
    assert len(kept) == 5  # the four entries and the stale record's facts alone
    stored = cache_db().read_bytes()
    assert _token().encode() not in stored and secret[8:].encode() not in stored
    counts.reset()
    assert cli(capsys, "check", str(linked), "--format", "json") == base
    assert counts["analysed"] == 2  # leaky and spilt: the stale record's facts came from its entry


@pytest.fixture
def judged(monkeypatch):
    """Every run judges: no stored report is replayed (``tests/test_replay.py`` tests that), so a run that
    analyses nothing read every file from its entry."""
    from memzoi.runs import check

    monkeypatch.setattr(check, "replayed", lambda *a, **k: None)


def _batches(monkeypatch, refuse_first: bool = False) -> list[int]:
    """The entries held each time a run wrote a batch before its end (:meth:`ProjectCache._write` without
    ``final``); with ``refuse_first``, the first batch finds the store unavailable (another process writing)."""
    held: list[int] = []
    real, real_connect = verdictcache.ProjectCache._write, verdictcache.connect

    def write(self, put, drop, final=False):
        if final:
            return real(self, put, drop, final)
        held.append(len(self.put))
        if refuse_first and len(held) == 1:
            monkeypatch.setattr(verdictcache, "connect", lambda db: None)
        try:
            return real(self, put, drop, final)
        finally:
            monkeypatch.setattr(verdictcache, "connect", real_connect)

    monkeypatch.setattr(verdictcache.ProjectCache, "_write", write)
    return held


def test_a_cold_check_writes_its_entries_as_it_goes(repo, linked, capsys, counts, trusted, judged, monkeypatch):
    monkeypatch.setattr(verdictcache, "FLUSH_AT", 2)
    held = _batches(monkeypatch)
    base = cli(capsys, "check", str(repo / ".memzoi"), "--format", "json", "--no-cache")
    assert cli(capsys, "check", str(repo / ".memzoi"), "--format", "json") == base
    assert held == [2, 2]  # four files: two batches, nothing left for the end
    assert len(facts()) == 4  # every file's facts
    counts.reset()
    assert cli(capsys, "check", str(repo / ".memzoi"), "--format", "json") == base
    assert counts["analysed"] == 0  # every entry was written
    assert "lifecycle_inconsistent" in same_as_uncached(capsys, linked)  # one file: the others' facts stored


def test_a_batch_that_cannot_be_written_is_kept_for_the_end(repo, capsys, counts, trusted, judged, monkeypatch):
    monkeypatch.setattr(verdictcache, "FLUSH_AT", 1)
    held = _batches(monkeypatch, refuse_first=True)
    base = cli(capsys, "check", str(repo / ".memzoi"), "--format", "json", "--no-cache")
    assert cli(capsys, "check", str(repo / ".memzoi"), "--format", "json") == base
    assert held == [1] and len(facts()) == 3  # no batch after the refused one: all three written at the end
    counts.reset()
    assert cli(capsys, "check", str(repo / ".memzoi"), "--format", "json") == base
    assert counts["analysed"] == 0
