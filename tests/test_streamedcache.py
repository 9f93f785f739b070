"""The verdict cache as the server's scan reads it (:class:`memzoi.stores.streamedcache.StreamedCache`, issue 29:
lean memory): a chunk of entries at a time, never the whole table, with the answers, writes and drops of the
cache ``memzoi check`` loads whole; a scan that changed nothing reads and writes neither entries nor blob."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from memzoi.base import freshness
from memzoi.runs import scanverdicts
from memzoi.stores.streamedcache import StreamedCache
from memzoi.stores.verdictcache import ProjectCache, path_key

from .test_scan_verdicts import _context, _files, _scan, project  # noqa: F401 - the fixture


def _stored(cache: ProjectCache) -> tuple[set[str], str | None]:
    """The entry keys and the facts blob's text stored under ``cache``'s stamp."""
    conn = sqlite3.connect(cache.db)
    try:
        keys = {r[0] for r in conn.execute("SELECT key FROM entries WHERE ctx = ?", (cache.stamp,))}
        blob = conn.execute("SELECT blob FROM facts WHERE ctx = ?", (cache.stamp,)).fetchone()
    finally:
        conn.close()
    return keys, blob[0] if blob else None


def _warm(project: Path) -> tuple[list[str], object]:  # noqa: F811 - the fixture's name
    ctx = _context(project)
    files = _files(project)
    cache = scanverdicts.open_cache(project, ctx)
    assert isinstance(cache, StreamedCache)
    _scan(files, ctx, cache, project)
    assert cache.save(complete=True)
    assert _stored(cache)[1] is None  # the server's first scan makes no blob (entries written as they came)
    whole = ProjectCache.load(project, ctx.config)  # as `memzoi check` loads it: it makes the blob
    assert whole is not None and whole.save()
    assert _stored(whole)[1] is not None
    return files, ctx


def test_streamed_reads_answer_as_the_whole_load(project: Path):  # noqa: F811
    files, ctx = _warm(project)
    whole = ProjectCache.load(project, ctx.config)
    streamed = StreamedCache.open(project, ctx.config)
    assert whole is not None and streamed is not None
    assert streamed.rows == {}  # nothing read when it opens
    streamed.prefetch(files[:2])
    assert len(streamed.rows) <= 2
    for path in files:  # the first two prefetched, the others read alone
        assert streamed.lookup(path) == whole.lookup(path), path
    # no file's entry kept beyond its chunk, and no vouching beyond the last lookup's (the scan takes its stat at once)
    assert len(streamed.rows) <= 2 and list(streamed.vouching) == [files[-1]]
    streamed.close()


def test_a_scan_that_changed_nothing_writes_nothing(project: Path, monkeypatch):  # noqa: F811
    files, ctx = _warm(project)
    # The stat vouches for every file (no racy window just after the fixture wrote them, no re-hash drawn), so this
    # run re-stamps nothing.
    monkeypatch.setattr(freshness, "not_racy", lambda *a: True)
    monkeypatch.setattr(freshness, "due", lambda *a: False)
    cache = scanverdicts.open_cache(project, ctx)
    assert isinstance(cache, StreamedCache)
    before = _stored(cache)
    assert before[1] is not None
    hits = scanverdicts.cached_stages(files, ctx, cache)
    assert any(h is not None for h in hits)
    conn = sqlite3.connect(cache.db)
    version = conn.execute("PRAGMA data_version").fetchone()[0]
    assert cache.save(complete=True)
    assert conn.execute("PRAGMA data_version").fetchone()[0] == version  # no other connection wrote
    conn.close()
    assert _stored(cache) == before and cache.blob is None  # the blob was not even read


def test_a_complete_streamed_save_drops_what_it_did_not_see(project: Path):  # noqa: F811
    files, ctx = _warm(project)
    cache = scanverdicts.open_cache(project, ctx)
    assert isinstance(cache, StreamedCache)
    keys, blob = _stored(cache)
    whole = ProjectCache.load(project, ctx.config)
    assert whole is not None
    seen = [p for p in files if whole.lookup(p) is not None]
    assert len(seen) >= 3
    missing = seen[0]
    Path(missing).unlink()
    scanverdicts.cached_stages([p for p in files if p != missing], ctx, cache)
    assert cache.save(complete=True)
    after, blob_after = _stored(cache)
    assert len(after) == len(keys) - 1 and after < keys
    assert blob_after is not None and blob_after != blob  # the blob lost the file's facts too
    whole = ProjectCache.load(project, ctx.config)
    assert whole is not None and whole.blob is not None and path_key(missing) not in whole.blob
    assert all(whole.lookup(p) == StreamedCache.open(project, ctx.config).lookup(p) for p in files if p != missing)


def test_a_scan_that_only_rehashed_keeps_the_blob(project: Path, monkeypatch):  # noqa: F811
    """Entries confirmed by their hash (drawn for a re-hash) are kept under their new stat; the blob is neither
    read nor rewritten for that alone."""
    files, ctx = _warm(project)
    monkeypatch.setattr(freshness, "due", lambda *a: True)  # every entry drawn for a re-hash
    cache = scanverdicts.open_cache(project, ctx)
    assert isinstance(cache, StreamedCache)
    _, blob = _stored(cache)
    conn = sqlite3.connect(cache.db)
    checked = dict(conn.execute("SELECT key, checked_ns FROM entries WHERE ctx = ?", (cache.stamp,)).fetchall())
    hits = scanverdicts.cached_stages(files, ctx, cache)
    assert sum(1 for h in hits if h is not None) >= 3 and cache.restamped
    assert cache.save(complete=True)
    after = dict(conn.execute("SELECT key, checked_ns FROM entries WHERE ctx = ?", (cache.stamp,)).fetchall())
    conn.close()
    assert after.keys() == checked.keys() and any(after[k] > checked[k] for k in cache.put)
    assert _stored(cache)[1] == blob and cache.blob is None


def test_a_first_scan_writes_its_entries_as_they_come(project: Path, monkeypatch):  # noqa: F811
    """With no blob stored, new entries are written in batches during the scan, not held to the end."""
    from memzoi.stores import streamedcache

    monkeypatch.setattr(streamedcache, "FLUSH_AT", 2)
    ctx = _context(project)
    files = _files(project)
    cache = scanverdicts.open_cache(project, ctx)
    assert isinstance(cache, StreamedCache) and not cache.has_blob
    _scan(files, ctx, cache, project)
    assert len(cache.put) < 2  # the others are in the store already
    written, _ = _stored(cache)
    assert len(written) >= 3
    assert cache.save(complete=True)
    whole = ProjectCache.load(project, ctx.config)
    assert whole is not None
    assert all(whole.lookup(p) is not None for p in files if path_key(p) in written)
