"""The index's full-text tables filled once its rows are in (``memzoi.stores.index_text``): by the refresh that
follows rows put as they came (the language server's scan), on a connection of its own while the refresh's plan
is made (issue 29: cold server scan), with the same outcome as filled in line."""

from __future__ import annotations

import sqlite3
import threading

import pytest

from memzoi.stores import index_text
from memzoi.stores.index import Index

from .test_search_early_query import project  # noqa: F401 - the fixture (records titled Walrus habits, Other i)


def _as_put(index: Index) -> None:
    """The index as the scan's put_rows leaves it: every row in, the full-text tables empty, no triggers."""
    db = index.db
    for table in ("records_fts", "proposals_fts"):
        db.execute(f"INSERT INTO {table}({table}) VALUES('delete-all')")
    for (name,) in db.execute("SELECT name FROM sqlite_master WHERE type = 'trigger'").fetchall():
        db.execute(f"DROP TRIGGER {name}")
    db.execute("INSERT INTO meta(key, value) VALUES (?, 'to fill')", (index_text.TO_FILL,))


def _triggers(db: sqlite3.Connection) -> set[str]:
    return {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type = 'trigger'")}


def test_the_refresh_fills_the_text_of_rows_put_and_plans_as_filled_in_line(project, monkeypatch):  # noqa: F811
    with Index(project) as index:
        index.rebuild()
        triggers = _triggers(index.db)
        _as_put(index)
        assert index.rows_generation() is None  # no search from rows whose text is not in
        beside: list[str] = []
        real = index_text.fill_beside

        def noting(path, work, timeout=5.0):
            beside.append(threading.current_thread().name)
            return real(path, work, timeout)

        monkeypatch.setattr("memzoi.stores.index.fill_beside", noting)
        result = index.refresh()
        assert beside and result.files == 0  # filled beside the plan, which re-indexed nothing
        assert not index_text.text_to_fill(index.db) and _triggers(index.db) == triggers
        assert [h.title for h in index.search("walrus")] == ["Walrus habits"]
        index.refresh()
        assert beside == beside[:1]  # once filled, a refresh fills nothing


def test_the_plan_is_made_while_the_fill_waits_for_the_write_lock(project):  # noqa: F811
    """The work runs on the caller's thread while the fill runs on its own (here held back by another writer until
    the work lets it go), and the call returns once both are done."""
    with Index(project) as index:
        index.rebuild()
        _as_put(index)
    other = sqlite3.connect(Index(project).path, isolation_level=None)
    other.execute("BEGIN IMMEDIATE")  # another process writes: the fill waits for it

    def work() -> str:
        filler = [t for t in threading.enumerate() if t.name == "memzoi-index-text"]
        assert filler and filler[0].is_alive()
        with Index(project) as reader:  # the work may read meanwhile
            assert index_text.text_to_fill(reader.db)
        other.execute("COMMIT")
        return "planned"

    path = Index(project).path
    assert index_text.fill_beside(path, work) == "planned"
    with Index(project) as index:
        assert not index_text.text_to_fill(index.db)
        assert [h.title for h in index.search("walrus")] == ["Walrus habits"]
    other.close()


def test_a_failing_work_is_raised_after_the_fill_is_done(project):  # noqa: F811
    with Index(project) as index:
        index.rebuild()
        _as_put(index)
        path = index.path

    def work() -> None:
        raise ValueError("the plan failed")

    with pytest.raises(ValueError, match="the plan failed"):
        index_text.fill_beside(path, work)
    with Index(project) as index:
        assert not index_text.text_to_fill(index.db)  # the fill was not cut short


def test_a_fill_that_cannot_get_the_write_lock_raises_and_leaves_the_text_to_fill(project):  # noqa: F811
    with Index(project) as index:
        index.rebuild()
        _as_put(index)
        path = index.path
    other = sqlite3.connect(path, isolation_level=None)
    other.execute("BEGIN IMMEDIATE")
    try:
        with pytest.raises(sqlite3.OperationalError, match="locked"):
            index_text.fill_beside(path, lambda: "planned", timeout=0.05)
    finally:
        other.execute("ROLLBACK")
        other.close()
    with Index(project) as index:
        assert index_text.text_to_fill(index.db) and index.rows_generation() is None
        index.refresh()  # the next refresh fills them
        assert not index_text.text_to_fill(index.db)
