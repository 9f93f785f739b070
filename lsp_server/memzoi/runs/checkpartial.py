"""Partial re-judging of ``memzoi check`` (issue 29, "Replay": when some inputs changed, only the affected files
and their cross-file dependents are judged again).

When a report of the same run is stored (:mod:`memzoi.stores.replay`) and the only inputs that changed are the
bytes of a few of its files (the walk, the configuration, git's state, the ledger's head, the tool and the clock's
boundary are all the same), :func:`rejudge` makes the report from the stored one:

1. each changed file is analysed again (:func:`memzoi.runs.checkfiles.check_chunk`, its store entry kept);
2. the files whose cross-file findings can change are those sharing a cross-file key
   (:func:`memzoi.project.crossfile.related_keys`) with a changed file's old facts (the stored report's
   ``links``) or new ones; with the changed files they are the *affected* files;
3. a :class:`~memzoi.project.crossfile.Workspace` holding the affected files and every file sharing a key with
   one of them (their facts from the project's store) evaluates the affected files' cross-file findings, which
   are those a workspace of the whole project gives (the relation is wider than needed, never narrower);
4. the second stage of the affected files is run as a full check runs it (``judge``: git visibility, ledger,
   cross-file findings, grading), their first stage read back from their store entries;
   (for a check of a few files, only the files it checks are judged; the project's other files give facts);
5. the stored report's findings of every other file are kept, the affected files' replaced, and the whole sorted
   as a full run sorts it, so the output is byte for byte that of ``memzoi check --no-cache``;
6. the report is stored again with the changed files' new stamps and keys.

A run over several projects re-judges each project's files over a workspace of that project's files, with its
own store. Whenever something needed is not at hand (no keys stored, more than :data:`MAX_CHANGED` changed files, a
file whose facts the store cannot vouch for, display paths that are not one per file, a changed file that left its
project), :func:`rejudge` gives ``None`` and the caller judges every file.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from datetime import datetime
from typing import TYPE_CHECKING

from ..judge.workspace import MEMZOI_DIR, takes_part
from ..project.crossfile import Workspace, related_keys
from ..stores import replay
from . import checkreport
from .checkreplay import Scope, Walked, connect

if TYPE_CHECKING:
    from ..base.findings import Finding
    from ..project.filefacts import FileFacts
    from ..stores.verdictcache import ProjectCache
    from .checkfiles import Checked
    from .checkreport import CheckReport, Located

#: At most this many changed files are re-judged here; beyond it the caller's full run (in worker processes)
#: costs less.
MAX_CHANGED = 64
#: ``judge(.memzoi directory, stages, cross-file findings per path)``: the located findings of ``stages`` after
#: their second stage (:func:`memzoi.runs.check.judge_files`).
Judge = Callable[[str, "list[Checked]", "dict[str, list[Finding]]"], "list[Located]"]


def rejudge(
    scope: Scope, now: datetime, judge: Judge, progress: Callable[[int, int], None] | None = None
) -> CheckReport | None:
    """The report of the run ``scope`` (:func:`memzoi.runs.checkreplay.replayed` found its stored report and the
    files whose bytes changed, :attr:`Scope.changed`) at the clock ``now``, re-judging only the affected files
    (see the module docstring); ``None`` when that cannot be done (the caller then judges every file). Keeps the
    changed files' store entries and stores the new report. Never raises for a store problem."""
    if scope.stored is None or not scope.changed or len(scope.changed) > MAX_CHANGED:
        return None
    inputs = scope.stored[0]
    displays = scope.displays if scope.walked is None else _walked_displays(scope.walked)
    if inputs.links is None or displays is None:
        return None  # (a display path shared by two files, or a file walked twice: findings are not one file's)
    mds = sorted({os.path.abspath(os.path.join(r, MEMZOI_DIR)) for r in inputs.roots})
    projects: dict[str, ProjectCache] = {}
    try:
        for md in mds:
            project = _load(md, [p for p in scope.changed if p.startswith(md + os.sep)])
            if project is None:
                return None
            projects[md] = project
        done = _judge(scope, inputs, displays, projects, now, judge)
    finally:
        for project in projects.values():
            project.close()
    if done is None:
        return None
    report, stages, keys_of = done
    for project in projects.values():
        project.save()
    _store(scope, inputs, stages, report, keys_of)
    if progress is not None:
        progress(report.files_checked, report.files_checked)
    return report


