"""Re-judging closed files when an input other than the file changes: the project's configuration
(``.memzoi/config.toml``: every file is graded again, its first stage made again) and git's state (``HEAD``, the
index, refs, ``info/exclude``, the ``.gitignore`` files: admission is asked again). The core decides what changed
and drops what it invalidates (:meth:`memzoi.runs.projectstate.ProjectState.input_changes`, on the event loop); this
module looks every :data:`POLL_S` seconds once the project's first scan is done (the reading on the scan thread, a
few small reads and stats: the ``.gitignore`` files outside ``.memzoi`` and the git directory are not watched; git
is asked again there too), then forgets the document
cache's analyses on a configuration change, re-diagnoses every file and refreshes the index. A timer set for the
earliest retention boundary still to pass (:meth:`memzoi.runs.projectstate.ProjectState.next_boundary`, set again
at each look, so a file judged since with an earlier boundary moves it) re-diagnoses the closed files whose
boundary has passed (:func:`boundaries`), at that instant rather than at the next look. The looks and the timers
are :class:`InputFollow`'s, which the scan feature holds.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import weakref
from datetime import datetime
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from memzoi.runs.projectstate import InputChanges

    from .project import Project
    from .session import InputSession
    from .tasks import Tasks

log = logging.getLogger("memzoi_lsp.inputs")

#: Seconds between two looks at a project's configuration and git state.
POLL_S = 1.0


class InputFollow:
    """The follow-up of the scanned projects' inputs, held by the scan feature (:class:`memzoi_lsp.scan.Scanning`):
    its looks run as the feature's ``tasks``, and it owns each project's boundary timer (``timers``: the instant it
    is set for and its handle on the event loop), all cancelled by :meth:`stop` (shutdown)."""

    def __init__(self, ls: InputSession, tasks: Tasks) -> None:
        self._ls = ls
        self._tasks = tasks
        self.timers: weakref.WeakKeyDictionary[Project, tuple[datetime, asyncio.TimerHandle]] = (
            weakref.WeakKeyDictionary()
        )

    def follow(self, project: Project) -> None:
        """Start looking at ``project``'s inputs (after its first scan); stops with the server."""
        if not self._ls.stopping and self._ls.loop is not None:
            self._tasks.spawn(self._follow(project))

    async def _follow(self, project: Project) -> None:
        from memzoi.runs.leftovers import sweep_once  # noqa: PLC0415 lazy: start-up

        ls = self._ls
        loop = asyncio.get_running_loop()
        swept = False
        while not ls.stopping:
            await asyncio.sleep(POLL_S)  # a period, not a wait for a condition
            if ls.stopping or ls.projects.get(project.root) is not project:
                self._disarm(project)
                return
            if not swept:  # what killed processes left in the memzoi home goes, once per process, a period after the
                swept = True  # first scan: behind the scan's own last writes on the scan thread (its publish set)
                with contextlib.suppress(RuntimeError):  # the executor is shut down: the server is stopping
                    await loop.run_in_executor(ls.scan_executor, sweep_once)
            self.arm(project)
            try:  # read on the scan thread; the state changes here, on the loop (issue 32)
                now = await loop.run_in_executor(ls.scan_executor, project.inputs_now)
                changes = project.input_changes(now, ask_git=False)
                if changes.git:  # git asked again for every file, off the loop, before anything is judged again
                    await loop.run_in_executor(ls.scan_executor, project.ask_git)
            except RuntimeError:  # the executor is shut down: the server is stopping
                return
            except Exception as err:  # noqa: BLE001 - a failed look never stops the server; the next one retries
                log.warning("looking at the inputs of %s failed: %s", project.root, err)
                continue
            if changes.any and not ls.stopping:
                rejudge(ls, project, changes, self._tasks)

    def arm(self, project: Project, now: datetime | None = None) -> None:
        """Set ``project``'s timer for its earliest retention boundary still to pass (none when there is none; kept
        when it is already set for that instant). When it fires, :func:`boundaries` re-diagnoses what passed and
        the timer is set again. ``now``: the clock (:func:`memzoi.base.clock.utc_now`)."""
        from memzoi.base.clock import utc_now  # noqa: PLC0415 lazy: start-up

        ls = self._ls
        when = project.next_boundary()
        held = self.timers.get(project)
        if held is not None and held[0] == when:
            return
        self._disarm(project)
        if when is None or ls.loop is None or ls.stopping:
            return
        delay = max(0.0, (when - (now or utc_now())).total_seconds())
        self.timers[project] = (when, ls.loop.call_later(delay, self._fire, project))

    def _fire(self, project: Project) -> None:
        self.timers.pop(project, None)
        if self._ls.stopping or self._ls.projects.get(project.root) is not project:
            return
        boundaries(self._ls, project)
        self.arm(project)

    def _disarm(self, project: Project) -> None:
        held = self.timers.pop(project, None)
        if held is not None:
            held[1].cancel()

    def stop(self) -> None:
        """Cancel every project's boundary timer (shutdown; the looks are the feature's tasks)."""
        for project in list(self.timers):
            self._disarm(project)


def boundaries(ls: InputSession, project: Project) -> None:
    """Re-diagnose the closed files whose retention boundary has passed since they were judged
    (:meth:`memzoi.runs.projectstate.ProjectState.passed_boundaries`); their cached analyses are forgotten first (an
    analysis holds ``retention_query_only`` at the clock it was made)."""
    from memzoi.base.clock import utc_now  # noqa: PLC0415 lazy: start-up

    passed = project.passed_boundaries(utc_now())
    if passed:
        for uri in passed:
            ls.docs.forget(uri)
        ls.republish(set(passed))


def rejudge(ls: InputSession, project: Project, changes: InputChanges, tasks: Tasks) -> None:
    """Re-diagnose every file of ``project`` after ``changes`` (analyses made under the old configuration are
    forgotten first) and refresh its index (which re-judges the same inputs, :mod:`memzoi.stores.index_fresh`) as one
    of ``tasks``."""
    from . import indexing  # noqa: PLC0415 lazy: start-up

    log.info(
        "%s changed for %s: judging every file again", "configuration" if changes.config else "git state", project.root
    )
    if changes.config:
        from memzoi.judge.configplain import CONFIG_NAME  # noqa: PLC0415 lazy: start-up

        from .documents import path_to_uri  # noqa: PLC0415 lazy: start-up

        for uri in project.files:
            ls.docs.forget(uri)
        # the configuration's own findings (invalid_config) too: a client that sends no file event for it (or
        # none at all) would otherwise never see them, closed and not yet shown
        config_uri = path_to_uri(project.root / ".memzoi" / CONFIG_NAME)
        ls.docs.forget(config_uri)
        ls.republish({config_uri})
    ls.refresh_all()
    tasks.spawn(indexing.refresh(ls, project))


__all__ = ["POLL_S", "InputFollow", "boundaries", "rejudge"]
