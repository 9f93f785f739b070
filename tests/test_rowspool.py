"""The index rows of a server scan are kept on disk until the index takes them (issue 29, lean memory):
:class:`memzoi.runs.rowspool.RowSpool` gives back exactly the row put for a path, once, leaves no file behind in
the project's runtime directory, and keeps a row in memory when its file cannot be written."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from memzoi.base.runtime import worktree_runtime_dir
from memzoi.runs import rowspool
from memzoi.runs.rowspool import RowSpool


@pytest.fixture
def root(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("MEMZOI_HOME", str(tmp_path / "home"))
    project = tmp_path / "ws"
    (project / ".memzoi").mkdir(parents=True)
    return project


def test_rows_come_back_once_and_the_last_put_wins(root: Path):
    spool = RowSpool(root)
    spool.put("/a.md", (10, 1, b"first"))
    spool.put("/b.md", (20, 2, bytes(range(256))))
    spool.put("/a.md", (11, 3, b"second row"))
    assert len(spool) == 2
    assert spool.take("/a.md") == (11, 3, b"second row")
    assert spool.take("/a.md") is None  # taken once
    assert spool.take("/b.md") == (20, 2, bytes(range(256)))
    assert spool.take("/never.md") is None
    spool.put("/c.md", (1, 1, b"c"))
    spool.clear()
    assert len(spool) == 0 and spool.take("/c.md") is None


def test_the_spool_leaves_nothing_in_the_runtime_directory(root: Path):
    spool = RowSpool(root)
    spool.put("/a.md", (1, 1, b"x" * 5000))
    folder = worktree_runtime_dir(root)
    assert folder.is_dir() and not any(folder.iterdir())  # an unnamed file: unlinked at once
    assert spool.take("/a.md") == (1, 1, b"x" * 5000)
    spool.clear()


def test_a_spool_that_cannot_write_keeps_the_row_in_memory(root: Path, monkeypatch: pytest.MonkeyPatch):
    def refuse(project_root: object) -> object:
        raise OSError(28, os.strerror(28))  # no space left on device

    monkeypatch.setattr(rowspool, "_open", refuse)
    spool = RowSpool(root)
    spool.put("/a.md", (1, 2, b"row"))
    assert spool.take("/a.md") == (1, 2, b"row")


def test_spooled_rows_are_read_back_only_when_reached(root: Path, monkeypatch: pytest.MonkeyPatch):
    from memzoi.runs.rowspool import SpooledRows

    spool = RowSpool(root)
    for i in range(5):
        spool.put(f"/{i}.md", (i, i, f"row {i}".encode()))
    assert spool.stat_of("/3.md") == (3, 3) and spool.stat_of("/none.md") is None
    rows = SpooledRows(spool)
    for i in range(5):
        rows.refer(f"/{i}.md")
    rows.append(b"made otherwise")
    reads: list[str] = []
    real = spool.read
    monkeypatch.setattr(spool, "read", lambda path: reads.append(path) or real(path))
    assert len(rows) == 6 and not reads  # nothing read yet
    assert rows[1:3] == [b"row 1", b"row 2"] and reads == ["/1.md", "/2.md"]
    assert rows[-1] == b"made otherwise" and rows[0] == b"row 0"
    assert list(rows) == [*(f"row {i}".encode() for i in range(5)), b"made otherwise"]
    spool.clear()
