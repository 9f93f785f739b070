"""The server's index is written from its own verdicts: a file is analysed once whether it is diagnosed or
indexed, and the rows are the ones ``memzoi rebuild`` writes for the same tree."""

from __future__ import annotations

import asyncio
import os
import sqlite3
from pathlib import Path

import pytest

from memzoi.stores.index import Index
from memzoi.stores.planelisting import walk
from memzoi.stores.store import store_path

from .conftest import PROFILES, start_client, wait_until
from .test_verdict_parity import build

TABLES = ("files", "records", "proposals")


def rows(db: Path) -> dict[str, list[tuple]]:
    """Every row of every table, without ``checked_ns`` (the clock of the read, which differs between runs)."""
    conn = sqlite3.connect(db)
    conn.row_factory = sqlite3.Row
    try:
        return {
            t: sorted(tuple(r[k] for k in r.keys() if k != "checked_ns") for r in conn.execute(f"SELECT * FROM {t}"))
            for t in TABLES
        }
    finally:
        conn.close()


def indexed_files(db: Path) -> int:
    try:
        conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
        try:
            return conn.execute("SELECT count(*) FROM files").fetchone()[0]
        finally:
            conn.close()
    except sqlite3.Error:
        return -1  # not created yet, or the schema is being written


@pytest.mark.parametrize("profile", list(PROFILES))
async def test_the_servers_index_is_what_rebuild_writes(tmp_path: Path, memzoi_home: Path, profile: str, monkeypatch):
    root = tmp_path / "ws"
    build(root, memzoi_home)
    monkeypatch.setenv("MEMZOI_HOME", str(memzoi_home))
    db = store_path(root.resolve())
    for suffix in ("", "-wal", "-shm"):  # built by the fixture's `proposals apply`: the server builds it anew
        Path(f"{db}{suffix}").unlink(missing_ok=True)
    expected = len(walk(root.resolve()).stamps)
    client = await start_client(profile, root, memzoi_home)
    try:
        await wait_until(lambda: indexed_files(db) == expected, timeout=60)
    finally:
        await asyncio.wait_for(client.shutdown_session(), 10)
        await client.stop()
    with Index(root, path=tmp_path / "rebuilt.db", workers=1) as index:
        index.rebuild()
    assert rows(db) == rows(tmp_path / "rebuilt.db")


def test_indexing_a_scanned_file_analyses_nothing_again(tmp_path: Path, memzoi_home: Path, monkeypatch):
    """The scan analyses each file once and writes its index row with its entry; the refresh after the scan
    analyses nothing again. A file edited on disk since is analysed once more (its row is no longer the file's),
    and the rows are the ones a fresh rebuild writes."""
    from types import SimpleNamespace

    import memzoi.stores.firststage
    from memzoi.project.verdict import ProjectContext
    from memzoi.runs import scanverdicts
    from memzoi_lsp.documents import Documents
    from memzoi_lsp.project import Project

    root = tmp_path / "ws"
    build(root, memzoi_home)
    monkeypatch.setenv("MEMZOI_HOME", str(memzoi_home))
    docs = Documents(lambda: SimpleNamespace(text_documents={}))
    project = Project(root.resolve())
    files = [Path(path) for path in walk(project.root).paths()]
    ctx = ProjectContext.of(project.memzoi_dir, git=project.git)
    index = Index(
        project.root, path=tmp_path / "server.db", workers=1, premade=lambda fs: project.premade_rows(fs, docs.on_disk)
    )
    project.index = index  # the project's index, at a path of the test's
    project.adopt(project.listing())  # records git's state and takes the listing, as the scan does first
    scanned = list(scanverdicts.analyse([str(p) for p in files], ctx, index_root=project.root, workers=1))
    assert all(got is not None and got.row is not None for got in scanned)
    for i in range(0, len(scanned), 3):  # written chunk by chunk, as the scan goes
        project.put_rows([got.row for got in scanned[i : i + 3]], docs.on_disk)

    def analysed_twice(*args, **kwargs):
        raise AssertionError("the index analysed a file the scan had analysed")

    monkeypatch.setattr(memzoi.stores.firststage, "analyze_bytes", analysed_twice)  # the one analysing routine
    try:
        project.refresh_index(docs.on_disk)
        assert docs.analyses == 0 and index.search("pnpm")  # nothing analysed again; the rows' text is searchable
        edited = next(p for p in files if p.name == "use-pnpm.md")
        edited.write_text(edited.read_text() + "\nOne more line.\n")
        os.utime(edited, ns=(edited.stat().st_atime_ns, edited.stat().st_mtime_ns + 10**9))
        assert index.refresh().files == 1 and docs.analyses == 1
    finally:
        index.close()
    monkeypatch.undo()
    monkeypatch.setenv("MEMZOI_HOME", str(memzoi_home))
    with Index(project.root, path=tmp_path / "rebuilt.db", workers=1) as fresh:
        fresh.rebuild()
    assert rows(tmp_path / "server.db") == rows(tmp_path / "rebuilt.db")


def test_the_server_s_index_hook_loads_the_index_sync_when_a_change_is_committed(tmp_path, monkeypatch):
    from memzoi.ledger import writer
    from memzoi_lsp import startup

    monkeypatch.setattr(writer, "_commit_hook", None)
    startup.install_index_sync()
    assert writer._commit_hook is startup.sync_index  # installed: every ledgered change of the server calls it
    calls = []
    monkeypatch.setattr(
        "memzoi.lifecycle.index_sync.sync_index", lambda root, paths: calls.append((root, paths)) or True
    )
    assert startup.sync_index(tmp_path, [".memzoi/records/a.md"]) is True
    assert calls == [(tmp_path, [".memzoi/records/a.md"])]  # the lifecycle's sync, with what the change touched
