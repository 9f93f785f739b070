"""Replaying ``memzoi check`` (:mod:`memzoi.stores.replay` holds the rule and the stored form): before a run plans
anything, :func:`replayed` walks the arguments and, when the project's store holds a report of the same run whose
inputs are all unchanged, gives it back; after a run, :func:`record` stores its report with its inputs.

A run is replayable when none of its arguments is a Zuno resident file; the store of its first project keeps the
report (a run over several projects has all their inputs); the walk made here is handed to the planner on a miss, so a changed workspace is walked once. When
only the bytes of some files changed, :func:`replayed` hands the stored report and the changed files on to
:func:`memzoi.runs.checkpartial.rejudge`. A check of a few files keeps the stamps of the project's other records and
packets too (:func:`others_stamp`), whose cross-file facts its report depends on.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

from ..judge.workspace import find_project_root
from ..project.checkpaths import Expanded, expand
from ..stores import replay
from ..stores.walklisting import Listing, listing_current, listing_gains
from . import checkreport
from .checkreport import CheckReport, is_resident

if TYPE_CHECKING:
    import sqlite3

    from ..project.filefacts import FileFacts
    from ..stores.verdictcache import ProjectCache
    from .checkfiles import Checked


class Walked(NamedTuple):
    """One argument's walk: every ``on_file`` call ``(path, display, inode)`` in order and the expansion."""

    calls: list[tuple[str, str, tuple[int, int] | None]]
    found: Expanded


def recorder(
    calls: list[tuple[str, str, tuple[int, int] | None]],
    then: Callable[[str, str, tuple[int, int] | None], None] | None = None,
) -> Callable[[str, str, tuple[int, int] | None], None]:
    """An ``on_file`` for :func:`memzoi.project.checkpaths.expand` that appends each call ``(path, display, inode)`` to
    ``calls``, then passes it on to ``then`` (when given)."""

    def on_file(path: str, display: str, inode: tuple[int, int] | None) -> None:
        calls.append((path, display, inode))
        if then is not None:
            then(path, display, inode)

    return on_file


def walk(args: list[str]) -> list[Walked | None]:
    """Walk ``args`` without judging anything (:func:`memzoi.project.checkpaths.expand`): ``None`` for an argument that is a
    Zuno resident file (checked apart, :func:`memzoi.runs.checkreport.resident_arg`)."""
    out: list[Walked | None] = []
    for arg in args:
        if is_resident(arg):
            out.append(None)
            continue
        calls: list[tuple[str, str, tuple[int, int] | None]] = []
        found = expand(arg, on_file=recorder(calls), files=False)  # `calls` holds them
        out.append(Walked(calls, found))
    return out


@dataclass
class Scope:
    """A replayable run: its project ``root``, its ``key`` (:func:`memzoi.stores.replay.report_key`), the walk made
    (``walked``, :func:`walk`) and the stored ``report`` when it could be replayed."""

    root: Path
    key: str
    walked: list[Walked | None] | None = None
    report: CheckReport | None = None
    #: :func:`memzoi.stores.replay.project_inputs` as the run began judging (:func:`begin`)
    projects: str | None = None
    #: the stored inputs and report when only the bytes of some files changed since (:attr:`changed`, in the
    #: stored order; :attr:`confirmed`: the others read to confirm them, under their new stamps), for
    #: :func:`memzoi.runs.checkpartial.rejudge`
    stored: tuple[replay.Inputs, bytes] | None = None
    changed: list[str] = field(default_factory=list)
    confirmed: replay.Stamps = field(default_factory=dict)
    #: the walk found what the stored run's did and its folders' listing replaces the stored one (to be written)
    relisted: bool = False
    #: each file's display path, from a current listing instead of a walk (:attr:`walked` is then ``None``)
    displays: dict[str, str] | None = None


def _root_of(args: list[str]) -> Path | None:
    """The project root whose store keeps the report of a run of ``args``: the first (sorted) of the roots its
    arguments lie in (:func:`memzoi.judge.workspace.find_project_root`); a run over several projects has every
    project's inputs in its report's."""
    roots = {find_project_root(os.path.abspath(a)) for a in args}
    return min(roots) if roots else None


