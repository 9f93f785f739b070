"""Background tasks of one owner: each feature that runs work in the background (the scan, the watch pass's index
updates, the inbox watch) holds a :class:`Tasks` of its own and cancels it when it stops (docs/architecture.md,
"Features over snapshots"). Imports no feature."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Coroutine
from typing import Any

log = logging.getLogger("memzoi_lsp")


class Tasks:
    """The background tasks of one feature, on the event loop: each kept until it is done (the loop keeps only a
    weak reference to a task), its failure logged; all cancelled at once by :meth:`cancel` (shutdown)."""

    def __init__(self) -> None:
        self._tasks: set[asyncio.Task[Any]] = set()

    def spawn(self, coro: Coroutine[Any, Any, Any]) -> asyncio.Task[Any]:
        """Run ``coro`` in the background (on the running loop), keeping a reference and logging its failure."""
        task: asyncio.Task[Any] = asyncio.ensure_future(coro)
        self._tasks.add(task)

        def done(t: asyncio.Task[Any]) -> None:
            self._tasks.discard(t)
            if not t.cancelled() and t.exception() is not None:
                log.error("background task failed", exc_info=t.exception())

        task.add_done_callback(done)
        return task

    def cancel(self) -> None:
        """Cancel every task not done yet."""
        for task in list(self._tasks):
            task.cancel()

    def __len__(self) -> int:
        return len(self._tasks)


__all__ = ["Tasks"]
