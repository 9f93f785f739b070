"""``ChunkPool(join=False)`` (what ``memzoi check`` uses): once every result is read, the caller goes on while the
workers exit; ``join=True`` (the default) waits for them, and a pool closed early always does."""

from __future__ import annotations

import multiprocessing.util
import os
import time

import pytest

from memzoi.base.parallel import ChunkPool, can_fork

#: seconds a worker of these tests takes to exit once told to stop
_SLOW_EXIT = 2.0


_held: list[int] = []  # the worker processes whose exit is held back (one finalizer each)


def _pids_slow_to_exit(chunk: list[int]) -> list[int]:
    if os.getpid() not in _held:
        # a finalizer that runs as the worker process exits (multiprocessing's exit function), holding it back
        multiprocessing.util.Finalize(None, time.sleep, args=(_SLOW_EXIT,), exitpriority=0)
        _held.append(os.getpid())
    return [os.getpid() for _ in chunk]


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"  # a zombie has exited
    except FileNotFoundError:
        return False


def _wait_until_gone(pids: set[int]) -> None:
    deadline = time.monotonic() + 60
    while any(_alive(p) for p in pids):
        assert time.monotonic() < deadline, "the workers never exited"
        time.sleep(0.05)


def _pool(join: bool) -> ChunkPool[int, int]:
    pool: ChunkPool[int, int] = ChunkPool(_pids_slow_to_exit, workers=2, chunksize=2, start_at=2, join=join)
    for i in range(8):
        pool.add(i)
    assert pool.parallel
    return pool


@pytest.mark.skipif(not can_fork() or not os.path.isdir("/proc"), reason="forked workers and /proc")
def test_without_join_the_caller_goes_on_while_the_workers_exit():
    pool = _pool(join=False)
    pids = set(pool.results()) - {os.getpid()}
    assert pids and all(_alive(p) for p in pids)  # told to stop, still exiting: results() did not wait
    assert not pool.parallel
    pool.close()  # a later close does not wait either, nor fail
    _wait_until_gone(pids)


@pytest.mark.skipif(not can_fork() or not os.path.isdir("/proc"), reason="forked workers and /proc")
def test_with_join_the_results_come_once_the_workers_have_exited():
    pids = set(_pool(join=True).results()) - {os.getpid()}
    assert pids and not any(_alive(p) for p in pids)
