"""The index refresh's memory (issue 29: the language server's peak RSS, ≤ 120 MB at 10,000 records; the refresh
after its scan is the peak): the stored stamps are compared with the listing a row at a time in key order and none
is held after its comparison (:func:`memzoi.stores.index_fresh.stale`), where a dict of them cost some 300 bytes
a row. Measured with ``tracemalloc`` (Python's allocations, not the process's RSS: the same figure at every run)."""

from __future__ import annotations

import sqlite3
import time
import tracemalloc
from pathlib import Path

import pytest

from memzoi.base import freshness
from memzoi.stores import index_fresh, storedstamps
from memzoi.stores.planelisting import Listing

N = 5000
DAY = 86_400 * 10**9


def _index(root: Path, now: int) -> tuple[sqlite3.Connection, Listing]:
    """An index's ``files`` and ``meta`` tables of :data:`N` rows whose stamps vouch, and the listing of the same
    files with the same stamps (nothing to re-index, drop or restamp)."""
    db = sqlite3.connect(":memory:", isolation_level=None)
    db.execute("CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT NOT NULL)")
    db.execute(f"CREATE TABLE files(path TEXT PRIMARY KEY, {storedstamps.ROW})")
    listing = Listing(str(root), dev=1)
    rows = []
    for i in range(N):
        key = f".memzoi/records/2026/{i % 50:02d}/record-{i:05d}.md"
        stamp = (100 + i, now - 3 * DAY, 10_000 + i, now - 3 * DAY + 10**9)
        listing.stamps[key] = stamp
        rows.append((key, *stamp, now - 10 * 10**9, "00" * 32))
    db.executemany("INSERT INTO files VALUES (?, ?, ?, ?, ?, ?, ?)", rows)
    db.execute("INSERT INTO meta VALUES ('git', ?)", (index_fresh.git_state(root, listing.folders),))
    return db, listing


def test_the_stored_stamps_are_compared_without_being_held(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(storedstamps, "_KEPT", None)  # no kept copy (the MCP server's): read from the database
    monkeypatch.setattr(freshness, "SAMPLE_SHARE", 0)
    monkeypatch.setattr(freshness, "fs_type", lambda dev: "ext4")
    root = tmp_path / "proj"
    root.mkdir()
    db, listing = _index(root, time.time_ns())
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        tracemalloc.reset_peak()
        plan = index_fresh.stale(db, root, listing)
        peak = tracemalloc.get_traced_memory()[1] - before
    finally:
        tracemalloc.stop()
        db.close()
    assert (plan.changed, plan.gone, plan.restamp, plan.git_changed) == ([], [], [], False)
    # the listing's keys sorted (8 bytes each) and a row at a time: well below 40 bytes a row
    assert peak < N * 40, f"the refresh held {peak / N:.0f} bytes per stored row"
