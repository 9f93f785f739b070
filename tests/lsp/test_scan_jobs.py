"""The scan thread's jobs at shutdown (``memzoi_lsp.scanjobs``): the optional jobs not begun are dropped, the kept
ones run in their order, the last job (the indexes' close) runs after every one of them and nothing can be queued
after it; a job already running is never interrupted, and the close never waits for it. The server-level case (a real shutdown right after a scan) is ``tests/lsp/test_shutdown.py``."""

from __future__ import annotations

import asyncio
import logging
import threading

import pytest
from hypothesis import given, settings, strategies as st

from memzoi_lsp.scanjobs import ScanJobs


def _held(jobs: ScanJobs) -> threading.Event:
    """Hold the scan thread with a running job until the returned event is set."""
    release, running = threading.Event(), threading.Event()

    def hold() -> None:
        running.set()
        release.wait(30)

    jobs.submit(hold)
    assert running.wait(30)
    return release


@settings(max_examples=40, deadline=None)
@given(st.lists(st.booleans(), max_size=12))
def test_a_close_runs_the_kept_jobs_in_order_then_the_last_and_drops_the_rest(kinds: list[bool]) -> None:
    jobs = ScanJobs()
    release = _held(jobs)
    ran: list[str] = []
    futures = []
    for i, kept in enumerate(kinds):
        name = f"{'kept' if kept else 'optional'}-{i}"
        futures.append((kept, (jobs.keep if kept else jobs.submit)(ran.append, name)))
    last = jobs.close(lambda: ran.append("last"))
    with pytest.raises(RuntimeError):
        jobs.submit(ran.append, "after")
    with pytest.raises(RuntimeError):
        jobs.keep(ran.append, "after")
    release.set()
    last.result(30)
    jobs.shutdown(wait=True)
    assert ran == [f"kept-{i}" for i, kept in enumerate(kinds) if kept] + ["last"]
    assert all(future.cancelled() != kept for kept, future in futures)
    assert jobs.close(lambda: ran.append("again")) is last  # a second close: the first one's


async def test_a_kept_job_outlives_the_task_awaiting_it() -> None:
    jobs = ScanJobs()
    release = _held(jobs)
    saved = threading.Event()
    waiter = asyncio.ensure_future(jobs.run_kept(saved.set))
    await asyncio.sleep(0)  # the task awaits the job
    waiter.cancel()  # as a shutdown cancels the scan's task
    with pytest.raises(asyncio.CancelledError):
        await waiter
    closed = jobs.close(lambda: None)
    release.set()
    closed.result(30)
    assert saved.is_set()


async def test_an_optional_job_awaited_from_the_loop_is_cancelled_by_the_close() -> None:
    jobs = ScanJobs()
    release = _held(jobs)
    refresh = asyncio.get_running_loop().run_in_executor(jobs, lambda: "refreshed")
    closed = jobs.close(lambda: None)
    with pytest.raises(asyncio.CancelledError):
        await refresh
    release.set()
    closed.result(30)


def test_the_close_never_waits_and_the_last_job_runs_before_the_thread_ends() -> None:
    jobs = ScanJobs()
    release = _held(jobs)  # a job that began before the shutdown and runs on
    closed = threading.Event()
    last = jobs.close(closed.set)  # returns while that job still runs: nothing waited for it
    assert not last.done() and not closed.is_set()
    release.set()
    jobs.shutdown(wait=True)  # as the process's exit joins the thread
    assert closed.is_set()


def test_a_failing_last_job_is_logged_and_the_thread_ends(caplog: pytest.LogCaptureFixture) -> None:
    jobs = ScanJobs()

    def broken() -> None:
        raise OSError("disk gone")

    with caplog.at_level(logging.WARNING, logger="memzoi_lsp"):
        jobs.close(broken).result(30)
        jobs.shutdown(wait=True)
    assert "disk gone" in caplog.text
