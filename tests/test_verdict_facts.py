"""The facts blob of the verdict cache (:mod:`memzoi.stores.verdictfacts`) and the one-pass cross-file evaluation
(:meth:`memzoi.project.crossfile.Workspace.of`) that a check of a few files uses: the report of one file is byte for byte
``--no-cache``'s after every change that can alter the facts it is judged against (another file edited, even
with the same size; added; removed; the configuration; the tool's build; a damaged blob), and the blob is made,
updated and dropped as the entries are. Nothing here measures time."""

from __future__ import annotations

import json
import random
import sqlite3

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from memzoi.project.crossfile import FileFacts, Ref, Workspace
from memzoi.stores import toolstamp, verdictcache

from .builders import edit
from .test_admission import git, rec
from .test_revision import attested
from .test_verdict_cache import cache_db, cli, counts, repo, trusted  # noqa: F401 - fixtures


def blob() -> dict | None:
    db = cache_db()
    if db is None:
        return None
    with sqlite3.connect(db) as conn:
        rows = conn.execute("SELECT blob FROM facts").fetchall()
    assert len(rows) <= 1  # one stamp at a time
    return json.loads(rows[0][0]) if rows else None


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


def test_a_full_check_stores_every_cached_file_in_the_blob_and_one_file_reads_only_it(
    repo, linked, capsys, counts, trusted, monkeypatch
):
    cli(capsys, "check", str(repo / ".memzoi"))
    assert len(blob()) == 4
    looked_up = []
    real = verdictcache.ProjectCache.lookup
    monkeypatch.setattr(verdictcache.ProjectCache, "lookup", lambda self, p: looked_up.append(p) or real(self, p))
    counts.reset()
    assert "lifecycle_inconsistent" in same_as_uncached(capsys, linked)
    assert counts["analysed"] == 1  # the --no-cache run only
    assert looked_up == [str(linked)]  # the others' facts came from the blob


def test_a_first_check_of_one_file_caches_the_others_so_the_next_one_analyses_only_it(
    repo, linked, capsys, counts, trusted
):
    base = cli(capsys, "check", str(linked), "--format", "json", "--no-cache")
    counts.reset()
    assert cli(capsys, "check", str(linked), "--format", "json") == base  # nothing cached yet
    assert counts["analysed"] == 4  # the file and the project's three others, each given its entry
    assert len(blob()) == 4  # made from every entry, though the run loaded only the checked one's
    counts.reset()
    assert cli(capsys, "check", str(linked), "--format", "json") == base
    assert counts["analysed"] == 0 and counts["hashed"] == 0


def test_another_file_edited_with_the_same_size_is_not_trusted_from_the_blob(repo, linked, capsys, trusted):
    cli(capsys, "check", str(repo / ".memzoi"))
    alpha = repo / ".memzoi/records/alpha.md"
    text = alpha.read_text()
    edited = text.replace("status: active", "status: tabled")  # same length, another status
    assert len(edited) == len(text)
    alpha.write_text(edited)
    assert "lifecycle_inconsistent" not in same_as_uncached(capsys, linked)
    cli(capsys, "check", str(repo / ".memzoi"))  # the full run brings the blob up to date
    assert blob()[verdictcache.path_key(str(alpha))][5][3] == "tabled"
    assert "lifecycle_inconsistent" not in same_as_uncached(capsys, linked)


def test_files_added_and_removed_after_the_blob_was_made(repo, capsys, trusted):
    one = repo / ".memzoi/records/delta.md"
    one.write_text(rec("delta").replace("retention: {}", "supersedes: omega\nretention: {}"))
    cli(capsys, "check", str(repo / ".memzoi"))
    assert "dangling_reference" in same_as_uncached(capsys, one)
    omega = repo / ".memzoi/records/omega.md"
    omega.write_text(rec("omega"))  # added: not in the blob, analysed for its facts
    assert "dangling_reference" not in same_as_uncached(capsys, one)
    cli(capsys, "check", str(repo / ".memzoi"))
    assert verdictcache.path_key(str(omega)) in blob()
    omega.unlink()  # removed: still in the blob, but no longer listed
    assert "dangling_reference" in same_as_uncached(capsys, one)
    cli(capsys, "check", str(repo / ".memzoi"))
    assert verdictcache.path_key(str(omega)) not in blob()


