"""Opening a fresh store from many processes at once (issue 29): every process gets a usable index and store
entries from the one database; none fails with "table meta already exists" (the schema is checked again under the
write lock). A process that opens the store again stays one of its users for the others (SQLite's locks are kept),
and the runtime files are made private without being opened once they exist."""

from __future__ import annotations

import multiprocessing
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from memzoi.base.runtime import STORE_DB, private_file
from memzoi.stores import store
from memzoi.stores.store import STORE_VERSION

PROCESSES = 20


def _open_both(barrier, root: str, index_db: str, cache_db: str, errors) -> None:
    from memzoi.stores import verdictcache
    from memzoi.stores.index import Index

    barrier.wait()
    try:
        with Index(root, path=index_db) as ix:
            if ix.schema_problem:
                raise RuntimeError(ix.schema_problem)
            ix.counts()
        conn = verdictcache.connect(Path(cache_db))
        if conn is None:
            raise RuntimeError("the verdict cache could not be opened")
        conn.execute("SELECT count(*) FROM entries").fetchone()
        conn.close()
    except Exception as err:  # noqa: BLE001 - reported to the test
        errors.put(f"{type(err).__name__}: {err}")
        raise SystemExit(1) from err


@pytest.mark.parametrize("round_", range(2))
def test_twenty_processes_open_a_fresh_store_at_once(tmp_path, round_):
    methods = multiprocessing.get_all_start_methods()
    ctx = multiprocessing.get_context("fork" if "fork" in methods else "spawn")
    (tmp_path / ".memzoi").mkdir()
    barrier, errors = ctx.Barrier(PROCESSES), ctx.Queue()
    db = str(tmp_path / "rt" / STORE_DB)  # the index and the entries are tables of one store
    args = (barrier, str(tmp_path), db, db, errors)
    procs = [ctx.Process(target=_open_both, args=args) for _ in range(PROCESSES)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(timeout=120)
    failures = [p.exitcode for p in procs if p.exitcode != 0]
    messages = []
    while not errors.empty():
        messages.append(errors.get())
    assert not failures and not messages, messages
    with sqlite3.connect(db) as conn:
        assert conn.execute("PRAGMA user_version").fetchone()[0] == STORE_VERSION


_ROW = "INSERT INTO reports VALUES (?, 1, x'00', x'00', x'00')"
#: Another process: opens the store as SQLite alone does, writes a row and closes it.
_OTHER = "import sqlite3, sys\nc = sqlite3.connect(sys.argv[1], isolation_level=None)\nc.execute(sys.argv[2], ('b',))\nc.close()\n"


@pytest.mark.parametrize("opened", [1, 2])
def test_another_process_closing_the_store_leaves_the_wal_of_one_still_using_it(tmp_path, opened):
    # Each opening made sure the file existed by opening and closing it, which ended every POSIX lock SQLite held
    # on it for the process: the other process, closing, took itself for the last user and deleted the WAL still in
    # use here (two language servers started at once left their store "malformed", its publish set never replayed).
    db = tmp_path / "rt" / STORE_DB
    conns = [store.connect(db) for _ in range(opened)]  # a second one: a scan's beside the index's
    first = conns[0]
    assert first is not None and all(c is not None for c in conns)
    first.execute(_ROW, ("a",))
    wal = db.with_name(db.name + "-wal")
    assert wal.exists()
    subprocess.run([sys.executable, "-c", _OTHER, str(db), _ROW], check=True, timeout=60)
    assert wal.exists(), "the other process deleted the WAL of a store this one has open"
    first.execute(_ROW, ("c",))
    for conn in conns:
        conn.close()
    with sqlite3.connect(db) as conn:
        assert conn.execute("PRAGMA quick_check").fetchone()[0] == "ok"
        assert [k for (k,) in conn.execute("SELECT key FROM reports ORDER BY key")] == ["a", "b", "c"]


def test_a_private_runtime_file_is_made_0600_and_an_existing_one_is_never_opened(tmp_path, monkeypatch):
    made = private_file(tmp_path / "db")
    assert made.is_file() and made.stat().st_mode & 0o777 == 0o600
    made.chmod(0o644)
    opened: list[str] = []  # the files a descriptor was opened on (and so closed after)
    real_open = os.open

    def recording(path, *args, **kwargs):
        fd = real_open(path, *args, **kwargs)
        opened.append(str(path))
        return fd

    monkeypatch.setattr(os, "open", recording)
    try:
        private_file(made)  # an existing file: tightened by its path, not opened
        refused = []
        (tmp_path / "folder").mkdir()
        (tmp_path / "link").symlink_to(made)
        for name in ("folder", "link"):
            try:
                private_file(tmp_path / name)
            except OSError:
                refused.append(name)
    finally:
        monkeypatch.undo()
    assert made.stat().st_mode & 0o777 == 0o600
    assert str(made) not in opened
    assert refused == ["folder", "link"]  # a symlink is never followed, nor a folder taken for a file
