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
