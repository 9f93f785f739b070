"""Re-judging closed files when an input other than the file changes: the project's configuration
(``.memzoi/config.toml``: every file is graded again, its first stage made again) and git's state (``HEAD``, the
index, refs, ``info/exclude``, the ``.gitignore`` files: admission is asked again). The core decides what changed
and drops what it invalidates (:meth:`memzoi.runs.projectstate.ProjectState.input_changes`); this module looks every
:data:`POLL_S` seconds once the project's first scan is done (on the scan thread, a few small reads and stats:
the ``.gitignore`` files outside ``.memzoi`` and the git directory are not watched), then forgets the document
cache's analyses on a configuration change, re-diagnoses every file and refreshes the index. At each look it
also re-diagnoses the closed files whose retention boundary has passed (:func:`boundaries`).
"""

from __future__ import annotations

import asyncio
import logging
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from memzoi.runs.projectstate import InputChanges

    from .project import Project
    from .session import Session

log = logging.getLogger("memzoi_lsp.inputs")

#: Seconds between two looks at a project's configuration and git state.
POLL_S = 1.0


def follow(ls: Session, project: Project) -> None:
    """Start looking at ``project``'s inputs (after its first scan); stops with the server."""
    if not ls.stopping and ls.loop is not None:
        ls.spawn(_follow(ls, project))


async def _follow(ls: Session, project: Project) -> None:
    loop = asyncio.get_running_loop()
    while not ls.stopping:
        await asyncio.sleep(POLL_S)  # a period, not a wait for a condition
        if ls.stopping or ls.projects.get(project.root) is not project:
            return
        boundaries(ls, project)
        try:
            changes = await loop.run_in_executor(ls.scan_executor, project.input_changes)
        except RuntimeError:  # the executor is shut down: the server is stopping
            return
        except Exception as err:  # noqa: BLE001 - a failed look never stops the server; the next one retries
            log.warning("looking at the inputs of %s failed: %s", project.root, err)
            continue
        if changes.any:
            rejudge(ls, project, changes)


def boundaries(ls: Session, project: Project) -> None:
    """Re-diagnose the closed files whose retention boundary has passed since they were judged
    (:meth:`memzoi.runs.projectstate.ProjectState.passed_boundaries`); their cached analyses are forgotten first (an
    analysis holds ``retention_query_only`` at the clock it was made)."""
    from memzoi.base.clock import utc_now  # noqa: PLC0415 lazy: start-up

    passed = project.passed_boundaries(utc_now())
    if passed:
        for uri in passed:
            ls.docs.forget(uri)
        ls.republish(set(passed))


def rejudge(ls: Session, project: Project, changes: InputChanges) -> None:
    """Re-diagnose every file of ``project`` after ``changes`` (analyses made under the old configuration are
    forgotten first) and refresh its index (which re-judges the same inputs, :mod:`memzoi.stores.index_fresh`)."""
    from . import indexing  # noqa: PLC0415 lazy: start-up

    log.info(
        "%s changed for %s: judging every file again", "configuration" if changes.config else "git state", project.root
    )
    if changes.config:
        for uri in project.files:
            ls.docs.forget(uri)
    ls.refresh_all()
    ls.spawn(indexing.refresh(ls, project))


__all__ = ["POLL_S", "boundaries", "follow", "rejudge"]
