"""The verdict cache as the server's scan reads it (:meth:`memzoi.stores.verdictcache.ProjectCache.prefetch`, issue 29:
lean memory): a chunk of entries at a time, never the whole table, with the answers, writes and drops of the
cache ``memzoi check`` loads whole; a scan that changed nothing writes nothing."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from memzoi.base import freshness
from memzoi.runs import scanverdicts
from memzoi.stores import verdictcache
from memzoi.stores.verdictcache import ProjectCache, path_key

from .test_scan_verdicts import _context, _files, _scan, project  # noqa: F401 - the fixture


def _stored(cache: ProjectCache) -> set[str]:
    """The entry keys stored under ``cache``'s stamp."""
    conn = sqlite3.connect(cache.db)
    try:
        return {r[0] for r in conn.execute("SELECT key FROM entries WHERE ctx = ?", (cache.stamp,))}
    finally:
        conn.close()


def _opened(project: Path, ctx: object) -> ProjectCache:  # noqa: F811 - the fixture's name
    cache = scanverdicts.open_cache(project, ctx)  # type: ignore[arg-type]
    assert cache is not None and cache.rows == {} and not cache.whole  # nothing read when it opens
    return cache


def _warm(project: Path) -> tuple[list[str], object]:  # noqa: F811 - the fixture's name
    ctx = _context(project)
    files = _files(project)
    cache = _opened(project, ctx)
    _scan(files, ctx, cache, project)
    assert cache.save(complete=True)
    return files, ctx


def test_chunked_reads_answer_as_the_whole_load(project: Path):  # noqa: F811
    files, ctx = _warm(project)
    whole = ProjectCache.load(project, ctx.config)
    chunked = _opened(project, ctx)
    assert whole is not None and whole.whole
    chunked.prefetch([path_key(p) for p in files[:2]])
    assert len(chunked.rows) <= 2
    for path in files:  # the first two prefetched, the others read alone
        assert chunked.lookup(path) == whole.lookup(path), path
    assert len(chunked.rows) <= 2  # no file's entry kept beyond its chunk
    chunked.prefetch([path_key(files[-1])])
    assert list(chunked.vouching) == []  # nor a vouching answer beyond it (the scan takes its stat at once)
    chunked.close()


def test_a_scan_that_changed_nothing_writes_nothing(project: Path, monkeypatch):  # noqa: F811
    files, ctx = _warm(project)
    # The stat vouches for every file (no racy window just after the fixture wrote them, no re-hash drawn), so this
    # run re-stamps nothing.
    monkeypatch.setattr(freshness, "not_racy", lambda *a: True)
    monkeypatch.setattr(freshness, "due", lambda *a: False)
    cache = _opened(project, ctx)
    before = _stored(cache)
    hits = scanverdicts.cached_stages(files, ctx, cache)
    assert any(h is not None for h in hits)
    conn = sqlite3.connect(cache.db)
    version = conn.execute("PRAGMA data_version").fetchone()[0]
    assert cache.save(complete=True)
    assert conn.execute("PRAGMA data_version").fetchone()[0] == version  # no other connection wrote
    conn.close()
    assert _stored(cache) == before


def test_a_complete_chunked_save_drops_what_it_did_not_see(project: Path):  # noqa: F811
    files, ctx = _warm(project)
    cache = _opened(project, ctx)
    keys = _stored(cache)
    whole = ProjectCache.load(project, ctx.config)
    assert whole is not None
    seen = [p for p in files if whole.lookup(p) is not None]
    assert len(seen) >= 3
    missing = seen[0]
    Path(missing).unlink()
    scanverdicts.cached_stages([p for p in files if p != missing], ctx, cache)
    assert cache.save(complete=True)
    after = _stored(cache)
    assert len(after) == len(keys) - 1 and after < keys and path_key(missing) not in after
    whole = ProjectCache.load(project, ctx.config)
    assert whole is not None and whole.facts_of(missing) is None
    assert all(whole.lookup(p) == _opened(project, ctx).lookup(p) for p in files if p != missing)


def test_a_scan_that_only_rehashed_writes_the_new_stats(project: Path, monkeypatch):  # noqa: F811
    """Entries confirmed by their hash (drawn for a re-hash) are kept under their new read clock, each still
    answering as before."""
    files, ctx = _warm(project)
    monkeypatch.setattr(freshness, "due", lambda *a: True)  # every entry drawn for a re-hash
    cache = _opened(project, ctx)
    conn = sqlite3.connect(cache.db)
    checked = dict(conn.execute("SELECT key, checked_ns FROM entries WHERE ctx = ?", (cache.stamp,)).fetchall())
    hits = scanverdicts.cached_stages(files, ctx, cache)
    restamped = set(cache.put)
    assert sum(1 for h in hits if h is not None) >= 3 and restamped
    assert cache.save(complete=True)
    after = dict(conn.execute("SELECT key, checked_ns FROM entries WHERE ctx = ?", (cache.stamp,)).fetchall())
    conn.close()
    assert after.keys() == checked.keys() and all(after[k] > checked[k] for k in restamped)
    monkeypatch.setattr(freshness, "due", lambda *a: False)
    again = ProjectCache.load(project, ctx.config)
    assert again is not None and all(again.lookup(p) is not None for p in files if path_key(p) in restamped)


def test_a_first_scan_writes_its_entries_as_they_come(project: Path, monkeypatch):  # noqa: F811
    """New entries are written in batches during the scan, not held to the end."""
    monkeypatch.setattr(verdictcache, "FLUSH_AT", 2)
    ctx = _context(project)
    files = _files(project)
    cache = _opened(project, ctx)
    _scan(files, ctx, cache, project)
    assert len(cache.put) < 2  # the others are in the store already
    written = _stored(cache)
    assert len(written) >= 3
    assert cache.save(complete=True)
    whole = ProjectCache.load(project, ctx.config)
    assert whole is not None
    assert all(whole.lookup(p) is not None for p in files if path_key(p) in written)


def test_a_cache_found_empty_is_whole_and_its_save_reads_no_key_back(project: Path):  # noqa: F811
    """A cold scan's cache (the store holds nothing under its stamp) knows every entry there is: it notes no key it
    sees, and its complete save reads none back (issue 29: the end of a cold scan); an entry another process wrote
    meanwhile is kept."""
    ctx = _context(project)
    files = _files(project)
    cache = _opened(project, ctx)
    assert cache.holds_none() and cache.whole
    other, mine = files[0], files[1:]
    _scan(mine, ctx, cache, project)
    assert cache.seen == set()
    checker = ProjectCache.load(project, ctx.config)  # another process (a check) writes the entry of `other`
    assert checker is not None
    _scan([other], ctx, checker, project)
    assert checker.save()
    assert cache.conn is not None
    statements: list[str] = []
    cache.conn.set_trace_callback(statements.append)
    assert cache.save(complete=True)
    assert not [q for q in statements if q.lstrip().upper().startswith("SELECT KEY FROM ENTRIES")], statements
    assert {path_key(p) for p in files} <= _stored(cache)