def test_a_configuration_or_tool_change_makes_another_blob(repo, linked, capsys, trusted, monkeypatch):
    cli(capsys, "check", str(repo / ".memzoi"))
    db = cache_db()
    before = sqlite3.connect(db).execute("SELECT ctx FROM facts").fetchone()[0]
    (repo / ".memzoi/config.toml").write_text('[project]\nid = "demo"\n')
    same_as_uncached(capsys, linked)
    cli(capsys, "check", str(repo / ".memzoi"))
    after = sqlite3.connect(db).execute("SELECT ctx FROM facts").fetchone()[0]
    assert after != before
    # a tool change changes the stamp everywhere it is read (the stored report's inputs too, memzoi.stores.replay)
    monkeypatch.setattr(toolstamp, "tool_stamp", lambda: "another build")
    monkeypatch.setattr(verdictcache, "tool_stamp", toolstamp.tool_stamp)
    same_as_uncached(capsys, linked)
    cli(capsys, "check", str(repo / ".memzoi"))
    assert sqlite3.connect(db).execute("SELECT ctx FROM facts").fetchall() not in ([], [(after,)])


def test_git_admission_and_retention_of_the_checked_file_are_judged_at_each_run(repo, linked, capsys, trusted):
    cli(capsys, "check", str(repo / ".memzoi"))
    (repo / ".gitignore").write_text(".memzoi/records/delta.md\n")
    assert "ignored_untracked" in same_as_uncached(capsys, linked)
    git(repo, "add", "-f", ".gitignore", str(linked))
    git(repo, "commit", "-q", "-m", "admit delta")
    assert "ignored_untracked" not in same_as_uncached(capsys, linked)


@pytest.mark.parametrize("damage", ["not json", "[1, 2]", '{"x": [1]}'])
def test_a_damaged_blob_is_ignored_and_replaced(repo, linked, capsys, trusted, damage):
    cli(capsys, "check", str(repo / ".memzoi"))
    with sqlite3.connect(cache_db()) as conn:
        conn.execute("UPDATE facts SET blob = ?", (damage,))
    same_as_uncached(capsys, linked)
    cli(capsys, "check", str(repo / ".memzoi"))
    assert "lifecycle_inconsistent" in same_as_uncached(capsys, linked)


