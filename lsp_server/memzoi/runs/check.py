"""Checking paths: expand command-line paths into Memzoi files (:mod:`memzoi.project.checkpaths`), analyse each, and collect
located findings.

Shared by ``memzoi check`` and the language server's "check workspace" command. One unreadable or malformed
file never stops the others. From :data:`PARALLEL_THRESHOLD` files on, a single-threaded caller (the CLI)
analyses in forked worker processes (:mod:`memzoi.base.parallel`), which start while the walk is still finding files
and return each file's first stage (:mod:`memzoi.runs.checkfiles`). Results are identical either way.

With the verdict cache (:mod:`memzoi.stores.verdictcache`, on unless ``cache=False``), a file whose bytes have an entry
is not analysed (nor, when stat vouches for it, read): the first stage of its verdict comes from the entry. The
second stage (git visibility, ledger, cross-file findings, grading) runs here for every file, cached or not.
"""

from __future__ import annotations

import functools
import gc
import os
from collections.abc import Callable, Generator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from ..base.clock import utc_now
from ..base.parallel import ChunkPool, cpu_count
from ..judge.workspace import place

# Re-exported (also imported from here).
from ..project.checkpaths import (
    Expanded as Expanded,
    UsageError as UsageError,
    expand as expand,
    require_exists as require_exists,
)
from .checkimports import load_judging
from .checkreplay import Walked, begin, others_stamp, record, recorder, replayed

# Re-exported (also imported from here).
from .checkreport import (
    CheckReport as CheckReport,
    Located as Located,
    check_text as check_text,
    resident_arg as resident_arg,
)
from .checksettle import project_context, settle as settle_stages

# What judges a file (the analysis's context, git, the ledger, the store's entries, cross-file checks) is imported
# where a run judges: a replayed run (memzoi.runs.checkreplay) loads none of it.
if TYPE_CHECKING:
    from ..base.findings import Finding
    from ..project.admission import GitVisibility
    from ..project.crosscheck import CrossFileCheck
    from ..project.filefacts import FileFacts
    from ..stores.verdictcache import ProjectCache
    from .checkfiles import Checked

#: From this many files on, ``check_paths`` analyses in worker processes when it may fork (below it, starting
#: the workers costs more than it saves).
PARALLEL_THRESHOLD = 300
#: Files per unit of work sent to a worker: small enough to keep both cores busy to the end.
CHUNK = 64


def git_visibility(root: str, paths: list[str]) -> dict[str, GitVisibility]:
    """:func:`memzoi.project.admission.git_visibility`, imported when a run asks git (a replayed run does not), keyed by
    the strings of ``paths`` where they are already absolute (the function keeps the caller's strings)."""
    from ..project.admission import git_visibility as ask  # noqa: PLC0415 lazy: start-up

    return ask(root, paths)


def check_paths(
    args: list[str],
    *,
    workers: int | None = None,
    progress: Callable[[int, int], None] | None = None,
    cache: bool = True,
) -> CheckReport:
    """Check every file under ``args`` (see :func:`expand`). Raises :class:`UsageError` for a missing path.

    ``workers``: analysis processes (default one per CPU, at most 8; 1 = in this process). Workers are only used
    from :data:`PARALLEL_THRESHOLD` files on and where :func:`memzoi.base.parallel.can_fork` allows; they start
    analysing while the paths are still being walked. ``progress(done, total)`` is called as files are finished.
    ``cache``: use and update each project's verdict cache (:mod:`memzoi.stores.verdictcache`); the report is the same
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


@dataclass
class CheckPlan:
    """What the planner (:func:`plan_check`) found for one run: every file in the walk's order as a slot (a store
    hit ``(display, path, .memzoi directory, payload)``, or ``(display, path)`` for the pool's next result; the
    collector lets each go once it is taken), the pool analysing the others, each project's store and files, the visibility git gave, the ``.memzoi`` directories
    whose files were all walked, and the report's walk findings so far."""

    report: CheckReport
    now: Any
    workers: int
    pool: ChunkPool[tuple[str, str], Checked]
    slots: list[tuple[str, str, str, str] | tuple[str, str] | None] = field(default_factory=list)
    caches: dict[str, ProjectCache | None] = field(default_factory=dict)
    groups: dict[str, list[str]] = field(default_factory=dict)
    complete: set[str] = field(default_factory=set)
    visibility: dict[str, GitVisibility] = field(default_factory=dict)
    #: per argument, the walk's ``on_file`` calls and what it expanded to (``None`` for a resident file)
    walked: list[Walked | None] = field(default_factory=list)
    #: the stamps of the project's files the run does not check whose cross-file facts it used
    #: (:func:`memzoi.runs.checkreplay.others_stamp`), for a stored report's inputs
    others: dict[str, tuple[list[Any], FileFacts]] = field(default_factory=dict)


