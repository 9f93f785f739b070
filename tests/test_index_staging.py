"""`memzoi rebuild` streams its rows into temporary tables while files are analysed (issue 29, Build 4): no row
list held to the end, no write lock while files are analysed, and still one transaction for readers."""

from __future__ import annotations

import shutil
import sqlite3
from pathlib import Path

import pytest

from memzoi.stores import index_build
from memzoi.stores.index import Index
from memzoi.stores.store import store_path

from .test_admission import git


@pytest.fixture
def project(corpus, tmp_path, monkeypatch) -> Path:
    monkeypatch.setenv("MEMZOI_HOME", str(tmp_path / "home"))
    root = tmp_path / "proj"
    shutil.copytree(corpus / "memzoi-repo/.memzoi", root / ".memzoi")
    shutil.copytree(corpus / "examples/proposals", root / ".memzoi/proposals/pending")
    return root


def staged(ix: Index) -> int:
    return int(ix.db.execute("SELECT count(*) FROM temp.staged_files").fetchone()[0])


def test_rows_are_staged_as_they_come_without_the_write_lock(project, monkeypatch):
    monkeypatch.setattr(index_build, "INSERT_BATCH", 5)
    with Index(project, workers=1) as ix:
        ix.rebuild()
        before = ix.counts()
        seen: list[tuple[int, int]] = []
        other = sqlite3.connect(store_path(project), timeout=0.1, isolation_level=None)

        def progress(done: int, total: int) -> None:
            if 10 < done < total:
                # another writer gets the lock at once, and a reader still sees the whole old index
                other.execute("BEGIN IMMEDIATE")
                other.execute("ROLLBACK")
                assert other.execute("SELECT count(*) FROM files").fetchone()[0] == before["files"]
                seen.append((done, staged(ix)))
                # each staged batch has its checksum already, taken while the files are analysed
                assert ix.db.execute("SELECT count(*) FROM temp.staged_files WHERE checksum = ''").fetchone()[0] == 0

        result = ix.rebuild(progress)
        other.close()
        assert seen and all(rows >= done - 5 and rows > 0 for done, rows in seen)
        assert result.files == before["files"] == 29 and len(result.record_ids) == 24
        assert ix.counts() == before
        assert ix.drift().clean  # the checksums taken of the staged rows hold for the copied ones
        assert ix.db.execute("SELECT name FROM sqlite_temp_master").fetchall() == []


def test_a_rebuild_that_fails_while_staging_keeps_the_old_index(project):
    with Index(project, workers=1) as ix:
        ix.rebuild()
        before = ix.counts()

        def progress(done: int, total: int) -> None:
            if done == total:
                raise RuntimeError("stop")

        with pytest.raises(RuntimeError):
            ix.rebuild(progress)
        assert ix.counts() == before and ix.drift().clean
        assert ix.db.execute("SELECT name FROM sqlite_temp_master").fetchall() == []
        assert ix.search("runtime index")


def test_memzoi_rebuild_takes_a_larger_page_cache_for_its_transaction_only(project):
    """``memzoi rebuild`` (``everything``) gives its connection :data:`index_build.REBUILD_CACHE_KIB` of page cache
    while it stages and writes (its one transaction writes the whole store), and the connection's own setting
    again afterwards; another rebuild (a server's, a search's) leaves the cache as it is."""
    with Index(project, workers=1) as ix:
        own = ix.db.execute("PRAGMA cache_size").fetchone()[0]
        seen: list[int] = []

        def progress(done: int, total: int) -> None:
            seen.append(ix.db.execute("PRAGMA cache_size").fetchone()[0])

        ix.rebuild(progress, everything=True)
        assert seen and set(seen) == {-index_build.REBUILD_CACHE_KIB}
        assert ix.db.execute("PRAGMA cache_size").fetchone()[0] == own
        seen.clear()
        ix.rebuild(progress)
        assert seen and set(seen) == {own}


