"""Checking paths: expand command-line paths into Memzoi files (:mod:`memzoi.checkpaths`), analyse each, and collect
located findings.

Shared by ``memzoi check`` and the language server's "check workspace" command. One unreadable or malformed
file never stops the others. From :data:`PARALLEL_THRESHOLD` files on, a single-threaded caller (the CLI)
analyses in forked worker processes (:mod:`memzoi.parallel`), which start while the walk is still finding files
and return each file's first stage (:mod:`memzoi.checkfiles`). Results are identical either way.

With the verdict cache (:mod:`memzoi.verdictcache`, on unless ``cache=False``), a file whose bytes have an entry
is not analysed (nor, when stat vouches for it, read): the first stage of its verdict comes from the entry. The
second stage (git visibility, ledger, cross-file findings, grading) runs here for every file, cached or not.
"""

from __future__ import annotations

import functools
import gc
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .admission import GitVisibility, git_visibility, opening_span
from .checkfiles import FileResult, check_chunk, from_entry

# Re-exported (also imported from here).
from .checkpaths import (
    Expanded as Expanded,
)
from .checkpaths import (
    UsageError as UsageError,
)
from .checkpaths import (
    expand as expand,
)
from .checkpaths import (
    require_exists as require_exists,
)
from .clock import utc_now
from .config import load_config
from .crosscheck import CrossFileCheck
from .filefacts import FileFacts
from .findings import Finding, finding
from .gitfacts import GitFacts
from .ledger.view import LedgerView
from .parallel import ChunkPool, cpu_count
from .pathsafety import shown_path
from .text import LineIndex
from .verdict import Local, ProjectContext, settle
from .verdictcache import ProjectCache, path_key
from .verdictpayload import stored_facts
from .workspace import find_project_root, place

#: From this many files on, ``check_paths`` analyses in worker processes when it may fork (below it, starting
#: the workers costs more than it saves).
PARALLEL_THRESHOLD = 300
#: Files per unit of work sent to a worker: small enough to keep both cores busy to the end.
CHUNK = 64


@dataclass(frozen=True, slots=True)
class Located:
    """A finding with the display path of its file and 0-based ``(line, character)`` start and end, where
    characters are code points."""

    path: str
    finding: Finding
    start: tuple[int, int]
    end: tuple[int, int]


@dataclass
class CheckReport:
    """Result of :func:`check_paths`: findings sorted by path and position, what was looked at, and the
    ``.memzoi`` directories the checked files belong to (as found above each path) or whose ``config.toml`` was
    given; the caller reports their configuration errors."""

    findings: list[Located] = field(default_factory=list)
    files_checked: int = 0
    skipped: list[tuple[str, str]] = field(default_factory=list)  # (display path, reason)
    memzoi_dirs: set[Path] = field(default_factory=set)

    @property
    def has_errors(self) -> bool:
        """True when any finding has error severity (``memzoi check`` then exits 1)."""
        return any(l.finding.severity == 1 for l in self.findings)


def _project_context(md: str, visibility: dict[str, GitVisibility]) -> ProjectContext:
    """The context of the second stage for the project of ``md``: its rules, the visibility git gave for its
    files, and its ledger (read, never created)."""
    root = os.path.dirname(md)
    git = GitFacts(root, history=False)  # the workers explained stale attestations already
    git.set_visibility(visibility)
    return ProjectContext.of(md, git=git, ledger=LedgerView(Path(root), live=False))  # read once per run


def check_text(data: bytes, filename: str | None) -> CheckReport:
    """Check one file's bytes read from elsewhere (``memzoi check -``, an editor buffer): ``filename`` places it
    (a record, a proposal packet, …) and names it in the findings, and its project's ``[rules]`` apply. The
    file's own findings only: cross-file and git findings need the file on disk."""
    path = os.path.abspath(filename) if filename else None
    if path is not None and path.endswith(".md"):
        from .resident.editor import check_file  # a resident file is checked as the editor does

        resident = check_file(Path(path), data)
        if resident is not None:
            text, found = resident
            index = LineIndex(text)
            report = CheckReport(files_checked=1)
            report.findings = [Located(shown_path(filename), f, index.position(f.start), index.position(f.end))
                               for f in found]
            return report
    from .analysis import analyze_bytes

    placement = place(path) if path else place("-")
    ctx = ProjectContext.of(placement.memzoi_dir)  # no git and no ledger facts: the text is not on disk
    analysis = analyze_bytes(data, path, placement=placement, config=ctx.config)
    first = Local(list(analysis.findings), placement.role, opening_span(analysis), False)
    found = settle(path, first, ctx, text=analysis.text)
    index = LineIndex(analysis.text)
    report = CheckReport(files_checked=1, memzoi_dirs={Path(ctx.memzoi_dir)} if ctx.memzoi_dir else set())
    shown = shown_path(filename) if filename else "-"
    report.findings = [Located(shown, f, index.position(f.start), index.position(f.end)) for f in found]
    return report