def _check_paths(
    args: list[str], workers: int | None, progress: Callable[[int, int], None] | None, cache: bool
) -> CheckReport:
    """Replay the stored report when no input of it changed (:mod:`memzoi.runs.checkreplay`), or re-judge only what
    the files whose bytes changed touch (:mod:`memzoi.runs.checkpartial`); else plan (walk, store lookups, workers
    started), collect (each file's first stage, the cross-file workspace) and settle (the second stage of every
    verdict), and store the report for the next run."""
    scope = replayed(args, utc_now(), progress) if cache else None
    if scope is not None and scope.report is not None:
        return scope.report
    load_judging()
    if scope is not None and scope.changed:
        from .checkpartial import rejudge  # noqa: PLC0415 lazy: start-up

        partial = rejudge(scope, utc_now(), judge_files, progress)
        if partial is not None:
            return partial
    plan = plan_check(args, workers, cache, scope.walked if scope is not None else None)
    if scope is not None:
        begin(scope, plan)
    stages, extra, crossed = _collect(plan, progress, cache)
    try:
        report = settle_report(plan, stages, extra, crossed)
        if scope is not None:
            record(scope, plan, stages, report)
    finally:
        # The stores are written once the stages are let go, so their last writes reuse the stages' memory.
        del stages, crossed
        _save(plan)
    return report


def plan_check(
    args: list[str], workers: int | None, cache: bool, walked: list[Walked | None] | None = None
) -> CheckPlan:
    """The planner of :func:`check_paths`: walk ``args`` (:func:`memzoi.project.checkpaths.expand`), place each file once
    (the same file reached twice is checked once), look it up in its project's store (a hit is read back, not
    analysed) and hand every miss to the worker pool, which starts analysing while the walk goes on; then ask git
    for the visibility of each project's files. ``walked``: the walk already made (:func:`memzoi.runs.checkreplay.walk`),
    replayed instead of walking again. Closes the pool when the walk fails (Ctrl-C)."""
    from ..stores.store import path_key  # noqa: PLC0415 lazy: start-up
    from .checkfiles import check_chunk  # noqa: PLC0415 lazy: start-up

    n = min(cpu_count(), 8) if workers is None else workers
    now = utc_now()
    plan = CheckPlan(
        CheckReport(),
        now,
        n,
        ChunkPool(
            functools.partial(check_chunk, now, cache=cache),
            workers=n,
            chunksize=CHUNK,
            start_at=PARALLEL_THRESHOLD,
            join=False,
        ),
    )
    # A check of a few files (an editor's save hook, pre-commit) reads only their entries; the facts of the
    # project's other files come from their entries, all read in one query (ProjectCache.facts_of).
    few = (
        [path_key(os.path.abspath(a)) for a in args]
        if len(args) < PARALLEL_THRESHOLD and all(os.path.isfile(a) for a in args)
        else None
    )
    add = _Adder(plan, cache, few)
    configs: set[str] = set()
    try:
        for i, arg in enumerate(args):
            given = walked[i] if walked is not None else None
            if given is None and resident_arg(arg, plan.report):
                plan.walked.append(None)
                continue
            if given is not None:
                calls, found = given
                for call in calls:
                    add(*call)
            else:
                calls = []
                found = expand(arg, on_file=recorder(calls, add), files=False)  # `calls` holds them
            plan.walked.append(Walked(calls, found))
            plan.report.skipped.extend(found.skipped)
            plan.complete |= found.complete
            configs |= found.configs
            for display, f in found.path_findings:
                plan.report.findings.append(Located(display, f, (0, 0), (0, 0)))
        # Admission's review visibility: one batch of git calls per .memzoi directory, while the workers analyse.
        for md, members in plan.groups.items():
            plan.visibility.update(git_visibility(os.path.dirname(md), members))
    except BaseException:
        plan.pool.close()  # e.g. Ctrl-C during the walk: do not leave workers analysing
        raise
    plan.report.memzoi_dirs = {Path(md) for md in [*plan.groups, *configs]}
    return plan


