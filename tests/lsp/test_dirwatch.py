"""The language server's watchfiles watchers (:mod:`memzoi.base.dirwatch`): they never take watchfiles' timeout
return (in watchfiles 1.x ``RustNotify.watch`` clears its pending-changes set there after an unlocked look at its
size, so a notification arriving in between is lost), they still hand over every change, and a stop still ends
their thread at once.

watchfiles' ``RustNotify`` is wrapped, not replaced: every call goes to the real watcher, and the wrapper only
records the timeout each ``watch`` call is given."""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
import watchfiles.main

from memzoi.base import dirwatch
from memzoi_lsp.inboxwatch import CandidateWatch
from memzoi_lsp.watch import _Watcher

WAIT_S = 60  # the bound of every wait for a condition (a loaded machine); never a sleep


@pytest.fixture
def timeouts(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The ``timeout_ms`` of every ``RustNotify.watch`` call made while the test runs."""
    seen: list[int] = []
    real = watchfiles.main.RustNotify

    class Recording:
        def __init__(self, *args: Any) -> None:
            self._notify = real(*args)

        def watch(self, debounce_ms: int, step_ms: int, timeout_ms: int, stop_event: Any) -> Any:
            seen.append(timeout_ms)
            return self._notify.watch(debounce_ms, step_ms, timeout_ms, stop_event)

        def __enter__(self) -> Recording:
            return self

        def __exit__(self, *exc: object) -> None:
            self._notify.close()

    monkeypatch.setattr(watchfiles.main, "RustNotify", Recording)
    return seen


async def _until(condition: Any) -> None:
    """Wait (yielding to the loop) until ``condition()`` holds; fail after :data:`WAIT_S`."""
    async with asyncio.timeout(WAIT_S):
        while not condition():
            await asyncio.sleep(0.01)  # a poll of the condition, not a wait for time to pass


async def test_the_memzoi_watcher_hands_over_every_file_without_a_timeout_and_stops_at_once(
    tmp_path: Path, timeouts: list[int]
):
    got: set[Path] = set()
    ls = SimpleNamespace(loop=asyncio.get_running_loop())
    watcher = _Watcher(ls, got.update)  # type: ignore[arg-type]  # only ``loop`` is read
    watcher.add(tmp_path)
    await _until(lambda: timeouts)  # the watches are in place once the first wait has begun
    written = set()
    for i in range(60):
        path = tmp_path / f"r{i}.md"
        path.write_text(f"record {i}\n", encoding="utf-8")
        written.add(path)
    await _until(lambda: written <= got)
    assert timeouts and set(timeouts) == {0}
    watcher.stop()  # joins its threads (1 s at most each)
    assert not any(t.is_alive() for t in watcher.threads)


async def test_removing_a_directory_ends_its_thread_only(tmp_path: Path, timeouts: list[int]):
    ls = SimpleNamespace(loop=asyncio.get_running_loop())
    watcher = _Watcher(ls, lambda paths: None)  # type: ignore[arg-type]
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    watcher.add(tmp_path / "a")
    watcher.add(tmp_path / "b")
    first, second = watcher.threads
    watcher.remove(tmp_path / "a")
    await asyncio.to_thread(first.join, WAIT_S)
    assert not first.is_alive() and second.is_alive()
    watcher.stop()
    assert not second.is_alive()


async def test_the_candidate_watcher_waits_without_a_timeout_and_stops_at_once(tmp_path: Path, timeouts: list[int]):
    scheduled = threading.Event()
    ls = SimpleNamespace(loop=asyncio.get_running_loop(), stopping=False)
    watch = CandidateWatch(ls)  # type: ignore[arg-type]  # only ``loop`` and ``stopping`` are read
    watch._schedule = scheduled.set  # type: ignore[method-assign]  # the signature check is not under test
    watch.thread = threading.Thread(target=watch._run, args=(tmp_path, "candidates.db"), daemon=True)
    watch.thread.start()
    await _until(lambda: timeouts)
    (tmp_path / "unrelated.txt").write_text("x", encoding="utf-8")
    (tmp_path / "candidates.db-wal").write_bytes(b"x")
    await _until(scheduled.is_set)
    assert set(timeouts) == {0}
    watch.stop()
    assert not watch.thread.is_alive()


def test_a_missing_directory_raises_for_the_caller_to_log(tmp_path: Path):
    stop = threading.Event()
    with pytest.raises(FileNotFoundError):
        next(dirwatch.changed_paths(tmp_path / "absent", stop=stop))


async def test_ready_is_called_once_the_watches_exist_and_once_a_watcher_ends_without_them(tmp_path: Path):
    """``ready`` (the language server's sign to list its project once after its scan): a file written right after
    it is reported; a watcher that could not watch still calls it, so nobody waits for it forever."""
    got: set[Path] = set()
    calls: list[str] = []
    ready = threading.Event()
    ls = SimpleNamespace(loop=asyncio.get_running_loop())
    watcher = _Watcher(ls, got.update)  # type: ignore[arg-type]  # only ``loop`` is read
    watcher.add(tmp_path, lambda: (calls.append("ready"), ready.set()))
    await asyncio.to_thread(ready.wait, WAIT_S)
    written = tmp_path / "right-after.md"
    written.write_text("record\n", encoding="utf-8")
    await _until(lambda: written in got)
    watcher.stop()
    assert calls == ["ready", "ready"]  # at the first poll, and (idempotent for its caller) as the thread ends
    missing: list[str] = []
    gone = _Watcher(ls, got.update)  # type: ignore[arg-type]
    gone.add(tmp_path / "absent", lambda: missing.append("ready"))
    await asyncio.to_thread(gone.threads[0].join, WAIT_S)
    assert missing == ["ready"]
