"""Opening a fresh store from many processes at once (issue 29): every process gets a usable index and store
entries from the one database; none fails with "table meta already exists" (the schema is checked again under the
write lock). A process that opens the store again stays one of its users for the others (SQLite's locks are kept),
and the runtime files are made private without being opened once they exist."""

from __future__ import annotations

import contextlib
import multiprocessing
import os
import sqlite3
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from memzoi.base.runtime import STORE_DB, private_file
from memzoi.ledger.store import Ledger
from memzoi.resident import candidates
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


#: Another process: opens the database as SQLite alone does, writes a row and closes it.
_OTHER = (
    "import sqlite3, sys\nc = sqlite3.connect(sys.argv[1], isolation_level=None)\n"
    "c.execute(\"INSERT INTO probe VALUES ('b')\")\nc.close()\n"
)


def _store(path: Path) -> contextlib.AbstractContextManager[sqlite3.Connection]:
    conn = store.connect(path)
    assert conn is not None
    return contextlib.closing(conn)


#: How each of the runtime plane's databases is opened (each made sure its file existed with private_file).
OPENERS: dict[str, Callable[[Path], contextlib.AbstractContextManager[sqlite3.Connection]]] = {
    "store": _store,
    "ledger": lambda path: Ledger(path).connect(),
    "resident": lambda path: candidates.connect(path),
}


@pytest.mark.parametrize("kind", sorted(OPENERS))
@pytest.mark.parametrize("opened", [1, 2])
def test_another_process_closing_a_database_leaves_the_wal_of_one_still_using_it(tmp_path, kind, opened):
    # Each opening made sure the file existed by opening and closing it, which ended every POSIX lock SQLite held
    # on it for the process: the other process, closing, took itself for the last user and deleted the WAL still in
    # use here (two language servers started at once left their store "malformed", its publish set never replayed).
    db = tmp_path / "rt" / "probe.db"
    db.parent.mkdir()
    wal = db.with_name(db.name + "-wal")
    with contextlib.ExitStack() as stack:
        conns = [stack.enter_context(OPENERS[kind](db)) for _ in range(opened)]  # a second: a scan's beside the index's
        first = conns[0]
        first.execute("CREATE TABLE probe (k TEXT)")
        first.execute("INSERT INTO probe VALUES ('a')")
        assert wal.exists()
        subprocess.run([sys.executable, "-c", _OTHER, str(db)], check=True, timeout=60)
        assert wal.exists(), "the other process deleted the WAL of a database this one has open"
        first.execute("INSERT INTO probe VALUES ('c')")
    with contextlib.closing(sqlite3.connect(db)) as conn:
        assert conn.execute("PRAGMA quick_check").fetchone()[0] == "ok"
        assert [k for (k,) in conn.execute("SELECT k FROM probe ORDER BY k")] == ["a", "b", "c"]


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
