"""``memzoi search`` queries the index while find lists the files, and keeps that answer only where the refresh then
judged those very rows and changed none (:meth:`memzoi.stores.index.Index.unchanged_since`); otherwise it queries
again after the refresh, so an edit is never answered from the rows before it (issue 29: one refresh per search,
nothing served stale)."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from memzoi.agent import search as agent_search
from memzoi.base import freshness
from memzoi.cli.main import main
from memzoi.stores.index import Index

from . import builders

RID = "early-query"


@pytest.fixture
def project(tmp_path, monkeypatch) -> Path:
    monkeypatch.setenv("MEMZOI_HOME", str(tmp_path / "home"))
    monkeypatch.setattr(freshness, "RACY_NS", 0)  # rows written a moment ago vouch at once
    monkeypatch.setattr(freshness, "SAMPLE_SHARE", 0)
    root = tmp_path / "proj"
    builders.write(root, builders.record_path(RID), builders.record(RID, title="Walrus habits"))
    for i in range(3):
        builders.write(root, builders.record_path(f"other-{i}"), builders.record(f"other-{i}", title=f"Other {i}"))
    return root


def search(capsys, root: Path, word: str) -> list[str]:
    assert main(["search", word, "--root", str(root), "--json", "--no-progress"]) == 0
    return [r["title"] for r in json.loads(capsys.readouterr().out)["records"]]


def counted(monkeypatch) -> list[int]:
    calls: list[int] = []
    real = agent_search.search_memory

    def counting(*args, **kwargs):
        calls.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(agent_search, "search_memory", counting)
    return calls


def test_an_unchanged_index_is_queried_once_and_an_edit_is_never_answered_from_before_it(project, capsys, monkeypatch):
    assert search(capsys, project, "walrus") == ["Walrus habits"]  # builds the index
    calls = counted(monkeypatch)
    assert search(capsys, project, "walrus") == ["Walrus habits"]
    assert len(calls) == 1  # the query made while find listed the files stood
    builders.write(project, builders.record_path(RID), builders.record(RID, title="Walrus habits, narwhal too"))
    assert search(capsys, project, "narwhal") == ["Walrus habits, narwhal too"]
    assert len(calls) == 3  # the early answer (no narwhal yet) was dropped and the query made again


def test_a_write_between_the_query_and_the_refresh_is_another_generation(project, capsys):
    search(capsys, project, "walrus")
    with Index(project) as index:
        gen = index.rows_generation()
        assert gen is not None
        other = sqlite3.connect(index.path)  # another process re-indexes a row meanwhile
        with other:
            other.execute("UPDATE files SET checked_ns = checked_ns WHERE path = ?", (builders.record_path(RID),))
        other.close()
        index.refresh()
        assert not index.unchanged_since(gen)
        again = index.rows_generation()
        index.refresh()
        assert index.unchanged_since(again)


def test_no_early_query_before_the_index_is_built_or_its_text_filled(project, capsys):
    with Index(project) as index:
        assert index.rows_generation() is None  # never built
    search(capsys, project, "walrus")
    with Index(project) as index:
        assert index.rows_generation() is not None
        index.db.execute("INSERT INTO meta(key, value) VALUES ('fts', 'to fill')")  # as after put_rows: no text yet
        assert index.rows_generation() is None


def test_a_write_while_the_refresh_reads_the_rows_voids_the_early_answer(project, capsys, monkeypatch):
    """Another process re-indexes a file after the refresh read the generation and before it read the rows: the
    decision is then of newer rows than the early query read, which it cannot vouch for."""
    from memzoi.stores import storedstamps

    search(capsys, project, "walrus")
    real = storedstamps.read

    def read_after_a_write(db, now, **kwargs):
        other = sqlite3.connect(index.path)
        with other:
            other.execute("UPDATE files SET checked_ns = checked_ns WHERE path = ?", (builders.record_path(RID),))
        other.close()
        return real(db, now, **kwargs)

    with Index(project) as index:
        index.db.execute("DELETE FROM meta WHERE key = 'listing'")  # no mark: the rows' stamps are read
        gen = index.rows_generation()
        monkeypatch.setattr(storedstamps, "read", read_after_a_write)
        index.refresh()
        assert not index.unchanged_since(gen)