class _Adder:
    """The walk's ``on_file`` callback of :func:`plan_check`: one slot per distinct file."""

    def __init__(self, plan: CheckPlan, cache: bool, few: list[str] | None) -> None:
        self.plan, self.cache, self.few = plan, cache, few
        # Hard links are distinct files to Memzoi (each path is a record), so an inode seen before is compared
        # by real path.
        self.seen: dict[tuple[int, int] | str, list[str]] = {}  # inode (or path) -> paths checked with it
        self.folders: dict[str, str | None] = {}  # the .memzoi directory above each folder
        from ..judge.config import load_config  # noqa: PLC0415 lazy: start-up
        from ..stores.verdictcache import ProjectCache  # noqa: PLC0415 lazy: start-up

        self.load_config, self.load_cache, self.place = load_config, ProjectCache.load, place

    def _first_time(self, path: str, inode: tuple[int, int] | None) -> bool:
        key: tuple[int, int] | str
        if inode is not None:
            key = inode
        else:
            try:
                st = os.stat(path)
                key = (st.st_dev, st.st_ino)
            except OSError:
                key = path  # the analysis reports why it cannot be read
        earlier = self.seen.get(key)
        if earlier is None:
            self.seen[key] = [path]
            return True
        real = os.path.realpath(path)
        if key == path or any(os.path.realpath(e) == real for e in earlier):
            return False
        earlier.append(path)
        return True

    def __call__(self, path: str, display: str, inode: tuple[int, int] | None) -> None:
        if not self._first_time(path, inode):
            return
        plan = self.plan
        folder = os.path.dirname(path)
        if folder not in self.folders:
            where = self.place(path).memzoi_dir
            self.folders[folder] = os.path.abspath(where) if where is not None else None
        md = self.folders[folder]
        if md is not None:
            plan.groups.setdefault(md, []).append(path)
            if self.cache:
                if md not in plan.caches:
                    plan.caches[md] = self.load_cache(os.path.dirname(md), self.load_config(md).config, self.few)
                project = plan.caches[md]
                payload = project.lookup(path) if project is not None else None
                if payload is not None:
                    plan.slots.append((display, path, md, payload))
                    return
        plan.slots.append((display, path))
        plan.pool.add((path, display))


def _cross_check(plan: CheckPlan, cache: bool) -> CrossFileCheck:
    """The cross-file workspace of a run: the facts of the project's files the run does not check come from its
    store when it vouches for them, else from the index, else they are analysed (and stored)."""
    from ..project.crosscheck import CrossFileCheck  # noqa: PLC0415 lazy: start-up
    from ..stores.index import indexed_facts  # noqa: PLC0415 lazy: start-up - sqlite3 is loaded only when a check runs
    from ..stores.verdictpayload import stored_facts  # noqa: PLC0415 lazy: start-up
    from .checkfiles import check_chunk  # noqa: PLC0415 lazy: start-up

    def cached_facts(md: str, path: str) -> FileFacts | None:
        project = plan.caches.get(md)
        stored = project.facts_of(path) if project is not None else None
        try:
            found = stored_facts(stored) if stored is not None else None
        except (ValueError, KeyError, TypeError, IndexError):
            return None
        if found is not None and project is not None:
            plan.others[path] = (others_stamp(project, path), found)
        return found

    def analyse_others(md: str, paths: list[str]) -> dict[str, FileFacts]:
        # Analysed like the checked ones and given their entries, so that the next check of a few files reads
        # them instead (an editor's first save hook of the day, pre-commit on a fresh clone).
        project = plan.caches.get(md)
        if project is not None:
            project.close()  # a partial load's connection is not carried into forked workers
        others: ChunkPool[tuple[str, str], Checked] = ChunkPool(
            functools.partial(check_chunk, plan.now, cache=True),
            workers=plan.workers,
            chunksize=CHUNK,
            start_at=PARALLEL_THRESHOLD,
        )
        out: dict[str, FileFacts] = {}
        try:
            for p in paths:
                others.add((p, p))
            for r in others.iter_results():
                if project is not None and r.entry is not None:
                    project.store(r.stage.path, *r.entry)
                    plan.others[r.stage.path] = ([*r.entry[1], r.entry[2], r.entry[0].hex()], r.stage.facts)
                out[r.stage.path] = r.stage.facts
        finally:
            others.close()
        return out

    return CrossFileCheck(
        facts_source=indexed_facts, cached=cached_facts if cache else None, analyse=analyse_others if cache else None
    )


