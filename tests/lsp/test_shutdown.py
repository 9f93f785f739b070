"""A shutdown right after the workspace scan: the scan's durable writes queued on the scan thread (its publish set)
are finished, optional work queued with them is dropped, and ``shutdown`` is still answered while a job that began
before it runs on. The next start then replays the stored publish set (its "scanned" message says so, as in
``tests/lsp/test_publish_set.py``) instead of judging every file again.

A seam in the server's process (a ``sitecustomize`` module) queues two jobs on the scan thread as the scan's
progress ends, ahead of the publish set's save: one that holds the thread (until the shutdown has closed the
thread to new work, or until the test releases it) and an optional one that leaves a mark when it runs. The
order is fixed by the seam, not by timing. The thread's queue and the index's close are unit-tested in
``tests/lsp/test_scan_jobs.py``.
"""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

from .conftest import start_client
from .test_publish_set import REPLAYED, _project, assert_never_stale, expected, session

SEAM = """
import os
import pathlib
import time

import memzoi_lsp.scan as scan

_real = scan._finish
_HOLD = os.environ["MEMZOI_TEST_HOLD"]  # "shutdown", or the file that releases the hold
_MARK = pathlib.Path(os.environ["MEMZOI_TEST_MARK"])
_queued = []


def _hold(executor):
    # Holds the scan thread until the shutdown closed it to new work (the stdlib's executor sets `_shutdown` and
    # cancels what it cancels under `_shutdown_lock`, so the queue's fate is decided once the lock is free), or
    # until the release file exists. Polled: neither condition has an event to wait on.
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if _HOLD == "shutdown" and executor._shutdown:
            with executor._shutdown_lock:
                return
        if _HOLD != "shutdown" and os.path.exists(_HOLD):
            return
        time.sleep(0.005)


def _finish(ls, project, start, token):
    messages = _real(ls, project, start, token)  # the scan's progress ends here; its publish set is queued next
    if not _queued:
        _queued.append(True)
        ls.scan_executor.submit(_hold, ls.scan_executor)
        ls.scan_executor.submit(_MARK.touch)  # optional work ahead of the save (as an index update or a look)
    return messages


scan._finish = _finish
"""


def _seam(tmp_path: Path, hold: str, mark: Path) -> dict[str, str]:
    """The server's environment with the seam on its path."""
    site = tmp_path / "site"
    site.mkdir(exist_ok=True)
    (site / "sitecustomize.py").write_text(SEAM, encoding="utf-8")
    path = os.pathsep.join([str(site), os.environ.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    return {"PYTHONPATH": path, "MEMZOI_TEST_HOLD": hold, "MEMZOI_TEST_MARK": str(mark)}


async def test_a_shutdown_right_after_the_scan_keeps_its_publish_set(tmp_path: Path, memzoi_home: Path):
    root = _project(tmp_path)
    mark = tmp_path / "optional-job-ran"
    _, scanned = await session(root, memzoi_home, env=_seam(tmp_path, "shutdown", mark))
    assert REPLAYED not in scanned, scanned
    assert not mark.exists()  # the optional job queued ahead of the save was dropped, not run
    want = expected(root, memzoi_home)
    history, scanned = await session(root, memzoi_home)
    assert REPLAYED in scanned, scanned  # the save queued behind the other jobs was not cancelled
    assert_never_stale(history, want, root)


async def test_shutdown_is_answered_while_a_job_runs_and_the_save_follows(tmp_path: Path, memzoi_home: Path):
    root = _project(tmp_path)
    mark = tmp_path / "optional-job-ran"
    release = tmp_path / "release"
    client = await start_client("vscode", root, memzoi_home, env=_seam(tmp_path, str(release), mark))
    try:
        # answered while the job that held the scan thread before the shutdown still runs (a hang guard only)
        await asyncio.wait_for(client.shutdown_async(None), 20)
    finally:
        release.touch()
    client.exit(None)
    try:
        await asyncio.wait_for(client._server.wait(), 20)  # the save and the index's close run before the exit
    finally:
        await client.stop()
    assert not mark.exists()
    _, scanned = await session(root, memzoi_home)
    assert REPLAYED in scanned, scanned
