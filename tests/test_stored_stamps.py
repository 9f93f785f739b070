"""The index rows' stamps a long-lived process keeps between refreshes (:func:`memzoi.stores.storedstamps.keep`,
the MCP server): used only while they are the database's (no commit by any connection since, no vouching row aged
past the trust age), so every search still sees every change: the freshness cases over ``search_memory`` with the
copy kept, and the copy itself dropped by each kind of change."""

from __future__ import annotations

import sqlite3

import pytest

from memzoi.agent import recall
from memzoi.agent.search import search_memory
from memzoi.base import freshness
from memzoi.stores import storedstamps
from memzoi.stores.index import Index
from memzoi.stores.store import store_path

from .index_setup import NEW, OLD, closed, fact, same_size_edit  # noqa: F401 - fixtures
from .mcp.conftest import FACT_ID, home, project  # noqa: F401 - fixtures


@pytest.fixture
def kept(monkeypatch: pytest.MonkeyPatch) -> None:
    """This test's process keeps the stored stamps, as the MCP server does (and forgets them afterwards)."""
    monkeypatch.setattr(storedstamps, "_KEPT", None)
    storedstamps.keep()


def fetches(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Count the reads of the stored stamps from the database from now on."""
    counted: list[int] = []
    real = storedstamps._fetch
    monkeypatch.setattr(storedstamps, "_fetch", lambda db, now: counted.append(1) or real(db, now))
    return counted


def found(project, word: str) -> list[str]:
    return [h["id"] for h in search_memory(project, word)["results"]]


@pytest.mark.usefixtures("kept", "closed")
def test_a_kept_copy_is_read_once_while_nothing_is_committed(project, monkeypatch):
    assert FACT_ID in found(project, OLD)  # builds the index
    counted = fetches(monkeypatch)
    for _ in range(3):
        assert FACT_ID in found(project, OLD)
    assert len(counted) == 1  # the first refresh fetched it and wrote nothing; the others used it


@pytest.mark.usefixtures("kept", "closed")
def test_an_edit_keeping_size_and_mtime_is_seen_with_a_kept_copy(project, monkeypatch):
    assert FACT_ID in found(project, OLD) and FACT_ID in found(project, OLD)  # the copy is kept now
    same_size_edit(fact(project))
    assert found(project, NEW) == [FACT_ID] and FACT_ID not in found(project, OLD)
    assert NEW in recall.get_memory(project, FACT_ID)["body"]


@pytest.mark.usefixtures("kept", "closed")
def test_a_commit_by_another_connection_drops_the_kept_copy(project, monkeypatch):
    found(project, OLD)
    found(project, OLD)
    counted = fetches(monkeypatch)
    found(project, OLD)
    assert counted == []  # kept
    with Index(project) as ix:  # another connection changes a row's stored stamp: the copy is no longer the database's
        ix.db.execute("UPDATE files SET size = size + 1 WHERE path LIKE '%build-tool%'")
    assert FACT_ID in found(project, OLD)  # the row no longer matches its file: read, re-indexed
    assert len(counted) == 1
    found(project, OLD)  # the re-indexing was a commit too
    assert len(counted) == 2
    found(project, OLD)
    assert len(counted) == 2
    with sqlite3.connect(store_path(project.resolve())) as other:  # a plain connection, no row of files changed
        other.execute("INSERT INTO meta(key, value) VALUES ('another', 'commit')")
    found(project, OLD)
    assert len(counted) == 3


@pytest.mark.usefixtures("kept", "closed")
def test_a_kept_copy_is_dropped_when_a_vouching_row_ages_past_the_trust_age(project, monkeypatch):
    found(project, OLD)
    counted = fetches(monkeypatch)
    found(project, OLD)
    assert counted == [1]  # the rows written by the first search: fetched once, then kept
    found(project, OLD)
    assert counted == [1]
    now = freshness.time.time_ns
    monkeypatch.setattr(freshness.time, "time_ns", lambda: now() + freshness.MAX_TRUST_NS + 10**9)
    reads: list[str] = []
    real = freshness.read_stable
    monkeypatch.setattr(freshness, "read_stable", lambda p: reads.append(str(p)) or real(p))
    found(project, OLD)
    assert len(counted) == 2 and reads  # fetched again: every row too old to vouch is read and restamped


@pytest.mark.usefixtures("kept")
def test_a_kept_copy_follows_the_rules_terms(project, monkeypatch):
    """The copy is fetched under the racy window and trust age in force: a change of either fetches it anew."""
    monkeypatch.setattr(freshness, "SAMPLE_SHARE", 0)
    monkeypatch.setattr(freshness, "RACY_NS", -1)
    found(project, OLD)
    found(project, OLD)
    counted = fetches(monkeypatch)
    found(project, OLD)
    assert counted == []
    monkeypatch.setattr(freshness, "RACY_NS", -2)
    found(project, OLD)
    assert counted == [1]
    monkeypatch.setattr(freshness, "MAX_TRUST_NS", freshness.MAX_TRUST_NS + 1)
    found(project, OLD)
    assert counted == [1, 1]


def test_at_most_max_kept_copies_are_kept(tmp_path, monkeypatch):
    """One copy per database, the least recently filled one dropped (with its connection) past ``MAX_KEPT``."""
    monkeypatch.setattr(storedstamps, "_KEPT", None)
    monkeypatch.setattr(storedstamps, "MAX_KEPT", 2)
    storedstamps.keep()
    kept = storedstamps._KEPT
    assert kept is not None
    dbs = []
    for i in range(3):
        db = sqlite3.connect(tmp_path / f"{i}.db", isolation_level=None)
        db.execute(f"CREATE TABLE files(path TEXT PRIMARY KEY, {storedstamps.ROW})")
        db.execute("INSERT INTO files VALUES ('a.md', 1, 10, 7, 10, 5000000000, '00')")
        dbs.append(db)
    for db in dbs:
        got = storedstamps.read(db, 6_000_000_000)
        assert list(got.vouching) == [("a.md", (1, 10, 7, 10))] and got.rows == {}
    assert sorted(kept._slots) == [str(tmp_path / "1.db"), str(tmp_path / "2.db")]
    for db in dbs:
        db.close()