def _walked_displays(walked: list[Walked | None]) -> dict[str, str] | None:
    """Each walked file's display path; ``None`` when two files share one or a file was walked twice."""
    calls = [c for w in walked if w is not None for c in w.calls]
    displays = {path: display for path, display, _ in calls}
    return displays if len({d for _, d, _ in calls}) == len(calls) == len(displays) else None


def _memzoi_dir(path: str, projects: Mapping[str, object]) -> str | None:
    """The ``.memzoi`` directory among those of ``projects`` that ``path`` (absolute) lies in."""
    found = [md for md in projects if path.startswith(md + os.sep)]
    return max(found, key=len) if found else None


def _load(md: str, changed: list[str]) -> ProjectCache | None:
    """The store of the project of ``md`` (its configuration's stamp), reading the entries of ``changed`` now and
    the others as asked."""
    from ..judge.config import load_config  # noqa: PLC0415 lazy: start-up
    from ..stores.store import path_key  # noqa: PLC0415 lazy: start-up
    from ..stores.verdictcache import ProjectCache  # noqa: PLC0415 lazy: start-up

    try:
        return ProjectCache.load(os.path.dirname(md), load_config(md).config, [path_key(p) for p in changed])
    except Exception:  # noqa: BLE001 - the store never breaks a check: the caller judges every file
        return None


def _judge(
    scope: Scope,
    inputs: replay.Inputs,
    displays: dict[str, str],
    projects: dict[str, ProjectCache],
    now: datetime,
    judge: Judge,
) -> tuple[CheckReport, dict[str, Checked], list[list[str]]] | None:
    """Steps 1–5 of the module docstring, over the projects of the ``.memzoi`` directories of ``projects`` (each
    one's store): the new report, the stages of the changed files by path and the stored keys of each file
    (:func:`memzoi.stores.replay.unpack_links`, unchanged)."""
    from .checkfiles import check_chunk  # noqa: PLC0415 lazy: start-up

    keys_of, links = replay.unpack_links(inputs.links or "")
    order = list(inputs.stamps)
    if len(keys_of) != len(order):
        return None
    changed: dict[str, Checked] = {}
    for r in check_chunk(now, [(p, displays.get(p, p)) for p in scope.changed], cache=True):
        md = r.stage.memzoi_dir
        if md is None or md != _memzoi_dir(r.stage.path, projects):
            return None  # it left its project
        changed[r.stage.path] = r
        if r.entry is not None:
            projects[md].store(r.stage.path, *r.entry)
    position = {p: i for i, p in enumerate(order)}
    touched: set[str] = set()
    for path, r in changed.items():
        if path in position:
            touched.update(keys_of[position[path]])
        if takes_part(path, r.stage.facts.role):
            touched.update(replay.link_key(k) for k in related_keys(r.stage.facts))
    # the files whose findings can change, among those the run checks (a check of a few files keeps the others'
    # facts, not their findings)
    affected = (set(changed) | {order[i] for k in touched for i in links.get(k, ())}) & displays.keys()
    wanted = set(touched)
    for path in affected - changed.keys():
        wanted.update(keys_of[position[path]])
    related = affected | set(changed) | {order[i] for k in wanted for i in links.get(k, ())}
    facts = _facts(related, changed, projects)
    if facts is None:
        return None
    stages = _stages(affected, changed, displays, projects, position, now)
    if stages is None:
        return None
    shown = {r.display for r in stages.values()}
    if any(d in shown for w in scope.walked or () if w is not None for d, _ in w.found.path_findings):
        return None
    assert scope.stored is not None  # rejudge's first check
    report = checkreport.load(scope.stored[1])
    report.findings = [f for f in report.findings if f.path not in shown]
    for md in projects:  # each project's files are evaluated over a workspace of that project's files only
        mine = {p: f for p, f in facts.items() if _memzoi_dir(p, projects) == md}
        crossed = Workspace.of(mine).evaluate(sorted(affected & mine.keys()))
        ordered = sorted((r for r in stages.values() if r.stage.memzoi_dir == md), key=lambda r: position[r.stage.path])
        if ordered:
            report.findings += judge(md, ordered, crossed)
    report.findings.sort(key=lambda l: (l.path, l.start, l.end, l.finding.code))
    return report, changed, keys_of