def test_a_rebuild_writes_the_entries_write_entries_writes(project):
    """The rebuild makes each store entry into its row as it comes (``store.EntryRows``) instead of under the write
    lock: what it writes is what ``write_entries`` writes for the same files (checksums included), and a file
    without an entry to keep (``made_entries``' rule: none made, or a payload of ``None``) loses its stored one."""
    from memzoi.stores.store import EntryRows, made_entries, path_key, write_entries, write_rows

    with Index(project, workers=1) as ix:
        ix.rebuild(everything=True)
        table = ix.db.execute("SELECT sql FROM sqlite_master WHERE name = 'entries'").fetchone()[0]
        old = ix.db.execute("SELECT * FROM entries ORDER BY key LIMIT 1").fetchone()
    stamp = old[1]
    made = [(f"/p/{i}", (bytes([i]) * 32, (i, i + 1, i + 2, i + 3), i + 4, f"payload {i}")) for i in range(5)]
    made += [("/p/gone", None), ("/p/secret", (b"d" * 32, (1, 2, 3, 4), 5, None))]
    kept = EntryRows(stamp)
    for path, entry in made:
        kept.add(path, entry)
    stored = []
    for write in (
        lambda db: write_entries(db, stamp, *made_entries(made)),
        lambda db: write_rows(db, kept.rows, kept.drop),
    ):
        db = sqlite3.connect(":memory:")
        db.execute(table)
        for path in ("/p/gone", "/p/secret", "/p/kept"):  # entries stored by an earlier run
            db.execute(f"INSERT INTO entries VALUES ({', '.join('?' * 10)})", (path_key(path), *old[1:]))
        write(db)
        stored.append(db.execute("SELECT * FROM entries ORDER BY key").fetchall())
    assert stored[0] == stored[1]
    assert len(stored[0]) == 5 + 1 and path_key("/p/kept") in {r[0] for r in stored[0]}


def test_a_rebuild_whose_index_is_closed_next_leaves_its_staged_copies_to_the_close(project):
    """``closing`` (``memzoi rebuild``, which closes the index right after): the temporary tables are not dropped
    one page at a time after the commit, the close discards them whole; the next staging on the same connection
    drops them first, and a failing rebuild drops them as always."""
    with Index(project, workers=1) as ix:
        first = ix.rebuild(closing=True)
        before = ix.counts()
        assert staged(ix) == first.files == before["files"]  # left for the close
        again = ix.rebuild(closing=True)  # staged anew: nothing left over is copied twice
        assert (again.files, ix.counts()) == (first.files, before) and ix.drift().clean

        def progress(done: int, total: int) -> None:
            if done == total:
                raise RuntimeError("stop")

        with pytest.raises(RuntimeError):
            ix.rebuild(progress, closing=True)
        assert ix.db.execute("SELECT name FROM sqlite_temp_master").fetchall() == []
        assert ix.counts() == before
    with Index(project) as ix:  # a new connection has no temporary tables; the index is whole
        assert ix.db.execute("SELECT name FROM sqlite_temp_master").fetchall() == []
        assert ix.counts() == before and ix.drift().clean and ix.search("runtime index")


def test_the_workers_start_on_the_first_files_while_git_is_asked_about_the_others(project, monkeypatch):
    """``analyse_rows`` asks git the visibility of its first ``FIRST_ASKED`` files, hands them to the pool, and
    only then asks about the others (``memzoi rebuild``: the workers no longer wait for git's answers for every
    file); every file gets git's answer, as when all are asked at once."""
    from memzoi.base import parallel
    from memzoi.project import admission

    events: list[tuple[str, int]] = []
    ask, add = admission.git_visibility, parallel.ChunkPool.add

    def asked(root, paths):
        paths = list(paths)
        events.append(("ask", len(paths)))
        return ask(root, paths)

    def added(self, job):
        events.append(("add", 1))
        return add(self, job)

    # a worktree where some files are tracked and the others not: answers that differ per file
    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    git(project, "init", "-q")
    git(project, "add", ".memzoi/records")
    with Index(project, workers=1) as ix:
        ix.rebuild()
        before = ix.db.execute(
            "SELECT path, visibility, admitted, refusals, checksum FROM files ORDER BY path"
        ).fetchall()
        monkeypatch.setattr(admission, "git_visibility", asked)
        monkeypatch.setattr(parallel.ChunkPool, "add", added)
        monkeypatch.setattr(index_build, "FIRST_ASKED", 8)
        ix.rebuild()
        after = ix.db.execute(
            "SELECT path, visibility, admitted, refusals, checksum FROM files ORDER BY path"
        ).fetchall()
    asks = [i for i, e in enumerate(events) if e[0] == "ask"]
    assert [events[i][1] for i in asks] == [8, len(before) - 8]
    assert sum(1 for e in events[: asks[1]] if e[0] == "add") == 8  # the first files went to the pool first
    assert after == before and len({v for _, v, *_ in after}) == 2  # tracked and untracked