def connect(root: Path) -> sqlite3.Connection | None:
    """A connection to the store of the project at ``root`` (:func:`memzoi.stores.store.connect`), ``None`` when
    it cannot be opened. Never raises for a store problem."""
    from ..stores.store import connect as open_store, store_path  # noqa: PLC0415 lazy: start-up

    try:
        return open_store(store_path(root))
    except (OSError, RuntimeError, ValueError):
        return None


def replayed(args: list[str], now: datetime, progress: Callable[[int, int], None] | None = None) -> Scope | None:
    """The :class:`Scope` of a run of ``args`` at the clock ``now`` (``None`` when it is not replayable), with the
    stored report when no input of it changed (see :mod:`memzoi.stores.replay`). Never raises for a store problem;
    creates no store."""
    from ..stores.store import store_path  # noqa: PLC0415 lazy: start-up

    root = _root_of(args) if args else None
    if root is None:
        return None
    scope = Scope(root, replay.report_key(args, os.getcwd()))
    try:
        if not store_path(root).is_file():
            return scope
    except (OSError, RuntimeError, ValueError):
        return None
    conn = connect(root)
    if conn is None:
        return scope
    try:
        stored = replay.load(conn, scope.key)
    finally:
        conn.close()
    if stored is None:
        return scope  # nothing to replay: the planner walks, overlapping with the workers
    if any(is_resident(a) for a in args):
        return None  # a resident file among the arguments: checked apart, never replayed
    inputs, blob = stored
    return _settle(scope, args, root, inputs, blob, now, progress)


def _settle(
    scope: Scope,
    args: list[str],
    root: Path,
    inputs: replay.Inputs,
    blob: bytes,
    now: datetime,
    progress: Callable[[int, int], None] | None,
) -> Scope:
    """``scope`` (a run of ``args``) told what the stored run (``inputs``, its report ``blob``) gives at ``now``:
    nothing when an input other than files' bytes changed (a boundary passed, the walk or a project's inputs
    differ), the changed files for a partial run when only some files' bytes did, else the stored report (the
    confirmed stamps written back). The arguments are walked only where their folders' listing is not current
    (:func:`memzoi.stores.walklisting.listing_current`) or a partial run needs the walk."""
    if inputs.until_us is not None and replay.micros(now) >= inputs.until_us:
        return scope
    listed = not inputs.planes and listing_current(inputs.listing, args)
    if not listed and not _walked_same(scope, args, inputs):
        return scope
    roots = {r: set(f) for r, f in inputs.roots.items()}
    projects = replay.project_inputs(roots)
    if projects != inputs.projects:
        return scope
    changed, confirmed = replay.changed_files(inputs.stamps)
    if changed:  # only some files' bytes: they and the files they touch are judged again (memzoi.runs.checkpartial)
        if scope.walked is None:  # the partial run needs each file's display path: from the listing, else walked
            scope.displays = _displays(args, inputs)
            if scope.displays is None and not _walked_same(scope, args, inputs):
                return scope
        scope.stored, scope.changed, scope.confirmed, scope.projects = (inputs, blob), changed, confirmed, projects
        return scope
    try:
        scope.report = checkreport.load(blob)
    except (ValueError, TypeError, KeyError, IndexError):
        return scope
    if confirmed or scope.relisted:  # read to confirm a racy, old or other stamp: trusted by stat next time
        _restamp(root, scope.key, inputs, confirmed, blob)
    if progress is not None:
        progress(scope.report.files_checked, scope.report.files_checked)
    return scope


def _walked_same(scope: Scope, args: list[str], inputs: replay.Inputs) -> bool:
    """Walk ``args`` (:attr:`Scope.walked`) and tell whether the walk found what the stored run's did; the fresh
    listing of its folders replaces the stored one where it lets the next run skip the walk
    (:attr:`Scope.relisted`)."""
    scope.walked = walked = walk(args)
    if _walk_digest(walked, inputs.planes) != inputs.walk:
        return False
    fresh = _listing(walked, inputs.planes)
    if listing_gains(inputs.listing, fresh):
        inputs.listing, scope.relisted = fresh, True
    return True


