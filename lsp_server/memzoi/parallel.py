"""Running a pure, CPU-bound function over many files in forked worker processes.

Analysis is pure Python and holds the GIL, so on a multi-core machine a large workspace is only analysed faster
in several processes. Workers are started with ``fork`` (they inherit the imported modules, so start-up costs
milliseconds) and only from a single-threaded process: forking a threaded process such as the language server
can deadlock in the child, and ``spawn`` would re-run the caller's main module. Everywhere else the work runs in
the calling process, with identical results. Used by ``memzoi check`` and ``memzoi rebuild``.
"""

from __future__ import annotations

import gc
import os
from collections.abc import Callable, Sequence
from typing import TypeVar

J = TypeVar("J")
R = TypeVar("R")


def cpu_count() -> int:
    """CPUs this process may run on (its affinity mask where the OS has one), at least 1."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def can_fork() -> bool:
    """True when worker processes may be forked here: the platform has ``fork`` and this process runs one
    thread (see the module docstring). macOS is excluded: system libraries there are not fork-safe."""
    import multiprocessing
    import sys
    import threading

    return ("fork" in multiprocessing.get_all_start_methods() and sys.platform != "darwin"
            and threading.active_count() == 1)


def _start_worker() -> None:
    # The modules inherited from the parent never become garbage: moving them out of the collector's generations
    # keeps each collection in the worker proportional to what the analysis itself allocates.
    gc.freeze()


def fork_map(fn: Callable[[J], R], jobs: Sequence[J], *, workers: int, chunksize: int,
             on_result: Callable[[int], None] | None = None) -> list[R] | None:
    """``[fn(job) for job in jobs]`` computed in ``workers`` forked processes, in order.

    ``fn`` and every job and result must be picklable (``fn`` a module-level function). ``on_result(i)`` is
    called in this process after the ``i``-th result (1-based) arrives, for progress. Returns ``None`` without
    doing anything when fewer than two workers are asked for or :func:`can_fork` is false, and ``None`` when a
    worker dies (killed, out of memory) or cannot be started: the caller then does the work in-process.
    """
    if workers < 2 or not can_fork():
        return None
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor
    from concurrent.futures.process import BrokenProcessPool

    out: list[R] = []
    try:
        with ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context("fork"),
                                 initializer=_start_worker) as pool:
            for i, result in enumerate(pool.map(fn, jobs, chunksize=max(1, chunksize)), 1):
                out.append(result)
                if on_result is not None:
                    on_result(i)
    except (BrokenProcessPool, OSError):
        return None
    return out


__all__ = ["can_fork", "cpu_count", "fork_map"]
