"""The index's refresh after a long-lived caller's scan (memzoi.stores.index_fresh.plane_of, issue 29: one walk and one
stat per file). The records and packets of the scan's listing are exactly the refresh walk's; the plan made from the
scan's stats is the walked refresh's; a file is stat'ed only when the scan has no stat of it; and a project state's
refresh after its scan neither walks the folders nor stats a file the scan stat'ed, until an event drops that stat
(counted through injected functions, never timed)."""

from __future__ import annotations

import os
import shutil
from collections import Counter
from pathlib import Path

import pytest

from memzoi.base import freshness
from memzoi.judge import workspace
from memzoi.judge.analysis import analyze_bytes
from memzoi.project import crossfile
from memzoi.project.checkpaths import expand
from memzoi.project.verdict import ProjectContext
from memzoi.runs import scanverdicts
from memzoi.runs.projectstate import ProjectState
from memzoi.stores import index_fresh, planelisting
from memzoi.stores.index import Index
from memzoi.stores.index_fresh import plane_of
from memzoi.stores.planelisting import plane_key, walk

from .builders import edit
from .test_index import home, project  # noqa: F401 - fixtures
from .test_index_refresh import _odd_entries


@pytest.fixture
def closed(monkeypatch):
    """Racy window closed, no sampling, a file system that keeps its ctime: the stat decides alone."""
    monkeypatch.setattr(freshness, "RACY_NS", -1)
    monkeypatch.setattr(freshness, "SAMPLE_SHARE", 0)
    monkeypatch.setattr(freshness, "fs_type", lambda dev: "ext4")


def listing(root: Path) -> list[str]:
    """What the server's scan lists: the files ``memzoi check`` checks below ``.memzoi``."""
    return [os.path.abspath(p) for p, _ in expand(str(root / ".memzoi")).files]


def no_walk(monkeypatch) -> None:
    """Any walk of the git plane fails the test."""

    def walked(*args, **kwargs):
        raise AssertionError("the plane was walked again")

    for module, name in (
        (planelisting, "walk"),
        (index_fresh, "walk"),
        (workspace, "plane_entries"),
        (crossfile, "git_plane_files"),
    ):
        monkeypatch.setattr(module, name, walked)


def test_the_records_and_packets_of_the_listing_are_the_walks(project):
    _odd_entries(project)
    base = str(project.resolve())
    keys = [k for p in listing(project) if (k := plane_key(base, p)) is not None]
    assert len(keys) == len(set(keys)) and set(keys) == set(walk(project.resolve()).keys())
    assert plane_key(base, os.path.join(base, ".memzoi", "records", "x.md")) == ".memzoi/records/x.md"
    assert plane_key(base, base + "-other/.memzoi/records/x.md") is None  # another folder sharing the prefix


@pytest.mark.usefixtures("home", "closed")
def test_the_plan_from_the_scans_stats_is_the_walked_refreshs(project, monkeypatch):
    secret = project / ".memzoi/records" / ("ghp_" + "aB3dE5fG7hJ9kL1mN2pQ4" + "rS6tU8vW0xY2zA4.md")  # run time
    rec = sorted((project / ".memzoi/records").rglob("*.md"))
    shutil.copyfile(rec[0], secret)
    with Index(project) as ix:
        ix.rebuild()
        rec = sorted(p for p in (project / ".memzoi/records").rglob("*.md") if p != secret)
        rec[0].write_bytes(rec[0].read_bytes() + b"\nA new line.\n")  # changed
        rec[1].unlink()  # gone
        shutil.copyfile(rec[2], rec[2].parent / "brand-new.md")  # new
        st = rec[3].stat()
        os.utime(rec[3], ns=(st.st_atime_ns, st.st_mtime_ns + 10**9))  # the same bytes: confirmed by hash
        secret.write_bytes(secret.read_bytes() + b"\nMore.\n")  # changed, under its redacted key
        walked = index_fresh.stale(ix.db, ix.root, plane_of(ix.root))
        stats = {p: freshness.lstat(p) for p in listing(project)}
        no_walk(monkeypatch)
        stat_calls: list[str] = []
        scanned = plane_of(ix.root, stats, stats.get, lstat=lambda p: stat_calls.append(p) or freshness.lstat(p))
        plan = index_fresh.stale(ix.db, ix.root, scanned)
    assert sorted(plan.changed) == sorted(walked.changed) and len(plan.changed) == 3
    assert sorted(plan.gone) == sorted(walked.gone) == [rec[1].relative_to(project.resolve()).as_posix()]
    assert [r[-1] for r in plan.restamp] == [r[-1] for r in walked.restamp] and len(plan.restamp) == 1
    assert (plan.git, plan.git_changed) == (walked.git, walked.git_changed)
    assert stat_calls == []  # every file's stat came from the scan


