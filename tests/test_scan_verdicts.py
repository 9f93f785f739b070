"""The compact first stages a long-lived caller keeps (:mod:`memzoi.runs.scanverdicts`, the language server's scan):
settled, they give the findings ``judge`` gives on the file's analysis, cold (analysed once, entries and index
rows made, in worker processes from a fork server or here, alike) and warm (from the verdict cache ``memzoi
check`` shares, nothing analysed); a change on disk is noticed by stat; an unreadable file, a failing analysis
and an unusable cache never break a scan."""

from __future__ import annotations

import os
import shutil
import threading
from pathlib import Path

import pytest

from memzoi.base.parallel import can_fork, can_use_helper
from memzoi.base.runtime import STORE_DB
from memzoi.judge.analysis import analyze_path
from memzoi.project.checkpaths import expand
from memzoi.project.gitfacts import GitFacts
from memzoi.project.verdict import ProjectContext, judge, settle
from memzoi.runs import projectstate, scanverdicts
from memzoi.stores import firststage
from memzoi.stores.fileentry import FileEntry

from .test_admission import git, rec

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """The shipped examples (every kind of file), plus records in a git repository."""
    root = tmp_path / "ws"
    shutil.copytree(ROOT / "examples", root, copy_function=shutil.copyfile)
    records = root / ".memzoi/records"
    records.mkdir(parents=True, exist_ok=True)
    for rid in ("alpha", "beta"):
        (records / f"{rid}.md").write_text(rec(rid), encoding="utf-8")
    (records / "broken.md").write_text(rec("broken").replace("lane: semantic", "lane: nope"), encoding="utf-8")
    git(root, "init", "-q")
    git(root, "add", ".")
    git(root, "commit", "-q", "-m", "init")
    return root


def _files(root: Path) -> list[str]:
    out: list[str] = []
    expand(str(root / ".memzoi"), on_file=lambda path, display, inode: out.append(os.path.abspath(path)))
    return out


def _context(root: Path) -> ProjectContext:
    git_ = GitFacts(root)
    files = _files(root)
    git_.ask(files)
    return ProjectContext.of(root / ".memzoi", git=git_)


def _plain(findings) -> list[tuple]:
    return [(f.code, f.message, f.start, f.end, int(f.severity), dict(f.data or {})) for f in findings]


def _judged(path: str, ctx: ProjectContext) -> list[tuple]:
    return _plain(judge(path, analyze_path(path, now=ctx.now, config=ctx.config), ctx).findings)


def _scan(files: list[str], ctx: ProjectContext, cache, root: Path, workers: int = 1) -> list:
    """What the server's scan does: the cache's hits, then every other file analysed once (entries stored)."""
    hits = scanverdicts.cached_stages(files, ctx, cache)
    misses = [p for p, hit in zip(files, hits) if hit is None]
    analysed = iter(list(scanverdicts.analyse(misses, ctx, index_root=root, workers=workers)))
    out = []
    for path, hit in zip(files, hits):
        got = hit if hit is not None else next(analysed)
        if cache is not None and got is not None and getattr(got, "entry", None) is not None:
            cache.store(path, *got.entry)
        out.append(got)
    return out


def test_settled_compact_verdicts_are_judge_cold_and_warm(project: Path, monkeypatch):
    ctx = _context(project)
    files = _files(project)
    assert len(files) >= 5
    cache = scanverdicts.open_cache(project, ctx)
    assert cache is not None
    cold = _scan(files, ctx, cache, project)
    assert all(isinstance(s, FileEntry) for s in cold)  # nothing cached yet: each analysed once
    assert cache.save(complete=True)
    monkeypatch.setattr(firststage, "analyze_bytes", lambda *a, **k: pytest.fail("a cached file was analysed"))
    warm = scanverdicts.cached_stages(files, ctx, scanverdicts.open_cache(project, ctx))
    assert sum(1 for w in warm if w is not None) >= 3  # files the cache never holds (secrets, stale) are None
    for path, c, w in zip(files, cold, warm):
        want = _judged(path, ctx)
        for v in (c.verdict, w):
            if v is None:
                continue
            assert _plain(settle(path, v.first, ctx, text=lambda: Path(path).read_text())) == want, path
            assert v.current() and v.length >= 0 and v.lines().line_count >= 1
        if w is not None:
            assert w.facts == c.verdict.facts and w.starts == c.verdict.starts