def test_a_cache_made_before_the_blob_gets_one(repo, linked, capsys, trusted):
    cli(capsys, "check", str(repo / ".memzoi"))
    with sqlite3.connect(cache_db()) as conn:
        conn.execute("DROP TABLE facts")
    assert "lifecycle_inconsistent" in same_as_uncached(capsys, linked)  # read entry by entry
    cli(capsys, "check", str(repo / ".memzoi"))
    assert len(blob()) == 4


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
    """Neither gets an entry. The stale record's facts go to the blob, so a check of another file does not analyse
    it again; a file with a secret keeps nothing, wherever the secret is (a detector's span may hold context: a
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
    kept = blob()
    key = verdictcache.path_key
    assert key(str(reviewed)) in kept
    assert key(str(records / "leaky.md")) not in kept and key(str(records / "spilt.md")) not in kept
    assert len(kept) == 5  # the four entries and the stale record's facts
    stored = cache_db().read_bytes()
    assert _token().encode() not in stored and secret[8:].encode() not in stored
    counts.reset()
    assert cli(capsys, "check", str(linked), "--format", "json") == base
    assert counts["analysed"] == 2  # leaky and spilt: the stale record's facts came from the blob


@pytest.fixture
def judged(monkeypatch):
    """Every run judges: no stored report is replayed (``tests/test_replay.py`` tests that), so a run that
    analyses nothing read every file from its entry."""
    from memzoi.runs import check

    monkeypatch.setattr(check, "replayed", lambda *a, **k: None)


def test_a_cold_check_writes_its_entries_as_it_goes_and_still_makes_the_whole_blob(
    repo, linked, capsys, counts, trusted, judged, monkeypatch
):
    monkeypatch.setattr(verdictcache, "FLUSH_AT", 2)
    held: list[int] = []  # entries the run held each time it wrote a batch
    real = verdictcache.ProjectCache._flush
    monkeypatch.setattr(verdictcache.ProjectCache, "_flush", lambda self: held.append(len(self.put)) or real(self))
    base = cli(capsys, "check", str(repo / ".memzoi"), "--format", "json", "--no-cache")
    assert cli(capsys, "check", str(repo / ".memzoi"), "--format", "json") == base
    assert held == [2, 2]  # four files: two batches, nothing left for the end
    assert len(blob()) == 4  # made from the stored entries, every file's facts
    counts.reset()
    assert cli(capsys, "check", str(repo / ".memzoi"), "--format", "json") == base
    assert counts["analysed"] == 0  # every entry was written
    assert "lifecycle_inconsistent" in same_as_uncached(capsys, linked)  # one file: the others' facts from the blob


def test_a_batch_that_cannot_be_written_is_kept_for_the_end(repo, capsys, counts, trusted, judged, monkeypatch):
    monkeypatch.setattr(verdictcache, "FLUSH_AT", 1)
    real_connect, real_flush = verdictcache.connect, verdictcache.ProjectCache._flush
    refused: list[int] = []

    def first_busy(self) -> None:  # the first batch finds the store busy (another process writing)
        if refused:
            return real_flush(self)
        refused.append(len(self.put))
        monkeypatch.setattr(verdictcache, "connect", lambda db: None)
        try:
            return real_flush(self)
        finally:
            monkeypatch.setattr(verdictcache, "connect", real_connect)

    monkeypatch.setattr(verdictcache.ProjectCache, "_flush", first_busy)
    base = cli(capsys, "check", str(repo / ".memzoi"), "--format", "json", "--no-cache")
    assert cli(capsys, "check", str(repo / ".memzoi"), "--format", "json") == base
    assert refused == [1] and len(blob()) == 3  # no batch after the refused one: all three written at the end
    counts.reset()
    assert cli(capsys, "check", str(repo / ".memzoi"), "--format", "json") == base
    assert counts["analysed"] == 0


_KEYS = st.text("0123456789abcdef", min_size=64, max_size=64)
#: facts-like values: the strings may hold quotes, commas, colons and whole keys, as a reference's target can
_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers(-5, 10**12) | st.text(st.sampled_from('ab",:[]{}\\0f'), max_size=12),
    lambda inner: st.lists(inner, max_size=4),
    max_leaves=12,
)


def _item(draw_stat: list[int], facts: list, digest: str) -> list:
    return [*draw_stat, facts, digest]


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    data=st.dictionaries(
        _KEYS,
        st.tuples(st.lists(st.integers(0, 10**18), min_size=5, max_size=5), st.lists(_VALUES, max_size=5), _KEYS),
        max_size=8,
    ),
    put=st.dictionaries(
        _KEYS | st.sampled_from(["0" * 64]),
        st.tuples(st.lists(st.integers(0, 10**18), min_size=5, max_size=5), st.lists(_VALUES, max_size=5), _KEYS),
        max_size=4,
    ),
    drop=st.lists(_KEYS, max_size=3),
    picks=st.lists(st.integers(0, 7), max_size=4),
    eager=st.integers(0, 3),
)
def test_a_lazy_blob_reads_and_writes_items_as_the_whole_blob_does(data, put, drop, picks, eager, monkeypatch):
    """:class:`memzoi.stores.verdictfacts.LazyBlob`: an item decoded on its own is the whole blob's; the text with
    items replaced, added and removed in place decodes to the blob :func:`~memzoi.stores.verdictfacts.updated` would
    give (keys of the whole blob hidden in other items' strings included)."""
    from memzoi.stores import verdictfacts as vf

    monkeypatch.setattr(vf, "EAGER_AFTER", eager)  # the same value for every example
    whole = {k: _item(*v) for k, v in data.items()}
    keys = list(whole)
    if keys:  # strings in the first item's facts that spell every item's key (found first by a plain search)
        whole[keys[0]][5] = [*whole[keys[0]][5], *(f'"{k}":[1]' for k in keys), *(f',"{k}":[' for k in keys)]
        drop = [*drop, *(keys[p % len(keys)] for p in picks)]
    text = json.dumps(whole, separators=(",", ":"))
    lazy = vf.LazyBlob(text)
    for k in [*keys, *put, *drop]:
        assert lazy.get(k) == whole.get(k)
    items = {k: vf.item_text(k, s, f, d) for k, (s, f, d) in put.items()}
    expected = {k: v for k, v in whole.items() if k not in set(drop)}
    expected.update({k: _item(*v) for k, v in put.items()})
    got = vf.LazyBlob(text).spliced(items, drop)
    assert json.loads(got) == expected
    assert vf.LazyBlob(got).get(keys[0] if keys else "0" * 64) == expected.get(keys[0] if keys else "0" * 64)
