"""Opening a fresh store from many processes at once (issue 29): every process gets a usable index and store
entries from the one database; none fails with "table meta already exists" (the schema is checked again under the
write lock)."""

from __future__ import annotations

import multiprocessing
import sqlite3
from pathlib import Path

import pytest

from memzoi.base.runtime import STORE_DB
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