def test_a_cold_scan_is_told_before_any_lookup_and_starts_its_workers_fork_server(project: Path, monkeypatch):
    """:func:`scanverdicts.cold_start`: True exactly when the cache vouches for no file (no store yet, none under
    its stamp, or no cache), where :func:`scanverdicts.cached_stages` gives ``None`` for every file, so the scan
    skips the lookups; from :data:`scanverdicts.PARALLEL_THRESHOLD` files on it starts the workers' fork server
    (preloading the module of their function) before the first chunk is sent; never once the store holds entries."""
    from memzoi.base import parallel

    started: list[str] = []
    monkeypatch.setattr(parallel, "start_helper", lambda module: started.append(module) or True)
    ctx = _context(project)
    files = _files(project)
    many = (files * (scanverdicts.PARALLEL_THRESHOLD // len(files) + 1))[: scanverdicts.PARALLEL_THRESHOLD]
    cache = scanverdicts.open_cache(project, ctx)
    assert cache is not None
    assert scanverdicts.cold_start(files, cache) and started == []  # few files: analysed here, no fork server
    assert scanverdicts.cached_stages(files, ctx, cache) == [None] * len(files)
    assert scanverdicts.cold_start(many, cache) and started == ["memzoi.stores.fileentry"]
    assert scanverdicts.cold_start(many, None) and len(started) == 2  # no cache: every file is analysed
    _scan(files, ctx, cache, project)
    assert cache.save(complete=True)
    warm = scanverdicts.open_cache(project, ctx)
    assert not scanverdicts.cold_start(many, warm) and len(started) == 2
    assert any(hit is not None for hit in scanverdicts.cached_stages(files, ctx, warm))
    config = project / ".memzoi/config.toml"
    config.write_text(config.read_text(encoding="utf-8") + '\n[rules]\nseverity = { prompt_injection = "hint" }\n')
    other = _context(project)  # another configuration: another stamp, under which the store holds nothing
    assert scanverdicts.cold_start(many, scanverdicts.open_cache(project, other)) and len(started) == 3


def test_the_scans_index_rows_are_what_rebuild_writes(project: Path, tmp_path: Path):
    """Each analysed record and packet comes with its index row, the one ``memzoi rebuild`` stores for the file
    (both made by the one routine, :func:`memzoi.stores.fileentry.make_entry`); the other files (configuration,
    ledger) with none."""
    from memzoi.stores.index import Index
    from memzoi.stores.index_rows import index_key

    ctx = _context(project)
    files = _files(project)
    scanned = _scan(files, ctx, None, project.resolve())
    with Index(project, path=tmp_path / "rebuilt.db", workers=1) as ix:
        ix.rebuild()
        stored = {r["path"]: dict(r) for r in ix.db.execute("SELECT * FROM files")}
        texts = {r["path"]: dict(r) for t in ("records", "proposals") for r in ix.db.execute(f"SELECT * FROM {t}")}
    rows = 0
    for path, got in zip(files, scanned):
        if got.row is None:
            assert not projectstate.indexed(path)
            continue
        rows += 1
        made = got.row
        assert (made["file"]["size"], made["file"]["mtime_ns"]) == (os.stat(path).st_size, os.stat(path).st_mtime_ns)
        key = made["file"]["path"]
        assert key == index_key(project.resolve(), path)
        expected = stored.pop(key)
        assert made["file"].pop("checked_ns") > 0 and expected.pop("checked_ns") > 0  # the clocks of two reads
        # the checksum made with the row (index_rows.seal) is the one the index stores (index_schema.checksum_sql)
        assert len(expected["checksum"]) == 32
        assert made["file"] == expected
        text = made.get("record") or made.get("proposal")
        assert {k: v for k, v in texts.pop(key).items() if k != "rowid"} == text
    assert rows >= 5 and not stored and not texts


@pytest.mark.skipif(not can_use_helper(), reason="no fork server on this platform")
def test_worker_processes_from_a_fork_server_give_what_this_process_gives(project: Path):
    """The server is threaded, so its workers come from a fork server: their results equal the in-process ones."""
    ctx = _context(project)
    base = _files(project)
    files = (base * (scanverdicts.PARALLEL_THRESHOLD // len(base) + 1))[: scanverdicts.PARALLEL_THRESHOLD + 5]
    stop = threading.Event()
    thread = threading.Thread(target=stop.wait)  # a threaded caller: fork is not allowed, the fork server is
    thread.start()
    try:
        assert not can_fork()
        here = list(scanverdicts.analyse(files, ctx, index_root=project, workers=1))
        there = list(scanverdicts.analyse(files, ctx, index_root=project, workers=2))
    finally:
        stop.set()
        thread.join()
    from multiprocessing import forkserver

    assert forkserver._forkserver._forkserver_pid is not None  # the workers were the fork server's
    assert len(there) == len(files) and all(s is not None for s in there) and any(s.row for s in there)

    def plain(s):
        entry = s.entry and (s.entry[0], s.entry[1], *s.entry[3:])  # not the clock of the read
        row = s.row if s.row else None
        if row is not None:
            row["file"].pop("checked_ns")  # the clock of the read too
        return (s.verdict.path, _plain(s.verdict.first.own), s.verdict.facts, s.verdict.starts, entry, row)

    assert [plain(s) for s in there] == [plain(s) for s in here]


def test_a_changed_file_is_no_longer_current(project: Path):
    ctx = _context(project)
    path = str(project / ".memzoi/records/alpha.md")
    [got] = _scan([path], ctx, None, project)
    assert got.verdict.current()
    Path(path).write_text(Path(path).read_text() + "\nOne more line.\n")
    assert not got.verdict.current()


def test_unreadable_failing_and_uncached_files_never_break_a_scan(project: Path, monkeypatch, tmp_path: Path):
    ctx = _context(project)
    missing = str(project / ".memzoi/records/missing.md")
    alpha = str(project / ".memzoi/records/alpha.md")
    real = firststage.analyze_bytes

    def faulty(data, path=None, **kw):
        if str(path).endswith("beta.md"):
            raise KeyError("boom")
        return real(data, path, **kw)

    monkeypatch.setattr(firststage, "analyze_bytes", faulty)
    beta = str(project / ".memzoi/records/beta.md")
    gone, ok, failed = _scan([missing, alpha, beta], ctx, None, project)
    assert gone is None and ok is not None
    assert [f.code for f in failed.verdict.first.own] == ["internal_error"] and not failed.verdict.current()
    assert failed.entry is None and failed.row is not None  # indexed as refused, as `memzoi rebuild` does
    # A cache database that is not one is replaced; a runtime directory that cannot be written turns it off.
    home = Path(os.environ["MEMZOI_HOME"])
    cache = scanverdicts.open_cache(project, ctx)
    assert cache is not None and cache.save(complete=True) is not None
    for db in home.rglob(STORE_DB):
        db.write_bytes(b"not a database" * 100)
    again = scanverdicts.open_cache(project, ctx)
    assert [s is not None for s in _scan([alpha], ctx, again, project)] == [True]
    monkeypatch.setenv("MEMZOI_HOME", str(tmp_path / "file-not-dir"))
    (tmp_path / "file-not-dir").write_text("")
    off = scanverdicts.open_cache(project, ctx)
    assert off is None or off.save(complete=True) in (True, False)
    assert _scan([alpha], ctx, off, project)[0] is not None


def test_plain_lines_place_a_compact_verdict_s_findings_as_its_text_does(project: Path):
    """A closed file's findings are placed without reading its text only where its line starts give each position
    in every encoding (``FirstStage.plain_lines``): ASCII text, offsets inside their lines (issue 29, warm start)."""
    from memzoi_lsp.convert import TextMap, placer
    from tests import builders

    records = project / ".memzoi/records"
    text = builders.record("gamma", extra="colour: blue\n")
    (records / "gamma.md").write_text(text, encoding="utf-8")  # ASCII: placed from its line starts
    (records / "crlf.md").write_bytes(builders.record("crlf", extra="colour: blue\n").replace("\n", "\r\n").encode())
    (records / "accent.md").write_text(
        builders.record("accent", extra="colour: blue\n", title="Café"), encoding="utf-8"
    )
    raw = builders.record("raw", extra="colour: blue\n").encode()
    (records / "raw.md").write_bytes(raw.replace(b"colour", b"col\xffur"))  # as many code points as bytes, not ASCII
    ctx = _context(project)
    files = _files(project)
    plain = {}
    for path, got in zip(files, _scan(files, ctx, None, project)):
        stage = got.verdict
        data = Path(path).read_bytes()
        body = data.decode("utf-8", errors="replace")
        found = settle(path, stage.first, ctx, text=lambda: body)
        offsets = [o for f in found for o in (f.start, max(f.start, f.end))]
        lines = stage.plain_lines(offsets)
        plain[os.path.basename(path)] = (lines is not None, len(offsets), stage.length == len(data))
        if lines is None:
            continue
        assert body.isascii() and len(body) == len(data)
        for encoding in ("utf-8", "utf-16", "utf-32"):
            want = TextMap(body, encoding)
            assert [placer(lines, encoding)(o) for o in offsets] == [want.place(o) for o in offsets], path
    assert plain["gamma.md"][:2] == (True, 2) and plain["crlf.md"][:2] == (True, 2)  # the unknown key
    assert not plain["accent.md"][0]
    assert plain["raw.md"] == (False, 4, True)  # and its invalid_encoding: as long as its bytes, yet not ASCII


def test_a_stage_without_revision_is_the_same_stage_and_hashes_nothing(project: Path, monkeypatch):
    """``make_entry(revision=False)`` (``memzoi check --no-cache``'s workers) gives the stage of the plain call,
    field for field, with an empty ``revision``, and takes no BLAKE3 digest of the file's bytes; with a store
    entry or search rows asked for, the flag changes nothing."""
    import dataclasses
    import types

    from memzoi.judge.workspace import place
    from memzoi.stores import fileentry

    ctx = _context(project)
    files = _files(project)
    plain = {p: fileentry.make_entry(p, place(p), ctx, {}, None, entry=False) for p in files}
    with_entry = {p: fileentry.make_entry(p, place(p), ctx, {}, None, entry=True, revision=False) for p in files}

    class NoHash:
        def __init__(self, *a: object) -> None:
            pytest.fail("a file's bytes were hashed")

    monkeypatch.setattr(fileentry, "blake3", types.SimpleNamespace(blake3=NoHash))  # this module's hashing only
    for path in files:
        bare = fileentry.make_entry(path, place(path), ctx, {}, None, entry=False, revision=False)
        want = plain[path].verdict
        assert want.revision and bare.verdict.revision == ""
        assert dataclasses.replace(bare.verdict, revision=want.revision) == want, path
        assert bare.entry is None and bare.row is None
        assert with_entry[path].verdict.revision == want.revision, path


def test_a_files_entry_and_rows_run_no_import_statement_once_loaded(project: Path, monkeypatch):
    """A worker makes every file's store entry and search rows without an import statement per file (each cost
    about 1 µs: two in the payload, one for the rows, at every file of a cold scan): the lazily imported functions
    and names are kept after their first use (``verdictpayload._kept_out``, ``fileentry._index_row``)."""
    import builtins
    import sys

    from memzoi.stores import fileentry

    files = _files(project)
    jobs = [(p, "tracked") for p in files]
    made = fileentry.entry_chunk(jobs, now=None, root=str(project))  # loads what the entries and rows need
    assert any(m is not None and m.entry is not None and m.entry[3] for m in made)  # payloads were made
    assert any(m is not None and m.row is not None for m in made)  # and rows
    per_file = ("make_payload", "facts_only", "_row", "make_entry")
    seen: list[str] = []
    real = builtins.__import__

    def counting(name, globals=None, locals=None, fromlist=(), level=0):
        caller = sys._getframe(1).f_code
        if "memzoi/stores/" in caller.co_filename.replace(os.sep, "/") and caller.co_name in per_file:
            seen.append(f"{caller.co_name}: {name}")
        return real(name, globals, locals, fromlist, level)

    monkeypatch.setattr(builtins, "__import__", counting)
    again = fileentry.entry_chunk(jobs, now=None, root=str(project))
    monkeypatch.undo()

    def keys(out: list) -> list:
        return [m.row["file"]["path"] if m is not None and m.row is not None else None for m in out]

    assert keys(again) == keys(made)
    assert seen == []