def _resident(arg: str, report: CheckReport) -> bool:
    """Check ``arg`` as a Zuno resident file (``.zuno/RULES.md``, the global ``MEMORY.md``) when it is one, with
    the findings the editor shows (cap, drift, threats, hand edits) instead of a record's; True when it was."""
    if not arg.endswith(".md") or os.path.isdir(arg) or os.path.islink(arg):
        return False
    from .resident.scope import which_file

    # Which files are resident is asked of the light scope module first: the editor's findings (threats, YAML,
    # candidates) load only for such a file, not for every record given by name.
    where = which_file(Path(os.path.abspath(arg)), [find_project_root(Path.cwd())])
    if where is None:
        return False
    from .resident.editor import check_file

    shown = shown_path(arg)
    try:
        checked = check_file(Path(arg), where=where)
    except OSError as err:
        report.files_checked += 1
        report.findings.append(Located(shown, finding(
            "canonical_path", f"cannot read the file: {err.strerror}; check that it exists and is readable", 0, 0),
            (0, 0), (0, 0)))
        return True
    if checked is None:
        return False
    text, found = checked
    index = LineIndex(text)
    report.files_checked += 1
    report.findings.extend(Located(shown, f, index.position(f.start), index.position(f.end)) for f in found)
    return True


def check_paths(args: list[str], *, workers: int | None = None,
                progress: Callable[[int, int], None] | None = None, cache: bool = True) -> CheckReport:
    """Check every file under ``args`` (see :func:`expand`). Raises :class:`UsageError` for a missing path.

    ``workers``: analysis processes (default one per CPU, at most 8; 1 = in this process). Workers are only used
    from :data:`PARALLEL_THRESHOLD` files on and where :func:`memzoi.parallel.can_fork` allows; they start
    analysing while the paths are still being walked. ``progress(done, total)`` is called as files are finished.
    ``cache``: use and update each project's verdict cache (:mod:`memzoi.verdictcache`); the report is the same
    without it.
    """
    for arg in args:  # a missing path is a usage error before any work starts
        require_exists(arg)
    # A run keeps a few objects per file (facts, findings, entries) and makes no reference cycles, so the cyclic
    # collector only rescans them, again and again as they accumulate (a fifth of a warm run's CPU at 11,000
    # files); reference counting frees everything meanwhile.
    collecting = gc.isenabled()
    gc.disable()
    try:
        return _check_paths(args, workers, progress, cache)
    finally:
        if collecting:
            gc.enable()