def _displays(args: list[str], inputs: replay.Inputs) -> dict[str, str] | None:
    """The display path of each file of ``inputs`` as the walk of the one directory argument ``args`` whose current
    listing they keep gives it (the argument as spelled, then the path below its real folder; a listing is kept only
    for a walk without path findings, :func:`_listing`); ``None`` for several arguments or a file not below it."""
    if len(args) != 1 or not inputs.listing:
        return None
    top = inputs.listing[0][0] + os.sep
    shown = args[0]  # undecodable bytes kept, as the walk shows them (memzoi.project.checkpaths.expand)
    prefix = shown if shown.endswith("/") else shown + "/"
    out = {path: prefix + path[len(top) :] for path in inputs.stamps if path.startswith(top)}
    return out if len(out) == len(inputs.stamps) else None


def _listing(walked: list[Walked | None], planes: list[str]) -> Listing | None:
    """The :data:`memzoi.stores.walklisting.Listing` of ``walked`` (each argument's real path, each folder's stamp
    and clock as the walk took them), ``None`` where more than the listings decides what the walk found
    (:attr:`memzoi.project.checkpaths.Expanded.listed_only`) or a check of a few files also lists ``planes``."""
    found = [w.found for w in walked if w is not None]
    if planes or not found or len(found) != len(walked):
        return None
    if not all(f.listed_only and f.folders and not f.path_findings for f in found):
        return None
    folders = {path: [*stamp, checked] for f in found for path, stamp, _, checked in f.folders}
    return [[f.folders[0][0] for f in found], folders]


def _restamp(root: Path, key: str, inputs: replay.Inputs, confirmed: replay.Stamps, blob: bytes) -> None:
    """Write the stamps of the files read to confirm them back to the stored run (nothing when the store is busy)."""
    conn = connect(root)
    if conn is not None:
        try:
            replay.restamp(conn, key, inputs, confirmed, blob)
        finally:
            conn.close()


def _walk_digest(walked: list[Walked | None], planes: list[str]) -> str:
    """:func:`memzoi.stores.replay.walk_digest` of ``walked`` and of the records and packets of ``planes`` (the
    ``.memzoi`` directories of a check of a few files, :func:`memzoi.project.crosscheck.plane_paths`)."""
    from ..project.crosscheck import plane_paths  # noqa: PLC0415 lazy: start-up

    files = [c[0] for w in walked if w is not None for c in w.calls]
    skipped = [(s[0], s[1]) for w in walked if w is not None for s in w.found.skipped]
    found = [pf for w in walked if w is not None for pf in w.found.path_findings]
    complete = {c for w in walked if w is not None for c in w.found.complete}
    listed = [p for md in planes for p in (md, *plane_paths(md))]
    return replay.walk_digest(files, skipped, found, complete, listed)


def others_stamp(project: ProjectCache, path: str) -> list[Any]:
    """The stamp (:data:`memzoi.stores.replay.Stamps`' form) of the bytes of the file at ``path`` whose cross-file
    facts ``project`` just vouched for (:meth:`memzoi.stores.verdictcache.ProjectCache.facts_of`): its entry's, with
    its digest (none known gives the empty digest: such a report is not stored, :func:`record`)."""
    got = project.vouched(path)
    return [*got[0], got[1], got[2].hex()] if got is not None else [-1, 0, 0, 0, 0, ""]


def _stamps(plan: Any, stages: list[Checked]) -> replay.Stamps | None:
    """Each checked file's stamp, read clock and digest as the run ``plan`` (:class:`memzoi.runs.check.CheckPlan`) used
    its bytes (the packed bytes the stage holds, :func:`memzoi.base.freshness.pack_stamp`, taken as they are: at
    50,000 files the lists were some 20 MB of the run's peak; else its entry or its store's word); ``None`` when one
    is not known (a file outside a project, read unstably, failed)."""
    out: replay.Stamps = {}
    for r in stages:
        if r.kept is not None:
            out[r.stage.path] = r.kept
            continue
        got = None
        if r.entry is not None:
            digest, stamp, checked = r.entry[:3]
            got = (stamp, checked, digest)
        elif r.stage.memzoi_dir is not None:
            project = plan.caches.get(r.stage.memzoi_dir)
            got = project.vouched(r.stage.path) if project is not None else None
        if got is None or not got[2]:
            return None
        out[r.stage.path] = [*got[0], got[1], got[2].hex()]
    return out