def _collect(
    plan: CheckPlan, progress: Callable[[int, int], None] | None, cache: bool
) -> tuple[list[Checked], dict[str, list[Finding]], dict[str, list[Finding]]]:
    """Each planned file's first stage in the walk's order (read back from its entry, or as the workers finish
    it; new entries handed to the store), fed to the cross-file workspace; then the cross-file findings. Returns
    the stages (as :func:`memzoi.runs.checkfiles.held` keeps them), internal errors of the parent's own work per
    path, and the cross-file findings per path. The stores are written by :func:`_save`."""
    from .checkfiles import Shared, check_chunk, from_entry, held  # noqa: PLC0415 lazy: start-up

    cross = _cross_check(plan, cache)
    stages: list[Checked] = []
    extra: dict[str, list[Finding]] = {}
    slots = plan.slots
    total = len(slots)
    pending = cast("Generator[Checked, None, None]", plan.pool.iter_results())  # a generator: closed below
    links: dict[Any, bool] = {}
    shared = Shared()
    try:
        for i, slot in enumerate(slots):
            assert slot is not None
            slots[i] = None  # taken: its payload is let go
            got = next(pending) if len(slot) == 2 else from_entry(plan.now, slot, links)
            if got is None:  # an entry that cannot be read: analysed here instead, and its entry replaced
                got = check_chunk(plan.now, [(slot[1], slot[0])], cache=True)[0]
            project = plan.caches.get(got.stage.memzoi_dir or "")
            if project is not None and got.entry is not None:
                project.store(got.stage.path, *got.entry)
            # Kept compact until the report is settled (memzoi.runs.checkfiles.held): the walk's strings, shared
            # first stages, no payload.
            r = held(got, slot[1], slot[0], shared)
            del got
            plan.report.files_checked += 1
            if progress is not None:
                progress(plan.report.files_checked, total)
            stages.append(r)
            try:
                cross.add(r.display, r.stage.path, r.stage.memzoi_dir, r.stage.facts)
            except Exception as err:  # the barrier, for what the parent adds per file
                from ..judge.barrier import internal_error  # noqa: PLC0415 lazy: start-up

                extra.setdefault(r.stage.path, []).append(internal_error(err, r.stage.path))
    finally:
        pending.close()  # every result was taken (or the run gives up): the workers stop
        plan.pool.close()
    return stages, extra, cross.findings(plan.complete)


def _save(plan: CheckPlan) -> None:
    """Write each project's store (what the run changed of its entries and has not written yet)."""
    for md, project in plan.caches.items():
        if project is not None:
            project.save(complete=md in plan.complete)


def settle_report(
    plan: CheckPlan, stages: list[Checked], extra: dict[str, list[Finding]], crossed: dict[str, list[Finding]]
) -> CheckReport:
    """The settler of :func:`check_paths`: the second stage of each verdict (:func:`memzoi.runs.checksettle.settle`), placed and sorted
    into the report."""
    report = plan.report
    contexts = {md: project_context(md, plan.visibility) for md in plan.groups}
    report.findings.extend(settle_stages(contexts, stages, extra, crossed))
    report.findings.sort(key=lambda l: (l.path, l.start, l.end, l.finding.code))
    return report


def judge_files(md: str, stages: list[Checked], crossed: dict[str, list[Finding]]) -> list[Located]:
    """The second stage (:func:`memzoi.runs.checksettle.settle`) of ``stages``, files of the project of the ``.memzoi`` directory ``md``
    (absolute) whose cross-file findings are ``crossed`` (absolute path → findings), with git asked for these
    files only: the located findings, in the order a full run makes them (for
    :func:`memzoi.runs.checkpartial.rejudge`)."""
    visibility = git_visibility(os.path.dirname(md), [r.stage.path for r in stages])
    return settle_stages({md: project_context(md, visibility)}, stages, {}, crossed)