def _stages(
    affected: set[str],
    changed: dict[str, Checked],
    displays: dict[str, str],
    projects: dict[str, ProjectCache],
    position: dict[str, int],
    now: datetime,
) -> dict[str, Checked] | None:
    """The first stages of the ``affected`` files: the changed ones' new ones, the others' read back from their
    store entries (analysed again where there is none: a file with a secret gets none, as a full run does);
    ``None`` when a display path is not the walk's (a redacted one might be another file's)."""
    from .checkfiles import check_chunk, from_entry  # noqa: PLC0415 lazy: start-up

    stages = {p: r for p, r in changed.items() if p in affected}
    links_cache: dict[str, object] = {}
    for path in sorted(affected - stages.keys(), key=position.__getitem__):
        md = _memzoi_dir(path, projects)
        if md is None:
            return None
        payload = projects[md].lookup(path)
        got = from_entry(now, (displays[path], path, md, payload), links_cache) if payload else None
        if got is None:
            got = check_chunk(now, [(path, displays[path])], cache=True)[0]
            if got.entry is not None:
                projects[md].store(path, *got.entry)
        stages[path] = got
    if any(r.display != displays.get(p) for p, r in stages.items()):
        return None
    return stages


def _facts(
    paths: set[str], changed: dict[str, Checked], projects: dict[str, ProjectCache]
) -> dict[str, FileFacts] | None:
    """The cross-file facts of ``paths`` that take part: the changed files' new ones, the others' from their
    project's store; ``None`` when a store cannot vouch for one."""
    from ..stores.verdictpayload import stored_facts  # noqa: PLC0415 lazy: start-up

    out: dict[str, FileFacts] = {}
    for path in paths:
        r = changed.get(path)
        if r is not None:
            f = r.stage.facts
        else:
            md = _memzoi_dir(path, projects)
            kept = projects[md].facts_of(path) if md is not None else None
            if kept is None:
                return None
            try:
                f = stored_facts(kept)
            except (ValueError, KeyError, TypeError, IndexError):
                return None
        if takes_part(path, f.role):
            out[path] = f
    return out


def _store(
    scope: Scope, inputs: replay.Inputs, stages: dict[str, Checked], report: CheckReport, keys_of: list[list[str]]
) -> bool:
    """Store ``report`` for the next run with the changed files' new stamps and keys (``keys_of``: the stored keys
    of each file, changed here; and the stamps of the files confirmed by reading), when every changed file was read
    stably and the project's inputs are still those the run began with. Returns True when stored."""
    position = {p: i for i, p in enumerate(inputs.stamps)}
    bounds = []
    for path in scope.changed:
        r = stages[path]
        if r.entry is None or path not in position:
            return False
        digest, stamp, checked = r.entry[:3]
        inputs.stamps[path] = [*stamp, checked, digest.hex()]
        facts = r.stage.facts
        keys_of[position[path]] = (
            [replay.link_key(k) for k in related_keys(facts)] if takes_part(path, facts.role) else []
        )
        if r.stage.boundary is not None:
            bounds.append(replay.micros(r.stage.boundary))
    inputs.stamps.update(scope.confirmed)
    if bounds:  # the earliest boundary, or earlier (a changed file's old one): judged again sooner, never later
        inputs.until_us = min([*bounds, *([inputs.until_us] if inputs.until_us is not None else [])])
    inputs.links = replay.pack_links(keys_of)
    roots = {r: set(f) for r, f in inputs.roots.items()}
    data = checkreport.dump(report)
    if data is None or replay.project_inputs(roots) != scope.projects:
        return False
    conn = connect(scope.root)
    if conn is None:
        return False
    try:
        return replay.save(conn, scope.key, inputs, data)
    finally:
        conn.close()


__all__ = ["MAX_CHANGED", "Judge", "rejudge"]