def _check_paths(args: list[str], workers: int | None, progress: Callable[[int, int], None] | None,
                 cache: bool) -> CheckReport:
    report = CheckReport()
    n = min(cpu_count(), 8) if workers is None else workers
    now = utc_now()
    pool: ChunkPool[tuple[str, str], FileResult] = ChunkPool(
        functools.partial(check_chunk, now, cache=cache), workers=n, chunksize=CHUNK, start_at=PARALLEL_THRESHOLD)
    caches: dict[str, ProjectCache | None] = {}  # .memzoi directory -> its verdict cache (None: unusable)
    # Every file in the order found: a cache hit (display, path, .memzoi directory, payload), or None for the
    # pool's next result; the order of the report's input stays the walk's either way.
    slots: list[tuple[str, str, str, str] | None] = []
    # The same file reached twice (overlapping arguments, a symlinked folder) is checked once. Hard links are
    # distinct files to Memzoi (each path is a record), so an inode seen before is compared by real path.
    seen: dict[tuple[int, int] | str, list[str]] = {}  # inode (or path) -> paths checked with it
    groups: dict[str, list[str]] = {}  # .memzoi directory -> its files
    folders: dict[str, str | None] = {}  # the .memzoi directory above each folder
    total = [0]  # files handed to the pool
    # A check of a few files (an editor's save hook, pre-commit) reads only their entries; the facts of the
    # project's other files come from its facts blob (memzoi.verdictfacts).
    few = [path_key(os.path.abspath(a)) for a in args] if len(args) < PARALLEL_THRESHOLD and all(
        os.path.isfile(a) for a in args) else None

    def add(path: str, display: str, inode: tuple[int, int] | None) -> None:
        key: tuple[int, int] | str
        if inode is not None:
            key = inode
        else:
            try:
                st = os.stat(path)
                key = (st.st_dev, st.st_ino)
            except OSError:
                key = path  # the analysis reports why it cannot be read
        earlier = seen.get(key)
        if earlier is not None:
            real = os.path.realpath(path)
            if key == path or any(os.path.realpath(e) == real for e in earlier):
                return
            earlier.append(path)
        else:
            seen[key] = [path]
        folder = os.path.dirname(path)
        if folder not in folders:
            md = place(path).memzoi_dir
            folders[folder] = os.path.abspath(md) if md is not None else None
        md = folders[folder]
        total[0] += 1
        if md is not None:
            groups.setdefault(md, []).append(path)
            if cache:
                if md not in caches:
                    caches[md] = ProjectCache.load(os.path.dirname(md), load_config(md).config, few)
                project = caches[md]
                payload = project.lookup(path) if project is not None else None
                if payload is not None:
                    slots.append((display, path, md, payload))
                    return
        slots.append(None)
        pool.add((path, display))

    complete: set[str] = set()
    configs: set[str] = set()
    visibility: dict[str, GitVisibility] = {}
    try:
        for arg in args:
            if _resident(arg, report):
                continue
            found = expand(arg, on_file=add)
            report.skipped.extend(found.skipped)
            complete |= found.complete
            configs |= found.configs
            for display, f in found.path_findings:
                report.findings.append(Located(display, f, (0, 0), (0, 0)))
        # Admission's review visibility: one batch of git calls per .memzoi directory, while the workers analyse.
        for md, members in groups.items():
            visibility.update(git_visibility(os.path.dirname(md), members))
    except BaseException:
        pool.close()  # e.g. Ctrl-C during the walk: do not leave workers analysing
        raise
    report.memzoi_dirs = {Path(md) for md in [*groups, *configs]}
    # Each result is taken in as it arrives, while the workers go on with the rest.
    from .index import indexed_facts  # sqlite3 is loaded only when a check runs

    contexts = {md: _project_context(md, visibility) for md in groups}

    def cached_facts(md: str, path: str) -> FileFacts | None:
        # The facts of a project's file this run does not check, when the cache vouches for its bytes.
        project = caches.get(md)
        stored = project.facts_of(path) if project is not None else None
        try:
            return stored_facts(stored) if stored is not None else None
        except (ValueError, KeyError, TypeError, IndexError):
            return None

    def analyse_others(md: str, paths: list[str]) -> dict[str, FileFacts]:
        # The project's files this run does not check and nothing vouches for: analysed like the checked ones
        # (in workers, from PARALLEL_THRESHOLD files on) and given their cache entries, so that the next check of
        # a few files reads them instead (an editor's first save hook of the day, pre-commit on a fresh clone).
        project = caches.get(md)
        if project is not None:
            project.close()  # a partial load's connection is not carried into forked workers
        others: ChunkPool[tuple[str, str], FileResult] = ChunkPool(
            functools.partial(check_chunk, now, cache=True), workers=n, chunksize=CHUNK, start_at=PARALLEL_THRESHOLD)
        out: dict[str, FileFacts] = {}
        try:
            for p in paths:
                others.add((p, p))
            for r in others.iter_results():
                if project is not None and r.entry is not None:
                    project.store(r.key, *r.entry)
                out[r.key] = r.facts
        finally:
            others.close()
        return out

    cross = CrossFileCheck(facts_source=indexed_facts, cached=cached_facts if cache else None,
                           analyse=analyse_others if cache else None)
    results: list[FileResult] = []
    pending = pool.iter_results()
    links: dict[Any, bool] = {}
    try:
        for slot in slots:
            r = next(pending) if slot is None else from_entry(now, slot, links)
            if r is None:  # an entry that cannot be read: analysed here instead, and its entry replaced
                assert slot is not None
                r = check_chunk(now, [(slot[1], slot[0])], cache=True)[0]
            project = caches.get(r.memzoi_dir or "")
            if project is not None and r.entry is not None:
                project.store(r.key, *r.entry)
            report.files_checked += 1
            if progress is not None:
                progress(report.files_checked, total[0])
            results.append(r)
            try:
                cross.add(r.display, r.key, r.memzoi_dir, r.facts)
            except Exception as err:  # the barrier, for what the parent adds per file
                from .barrier import internal_error

                r.first.own.append(internal_error(err, r.key))
    finally:
        pending.close()  # every result was taken (or the run gives up): the workers stop
        pool.close()
    # The second stage of each verdict: git visibility, ledger and cross-file findings (lineage, duplicates,
    # identities, over the checked files' whole workspace), graded by the project's rules.
    crossed = cross.findings(complete)
    for md, project in caches.items():
        if project is not None:
            project.save(complete=md in complete)
    plain = ProjectContext.of(None)
    for r in results:
        ctx = contexts.get(r.memzoi_dir or "") or plain
        try:
            found = settle(r.key, r.first, ctx, text=r.read_text, cross=crossed.get(r.key, ()))
        except Exception as err:  # the barrier
            from .barrier import internal_error

            found = [internal_error(err, r.key)]
        if found:  # most files are clean: index lines only where a position is needed
            index = r.lines()
            report.findings.extend(Located(r.display, f, index.position(f.start), index.position(f.end))
                                   for f in found)
    report.findings.sort(key=lambda l: (l.path, l.start, l.end, l.finding.code))
    return report