@pytest.mark.usefixtures("home", "closed")
def test_a_file_the_scan_has_no_stat_of_is_the_only_one_stated(project, monkeypatch):
    with Index(project) as ix:
        ix.rebuild()
        files = listing(project)
        target = next(p for p in files if plane_key(str(ix.root), p))
        stat_calls: list[str] = []
        scanned = plane_of(
            ix.root,
            files,
            lambda p: None if p == target else freshness.lstat(p),
            lstat=lambda p: stat_calls.append(p) or freshness.lstat(p),
        )
        plan = index_fresh.stale(ix.db, ix.root, scanned)
    assert stat_calls == [target]
    assert not plan.changed and not plan.gone and not plan.restamp


@pytest.mark.usefixtures("home", "closed")
def test_a_listed_file_deleted_since_is_gone_as_in_the_walked_refresh(project):
    with Index(project) as ix:
        ix.rebuild()
        files = listing(project)  # listed by the scan, then deleted before its event is taken
        target = next(p for p in files if plane_key(str(ix.root), p))
        os.unlink(target)
        plan = index_fresh.stale(ix.db, ix.root, plane_of(ix.root, files))
        walked = index_fresh.stale(ix.db, ix.root, plane_of(ix.root))
    assert plan.gone == walked.gone == [plane_key(str(ix.root), target)]
    assert not plan.changed and not plan.restamp


def analysed(path: Path):
    """The caller's analysis of a file as it is on disk (the server's document cache)."""
    data = path.read_bytes()
    return data, path.stat(), analyze_bytes(data, path)


def scanned_state(root: Path, on_disk=analysed) -> ProjectState:
    """A project state after a scan as the server makes it: each file analysed once, its compact verdict kept when
    current (the one stat the scan takes of it) and its search rows written into the index as the scan goes."""
    state = ProjectState(root)
    paths = state.listing()
    state.adopt(paths)
    ctx = ProjectContext.of(state.memzoi_dir, git=state.git)
    rows: list[dict] = []
    for got in scanverdicts.analyse(paths, ctx, index_root=root.resolve(), workers=1):
        if got is None:
            continue
        if got.row is not None:
            rows.append(got.row)
        if got.verdict.current():
            state.verdicts[state.key_of(got.verdict.path)] = got.verdict
    state.put_rows(rows, on_disk)
    return state


def count_stats(monkeypatch, paths: set[str]) -> Counter[str]:
    """Count ``os.stat`` and ``os.lstat`` calls on ``paths`` from now on."""
    counts: Counter[str] = Counter()
    for name in ("stat", "lstat"):
        real = getattr(os, name)

        def counted(p, *args, _real=real, **kwargs):
            if os.fspath(p) in paths:
                counts[os.fspath(p)] += 1
            return _real(p, *args, **kwargs)

        monkeypatch.setattr(os, name, counted)
    return counts


@pytest.mark.usefixtures("home", "closed")
def test_the_refresh_after_a_scan_takes_each_files_stat_from_the_scan(project, monkeypatch):
    asked: list[str] = []

    def on_disk(path: Path):  # counted
        asked.append(str(path))
        return analysed(path)

    state = scanned_state(project, on_disk)
    plane = {p for p in state.listing() if plane_key(str(project.resolve()), p)}
    assert len(plane) > 5

    try:
        with monkeypatch.context() as m:
            no_walk(m)
            counts = count_stats(m, plane)
            state.refresh_index(on_disk)  # a first refresh: the index holds the scan's rows; their text is filled
            assert state.index is not None and state.index.counts()["files"] == len(plane)
            state.refresh_index(on_disk)  # again: every row vouched for by the scan's stat
            assert counts == Counter() and asked == []
        changed = sorted(plane)[0]
        Path(changed).write_text(edit(Path(changed).read_text(encoding="utf-8"), "\n---\n", "\n---\nEdited.\n", 1))
        state.apply_events([changed])  # the event drops the scan's stat of that file
        with monkeypatch.context() as m:
            no_walk(m)
            counts = count_stats(m, plane)
            state.refresh_index(on_disk)
            assert set(counts) == {changed} and asked == [changed]
        assert [h.path for h in state.search("Edited", 10) or []] == [
            Path(changed).relative_to(project.resolve()).as_posix()
        ]
    finally:
        state.close()


@pytest.mark.usefixtures("home")
def test_the_scans_stat_is_the_first_stages_stamp_with_the_files_device(project):
    state = scanned_state(project)
    try:
        stat_of_a_scanned_file(state, project)
    finally:
        state.close()


def stat_of_a_scanned_file(state: ProjectState, project: Path) -> None:
    path = next(p for p in sorted(state.listing()) if plane_key(str(project.resolve()), p))
    stage = state.verdicts[state.key_of(path)]
    assert state.scan_stat(path) == freshness.lstat(path)  # stamp and device, without another stat
    other = freshness.Stat(stage.stamp, freshness.lstat(path).dev + 1)
    state._devices[os.path.dirname(path)] = other.dev  # as for a folder on another mount
    assert state.scan_stat(path) == other
    Path(path).write_text(edit(Path(path).read_text(encoding="utf-8"), "\n---\n", "\n---\nEdited.\n", 1))
    assert not stage.current()  # the stage no longer holds for the file
    state.apply_events([path])
    assert state.scan_stat(path) is None  # the event dropped the verdict, and with it the scan's stat
