"""The compact first stages a long-lived caller keeps (:mod:`memzoi.scanverdicts`, the language server's scan):
settled, they give the findings ``judge`` gives on the file's analysis, cold (analysed, entries made) and warm
(from the verdict cache ``memzoi check`` shares, nothing analysed); a change on disk is noticed by stat; an
unreadable file, a failing analysis and an unusable cache never break a scan."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from memzoi import scanverdicts
from memzoi.analysis import analyze_path
from memzoi.checkpaths import expand
from memzoi.gitfacts import GitFacts
from memzoi.runtime import CACHE_DB
from memzoi.verdict import ProjectContext, judge, settle

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


def test_settled_compact_verdicts_are_judge_cold_and_warm(project: Path, monkeypatch):
    ctx = _context(project)
    files = _files(project)
    assert len(files) >= 5
    cache = scanverdicts.open_cache(project, ctx)
    assert cache is not None
    cold = scanverdicts.first_stages(files, ctx, cache)
    assert all(s is not None and s.analysis is not None for s in cold)  # nothing cached yet: each analysed once
    assert cache.save(complete=True)
    monkeypatch.setattr(scanverdicts, "analyze_bytes", lambda *a, **k: pytest.fail("a cached file was analysed"))
    cached = {s.verdict.path for s in cold if s.analysis is not None and s.digest}
    warm_cache = scanverdicts.open_cache(project, ctx)
    warm = []
    for path in files:  # files the cache never holds (secrets, stale attestations) would be analysed: skip them
        got = scanverdicts.first_stages([path], ctx, warm_cache) if warm_cache.lookup(path) else [None]
        warm.append(got[0])
    assert sum(1 for w in warm if w is not None) >= 3
    for path, c, w in zip(files, cold, warm):
        want = _judged(path, ctx)
        for got in (c, w):
            if got is None:
                continue
            v = got.verdict
            assert _plain(settle(path, v.first, ctx, text=lambda: Path(path).read_text())) == want, path
            assert v.current() and v.length >= 0 and v.lines().line_count >= 1
        if w is not None:
            assert w.analysis is None and w.verdict.facts == c.verdict.facts and w.verdict.starts == c.verdict.starts
    assert cached


def test_a_changed_file_is_no_longer_current(project: Path):
    ctx = _context(project)
    path = str(project / ".memzoi/records/alpha.md")
    [got] = scanverdicts.first_stages([path], ctx, None)
    assert got.verdict.current()
    Path(path).write_text(Path(path).read_text() + "\nOne more line.\n")
    assert not got.verdict.current()


def test_unreadable_failing_and_uncached_files_never_break_a_scan(project: Path, monkeypatch, tmp_path: Path):
    ctx = _context(project)
    missing = str(project / ".memzoi/records/missing.md")
    alpha = str(project / ".memzoi/records/alpha.md")
    real = scanverdicts.analyze_bytes

    def faulty(data, path=None, **kw):
        if str(path).endswith("beta.md"):
            raise KeyError("boom")
        return real(data, path, **kw)

    monkeypatch.setattr(scanverdicts, "analyze_bytes", faulty)
    beta = str(project / ".memzoi/records/beta.md")
    gone, ok, failed = scanverdicts.first_stages([missing, alpha, beta], ctx, None)
    assert gone is None and ok is not None
    assert [f.code for f in failed.verdict.first.own] == ["internal_error"] and not failed.verdict.current()
    # A cache database that is not one is replaced; a runtime directory that cannot be written turns it off.
    home = Path(os.environ["MEMZOI_HOME"])
    cache = scanverdicts.open_cache(project, ctx)
    assert cache is not None and cache.save(complete=True) is not None
    for db in home.rglob(CACHE_DB):
        db.write_bytes(b"not a database" * 100)
    again = scanverdicts.open_cache(project, ctx)
    assert [s is not None for s in scanverdicts.first_stages([alpha], ctx, again)] == [True]
    monkeypatch.setenv("MEMZOI_HOME", str(tmp_path / "file-not-dir"))
    (tmp_path / "file-not-dir").write_text("")
    off = scanverdicts.open_cache(project, ctx)
    assert off is None or off.save(complete=True) in (True, False)
    assert scanverdicts.first_stages([alpha], ctx, off)[0] is not None
