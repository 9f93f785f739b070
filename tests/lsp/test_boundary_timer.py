"""The server's timer for retention boundaries (``memzoi_lsp.inputs.InputFollow.arm``, issue 29): set for the
earliest boundary still to pass, with the clock the core injects (``now``), kept while that instant stays the
earliest, moved when an earlier one appears, and gone when none is left. Nothing here waits for the clock: the
timer's instant and delay are read, and its firing is called directly."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta
from pathlib import Path
from types import SimpleNamespace

from memzoi_lsp import inputs
from memzoi_lsp.tasks import Tasks

from ..builders import record, record_path, write


class _Project:
    """What the timer reads of a project: its earliest boundary, and what passed by a given instant."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.boundaries: list[datetime] = []

    def next_boundary(self) -> datetime | None:
        return min(self.boundaries, default=None)

    def passed_boundaries(self, now: datetime) -> list[str]:
        passed = [b for b in self.boundaries if b <= now]
        self.boundaries = [b for b in self.boundaries if b > now]
        return [b.isoformat() for b in passed]


def test_the_timer_is_set_for_the_earliest_boundary_and_moves_with_it(tmp_path: Path):
    loop = asyncio.new_event_loop()
    try:
        project = _Project(tmp_path)
        republished: list[set[str]] = []
        forgotten: list[str] = []
        ls = SimpleNamespace(
            loop=loop,
            stopping=False,
            projects={tmp_path: project},
            docs=SimpleNamespace(forget=forgotten.append),
            republish=republished.append,
        )
        follow = inputs.InputFollow(ls, Tasks())  # the session: what the timer reads of it
        now = datetime(2026, 7, 1, tzinfo=UTC)
        follow.arm(project, now=now)
        assert project not in follow.timers  # no boundary: no timer
        later, earlier = now + timedelta(hours=2), now + timedelta(minutes=5)
        project.boundaries = [later]
        follow.arm(project, now=now)
        when, handle = follow.timers[project]
        assert when == later and abs(handle.when() - loop.time() - 7200) < 60
        follow.arm(project, now=now)
        assert follow.timers[project][1] is handle  # the same instant: the same timer
        project.boundaries.append(earlier)
        follow.arm(project, now=now)
        when, moved = follow.timers[project]
        assert when == earlier and moved is not handle and handle.cancelled()
        assert abs(moved.when() - loop.time() - 300) < 60
        # It fires: what passed by the core's clock is re-diagnosed, and the timer is set for the next boundary.
        follow._fire(project)  # (these instants of 2026-07 have passed by the real clock the timer reads)
        passed = {earlier.isoformat(), later.isoformat()}
        assert republished == [passed] and set(forgotten) == passed
        assert project not in follow.timers  # nothing left to wait for
        project.boundaries = [now + timedelta(days=1)]
        follow.arm(project, now=now)
        handle = follow.timers[project][1]
        follow.stop()  # shutdown: the feature's timers go with it
        assert handle.cancelled() and project not in follow.timers
    finally:
        for _, handle in list(follow.timers.values()) if "follow" in locals() else []:
            handle.cancel()
        loop.close()


def test_a_real_project_gives_the_timer_its_records_boundary(tmp_path: Path):
    """The core's ``next_boundary`` of a scanned project is the episodic record's boundary (the clock injected)."""
    from memzoi.project.verdict import ProjectContext
    from memzoi.runs.projectstate import ProjectState
    from memzoi.runs.scanverdicts import analyse

    root = tmp_path / "ws"
    write(
        root,
        record_path("episode"),
        record("episode", lane="episodic", retention={"occurred_at": "2026-06-01T00:00:00Z"}),
    )
    state = ProjectState(root)
    paths = state.listing()
    state.adopt(paths)
    ctx = ProjectContext.of(state.memzoi_dir, now=datetime(2026, 6, 15, tzinfo=UTC), git=state.git)
    for got in analyse(paths, ctx, index_root=root, workers=1):
        assert got is not None
        state.verdicts[got.verdict.path] = got.verdict
    assert state.next_boundary() == datetime(2026, 7, 1, tzinfo=UTC)
