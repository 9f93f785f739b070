"""The server's single scan thread (:class:`ScanJobs`, the session's ``scan_executor``) and what a shutdown does
with the jobs queued on it. A job is optional unless it is kept: an optional job (a listing, a chunk's first
stages, an index refresh or update, a search, a look at the inputs, the sweep of what killed processes left) only
saves time or answers a request, and a shutdown drops it when it has not begun; a kept job (:meth:`ScanJobs.keep`:
the scan's store writes, its publish set, the workers' stop, an index's close) writes state that is already due, or
releases what must be released, and a shutdown runs it. The thread runs jobs one at a time in the order they were
queued, so a job queued after another that writes the index runs after it, and the index's close runs last.

A shutdown does not wait for the thread (:meth:`ScanJobs.close`): ``shutdown`` is answered at once and the event
loop stays free, while the kept jobs and the close run on the thread; the interpreter joins the thread as the
process exits (after ``exit``, or when the client closes the connection), so they are done by then. Imports no
feature."""

from __future__ import annotations

import asyncio
import logging
import threading
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any, ParamSpec, TypeVar

log = logging.getLogger("memzoi_lsp")

P = ParamSpec("P")
T = TypeVar("T")


class ScanJobs(ThreadPoolExecutor):
    """A single-worker executor (the scan thread) that tells kept jobs from optional ones: :meth:`submit` (what
    ``loop.run_in_executor`` calls) queues an optional job, :meth:`keep` a kept one, and :meth:`close` (shutdown)
    cancels the optional jobs not begun and runs the kept ones, then a last job, then lets the thread end. A job
    already running is never interrupted."""

    def __init__(self) -> None:
        super().__init__(max_workers=1, thread_name_prefix="memzoi-scan")
        self._lock = threading.Lock()  # the optional futures are discarded from the worker thread as they end
        self._optional: set[Future[Any]] = set()
        self._last: Future[None] | None = None

    def submit(self, fn: Callable[P, T], /, *args: P.args, **kwargs: P.kwargs) -> Future[T]:
        """Queue an optional job: dropped by :meth:`close` when it has not begun (its future is cancelled then).
        Raises ``RuntimeError`` once the thread is closed."""
        future = super().submit(fn, *args, **kwargs)
        with self._lock:
            self._optional.add(future)
        future.add_done_callback(self._ended)
        return future

    def keep(self, fn: Callable[P, T], /, *args: P.args, **kwargs: P.kwargs) -> Future[T]:
        """Queue a kept job: :meth:`close` runs it (its future is never cancelled by the close). Raises
        ``RuntimeError`` once the thread is closed."""
        return super().submit(fn, *args, **kwargs)

    def run_kept(self, fn: Callable[P, T], /, *args: P.args, **kwargs: P.kwargs) -> asyncio.Future[T]:
        """Queue a kept job now, on the event loop, and return its result to await there. Cancelling the awaiting
        task (a shutdown cancels the scan's) does not cancel the job: it still runs, in its turn."""
        return asyncio.shield(asyncio.wrap_future(self.keep(fn, *args, **kwargs)))

    def _ended(self, future: Future[Any]) -> None:
        with self._lock:
            self._optional.discard(future)

    def close(self, last: Callable[[], None]) -> Future[None]:
        """Shutdown, without waiting (a job already running ends on its own): cancel every optional job not begun, queue ``last`` (the
        indexes' close) behind the kept jobs, and refuse new jobs from now on (``RuntimeError``: every caller that
        may run at shutdown handles it), so nothing runs after ``last``. Returns ``last``'s future; its failure is
        logged on the scan thread. A second call returns the first one's future."""
        if self._last is not None:
            return self._last
        with self._lock:
            optional = list(self._optional)
        for future in optional:
            future.cancel()  # False for the one running: it ends on its own

        def run_last() -> None:
            try:
                last()
            except Exception as err:  # noqa: BLE001 - a failed close still lets the thread end
                log.warning("closing the scan thread's state failed: %s", err)

        self._last = super().submit(run_last)
        self.shutdown(wait=False)
        return self._last


__all__ = ["ScanJobs"]