def _links(stamps: replay.Stamps, facts: dict[str, FileFacts]) -> str:
    """The cross-file keys (:func:`memzoi.project.crossfile.related_keys`) of each file of ``stamps`` that takes part
    in cross-file checks (``facts``: path → its facts), in their stored form (:attr:`memzoi.stores.replay.Inputs.links`),
    made file by file in ``stamps``' order (a dict of every file's key list was some 19 MB at 55,000 files)."""
    from ..judge.workspace import takes_part  # noqa: PLC0415 lazy: start-up
    from ..project.crossfile import related_keys  # noqa: PLC0415 lazy: start-up

    link_key = replay.link_key
    parts: list[str] = []
    for path in stamps:
        f = facts.get(path)
        taking = f is not None and takes_part(path, f.role)
        parts.append(" ".join([link_key(k) for k in related_keys(f)]) if f is not None and taking else "")
    return "|".join(parts)


def _others(
    planes: list[str],
    others: dict[str, tuple[list[Any], FileFacts]],
    stamps: replay.Stamps,
    facts: dict[str, FileFacts],
) -> bool:
    """Add to ``stamps`` and ``facts`` each record and packet of ``planes`` that a check of a few files did not
    check, from ``others`` (what its cross-file pass used: path → (stamp, facts)); False when one is not there
    (its facts came from the index, or it appeared since)."""
    from ..project.crosscheck import plane_paths  # noqa: PLC0415 lazy: start-up

    for md in planes:
        for path in plane_paths(md):
            if path in stamps:
                continue
            got = others.get(path)
            if got is None:
                return False
            stamps[path], facts[path] = got
    return True


def _roots(plan: Any) -> dict[str, set[str]]:
    return {os.path.dirname(md): {os.path.dirname(p) for p in files} for md, files in plan.groups.items()}


def begin(scope: Scope, plan: Any) -> None:
    """Note the project inputs as the run planned by ``plan`` (:class:`memzoi.runs.check.CheckPlan`) starts judging: a
    report is stored only when they are the same once it is done (a configuration, git or ledger change meanwhile
    is never hidden)."""
    scope.projects = replay.project_inputs(_roots(plan))


def record(scope: Scope, plan: Any, stages: list[Checked], report: CheckReport) -> bool:
    """Store ``report`` of the run ``plan`` (:class:`memzoi.runs.check.CheckPlan`, whose files' first stages are
    ``stages``) in the project's store for :func:`replayed`, when it may be (see :mod:`memzoi.stores.replay`). Returns True
    when stored; never raises for a store problem."""
    if any(w is None for w in plan.walked) or not plan.groups:
        return False  # a resident file, or no project
    if os.path.realpath(scope.root) not in {os.path.realpath(os.path.dirname(md)) for md in plan.groups}:
        return False  # the store that keeps it is one of the run's projects
    stamps = _stamps(plan, stages)
    blob = checkreport.dump(report) if stamps is not None else None
    if stamps is None or blob is None:
        return False
    facts = {r.stage.path: r.stage.facts for r in stages}
    planes = sorted(set(plan.groups) - plan.complete)  # a check of a few files: the others' facts count too
    if planes and (any(not s[5] for s, _ in plan.others.values()) or not _others(planes, plan.others, stamps, facts)):
        # A stamp without a digest cannot be confirmed by reading: each run draws a share of the files for a re-hash
        # (memzoi.base.freshness.due), which would count as changed every time.
        return False
    roots = _roots(plan)
    projects = replay.project_inputs(roots)
    if projects != scope.projects:
        return False
    bounds = [r.stage.boundary for r in stages if r.stage.boundary is not None]
    until = min(bounds) if bounds else None
    inputs = replay.Inputs(
        _walk_digest(plan.walked, planes),
        projects,
        stamps,
        replay.micros(until) if until is not None else None,
        {k: sorted(v) for k, v in roots.items()},
        _links(stamps, facts),
        planes,
        _listing(plan.walked, planes),
    )
    conn = connect(scope.root)
    if conn is None:
        return False
    try:
        return replay.save(conn, scope.key, inputs, blob)
    finally:
        conn.close()


__all__ = ["Scope", "Walked", "begin", "connect", "others_stamp", "record", "replayed", "walk"]
