"""Running a pure, CPU-bound function over many files in worker processes.

Analysis is pure Python and holds the GIL, so on a multi-core machine a large workspace is only analysed faster
in several processes. Workers are started with ``fork`` (they inherit the imported modules, so start-up costs
milliseconds) and only from a single-threaded process: forking a threaded process such as the language server
can deadlock in the child, and ``spawn`` would re-run the caller's main module. A threaded caller that asks for
it (``helper=True``: the language server's scan and index) gets its workers from a fork server instead: one
helper process, started once, single-threaded, that has imported the worker's module and forks each worker.
Everywhere else the work runs in the calling process, with identical results. Used by ``memzoi check``,
``memzoi rebuild`` and the language server.

The fork server's socket lives in a folder the caller owns in the memzoi home (:mod:`memzoi.base.forktemp`), not
in a ``pymp-`` folder of ``$TMPDIR`` that a killed caller would leave there.

A worker's standard output is its standard error: the server's output is its JSON-RPC channel, and ``check``'s
may be a JSON report, which no stray write of a worker may corrupt.
"""

from __future__ import annotations

import gc
import importlib
import os
import sys
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from .forktemp import own_temp_dir

if TYPE_CHECKING:  # multiprocessing loads only when a pool starts
    from multiprocessing.context import BaseContext

J = TypeVar("J")
R = TypeVar("R")


#: What every worker runs: imported before workers fork (or by the fork server), so no worker imports it.
PRELOAD = (
    "memzoi.judge.analysis",
    "memzoi.project.verdict",
    "memzoi.safety",
    "memzoi.safety.prepared",  # compiles the detectors' hyperscan prefilter once
    "memzoi.judge.policy",
    "memzoi.base.views",
)


#: Guided chunk sizes (``ChunkPool(total=...)``): a chunk is at most a ``1 / (workers * GUIDE)`` share of the jobs
#: left, and never below :data:`GUIDED_LEAST` jobs (a chunk costs a round trip to a worker).
GUIDE = 2
GUIDED_LEAST = 16


def cpu_count() -> int:
    """CPUs this process may run on (its affinity mask where the OS has one), at least 1."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def can_fork() -> bool:
    """True when worker processes may be forked here: the platform has ``fork`` and this process runs one
    thread (see the module docstring). macOS is excluded: system libraries there are not fork-safe."""
    import multiprocessing  # noqa: PLC0415 lazy: start-up
    import threading  # noqa: PLC0415 lazy: start-up

    return (
        "fork" in multiprocessing.get_all_start_methods() and sys.platform != "darwin" and threading.active_count() == 1
    )


def can_use_helper() -> bool:
    """True when a threaded process may get workers from a fork server here (Linux: the helper is a fresh,
    single-threaded interpreter, so forking it is safe)."""
    import multiprocessing  # noqa: PLC0415 lazy: start-up

    return sys.platform.startswith("linux") and "forkserver" in multiprocessing.get_all_start_methods()


def start_helper(module: str) -> bool:
    """Start the fork server of a threaded caller now (:func:`can_use_helper`), preloading ``module`` (the module of
    the function its workers will run) and :data:`PRELOAD`, as a :class:`ChunkPool` with ``helper`` would when its
    first chunk is sent: its imports (some 0.3 s of CPU) then run beside the caller's own work instead of before
    its first worker can start. Returns at once (the fork server imports in its own process; a worker's start
    waits for it). False where there is no fork server; never raises."""
    if not can_use_helper():
        return False
    import multiprocessing  # noqa: PLC0415 lazy: start-up
    from multiprocessing import forkserver  # noqa: PLC0415 lazy: start-up

    try:
        multiprocessing.get_context("forkserver").set_forkserver_preload([module, *PRELOAD])
        own_temp_dir()
        forkserver.ensure_running()
    except (OSError, ValueError):
        return False
    return True


def fork_helper(module: str) -> bool:
    """:func:`start_helper`, the fork server made by forking this process rather than by starting an interpreter:
    it then holds this process's imports (the analysis, which the caller has loaded) instead of importing them a
    second time (some 0.3 s of CPU; issue 29: cold server scan); what of ``module`` and :data:`PRELOAD` the caller
    has not imported (the detectors' prefilter, about 10 MB) the fork server imports, not the caller.
    Only while this process runs one thread (see the module docstring), so call it before any thread starts; the
    child keeps the descriptors a started fork server would (standard input, output and error, its socket and
    pipe), logs as a fresh interpreter does (no handler of this process's: the language server's log bridge writes
    to its client) and runs the standard library's fork server code as given. False where that is not possible or
    a fork server runs already (nothing was started); never raises."""
    if not can_use_helper():
        return False
    import multiprocessing  # noqa: PLC0415 lazy: start-up
    import threading  # noqa: PLC0415 lazy: start-up
    from multiprocessing import forkserver, resource_tracker, util  # noqa: PLC0415 lazy: start-up

    server = getattr(forkserver, "_forkserver", None)
    if threading.active_count() != 1 or getattr(server, "_forkserver_pid", True) is not None:
        return False
    spawn = util.spawnv_passfds
    try:
        multiprocessing.get_context("forkserver").set_forkserver_preload([module, *PRELOAD])
        resource_tracker.ensure_running()  # as a started fork server's caller does, before the fork
        own_temp_dir()
        util.spawnv_passfds = _forked  # type: ignore[assignment]  # the one call that starts the interpreter
        try:
            forkserver.ensure_running()
        finally:
            util.spawnv_passfds = spawn
    except (OSError, ValueError):
        return False
    return True


def _forked(path: str, args: list[str], passfds: tuple[int, ...]) -> int:
    """What :func:`multiprocessing.util.spawnv_passfds` does for the fork server (``args``: the interpreter, its
    flags, ``-c`` and the code to run), by a fork of this process: the child closes every descriptor but 0, 1, 2
    and ``passfds`` and runs that code; returns the child's pid."""
    pid = os.fork()
    if pid:
        return pid
    code = 1
    try:
        below = 0
        for fd in sorted({0, 1, 2, *passfds}):
            if below < fd:  # an empty range is not passed on (Python 3.11 closed from its start then)
                os.closerange(below, fd)
            below = fd + 1
        os.closerange(below, max(below, os.sysconf("SC_OPEN_MAX")))
        _fresh_logging()
        # As a started interpreter, collecting (a caller may have held the collector for its start-up); what it
        # inherited is never garbage, and moved out of the collector's sight stays shared with the caller's pages.
        gc.freeze()
        gc.enable()
        exec(args[-1], {"__name__": "__mp_main__"})  # noqa: S102  # the standard library's fork server command
        code = 0
    except SystemExit as done:  # the fork server ends once its parent is gone
        code = done.code if isinstance(done.code, int) else 0
    except BaseException:  # noqa: BLE001  # never back into the parent's code
        code = 1
    finally:
        os._exit(code)


def _fresh_logging() -> None:
    """Logging as in a started interpreter: no handler anywhere (Python's last resort prints warnings to standard
    error), every logger at its default level."""
    import logging  # noqa: PLC0415 lazy: start-up

    for logger in [logging.getLogger(), *logging.Logger.manager.loggerDict.values()]:
        if isinstance(logger, logging.Logger):
            logger.handlers.clear()
            logger.setLevel(logging.NOTSET)
            logger.propagate = True
    logging.getLogger().setLevel(logging.WARNING)


def start_worker(parent: int | None) -> None:
    """Set up a process forked to work for ``parent`` (its pid; ``None``: its parent): a pool's worker, or another
    process of the fork server's (:mod:`memzoi.runs.prefill`). See the comment for why."""
    # The modules inherited from the parent never become garbage: out of the collector's generations they stay
    # shared with the parent's pages. And the collector is off for the worker's life, as `memzoi check`'s workers
    # inherit it off (memzoi.runs.check): a chunk's work makes no reference cycles, so reference counting frees it
    # all, and the young collections only rescanned each chunk's results as they grew (3 % of a language-server
    # scan's analysis, 10-15 us a file at 10,000 records; issue 29, cold server scan).
    gc.freeze()
    gc.disable()
    try:
        os.dup2(2, 1)  # see the module docstring: nothing a worker writes reaches the caller's output
    except OSError:
        pass
    _die_with(os.getppid() if parent is None else parent)


def _die_with(parent: int) -> None:
    """Ask Linux to end this worker when ``parent`` dies (killed, or ended without stopping its pool), so no
    worker is left behind blocked on a pipe nobody reads; elsewhere a no-op."""
    if not sys.platform.startswith("linux"):
        return
    try:
        import ctypes  # noqa: PLC0415 lazy: start-up
        import signal  # noqa: PLC0415 lazy: start-up

        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(1, int(signal.SIGKILL), 0, 0, 0)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        return
    if os.getppid() != parent:  # the parent died before the request took effect
        os._exit(1)


class ChunkPool(Generic[J, R]):
    """Jobs handed to forked workers in chunks while the caller is still finding them; results in job order.

    ``fn`` maps a chunk (a list of jobs) to the list of its results and must be a picklable module-level
    function (or a ``functools.partial`` of one). Nothing is started until ``start_at`` jobs have been added, so
    small runs stay in this process; workers are only used when :func:`can_fork` allows, or, with ``helper``,
    from a fork server when :func:`can_use_helper` does (see the module docstring). A chunk whose worker
    died is redone in this process, so :meth:`results` always returns every result. Use it from one thread.
    ``ahead``: at most this many chunks are handed to the workers beyond the one the caller is reading
    (:meth:`iter_results`), so a caller that takes results slower than the workers make them does not hold every
    result at once (the language server's scan: issue 29, lean memory); ``None``: every chunk at once.
    ``join``: False: once every result has been read, the workers are told to stop and left to exit while the
    caller goes on (``memzoi check`` settles its report meanwhile: waiting for the forked workers to exit took
    15–35 ms at 11,000 files, after the last result); a pool closed before then still waits for them.
    ``total``: how many jobs will be added, when the caller knows: chunks then shrink as the end nears (guided
    scheduling: each a ``1 / (workers * GUIDE)`` share of the jobs left, at most ``chunksize`` and at least
    :data:`GUIDED_LEAST`), so the workers finish together and the caller has few results left to take after the
    last one (``memzoi rebuild``: chunks of 687 files at 11,000 left one worker idle for up to a chunk's time).
    """

    def __init__(
        self,
        fn: Callable[[list[J]], list[R]],
        *,
        workers: int,
        chunksize: int,
        start_at: int,
        helper: bool = False,
        ahead: int | None = None,
        join: bool = True,
        total: int | None = None,
    ) -> None:
        self.fn = fn
        self.total = total
        self._handed = 0  # jobs put into chunks so far
        self.ahead = ahead
        self.join = join
        self.helper = helper
        self.workers = workers
        self.chunksize = max(1, chunksize)
        self.start_at = start_at
        self.jobs = 0
        self._pending: list[J] = []
        self._chunks: list[list[J]] = []
        self._futures: list[Any] = []  # one future per submitted chunk (None: do it here)
        self._executor: Any = None
        self._started = False

    @property
    def parallel(self) -> bool:
        """True once worker processes are running."""
        return self._executor is not None

    def add(self, job: J) -> None:
        """Queue ``job``; a full chunk goes to the workers at once (once they are started)."""
        self._pending.append(job)
        self.jobs += 1
        if not self._started and self.jobs >= self.start_at:
            self._start()
        if self._started and len(self._pending) >= self._size():
            self._submit()

    def _size(self) -> int:
        """The size of the next chunk: :attr:`chunksize`, or with :attr:`total` its guided share of the jobs left."""
        if self.total is None:
            return self.chunksize
        share = -(-(self.total - self._handed) // (max(1, self.workers) * GUIDE))
        return max(min(GUIDED_LEAST, self.chunksize), min(self.chunksize, share))

    def _start(self) -> None:
        self._started = True
        if self.workers < 2:
            return
        import multiprocessing  # noqa: PLC0415 lazy: start-up
        from concurrent.futures import ProcessPoolExecutor  # noqa: PLC0415 lazy: start-up

        parent: int | None = os.getpid()
        context: BaseContext
        preload = [getattr(self.fn, "func", self.fn).__module__, *PRELOAD]
        if can_fork():
            context = multiprocessing.get_context("fork")
            # Workers fork with the analysis already imported: imported once here, not once in each worker.
            for name in preload:
                importlib.import_module(name)
        elif self.helper and can_use_helper():
            context = multiprocessing.get_context("forkserver")
            # Taken by the fork server when it starts (once per process): its workers fork with the analysis
            # already imported. A worker's parent is the fork server, which ends when this process does.
            context.set_forkserver_preload(preload)
            own_temp_dir()
            parent = None
        else:
            return
        try:
            self._executor = ProcessPoolExecutor(
                self.workers, mp_context=context, initializer=start_worker, initargs=(parent,)
            )
        except (OSError, ValueError):
            self._executor = None

    def _submit(self) -> None:
        while self._pending:
            size = self._size()
            chunk, self._pending = self._pending[:size], self._pending[size:]
            self._handed += len(chunk)
            self._chunks.append(chunk)
            self._futures.append(_UNSENT)
            if self.ahead is None:
                self._send(len(self._chunks) - 1)

    def _send(self, i: int) -> None:
        """Hand chunk ``i`` to the workers (its future ``None``: done here, when there are none or they refuse)."""
        future = None
        if self._executor is not None:
            try:
                future = self._executor.submit(self.fn, self._chunks[i])
            except (RuntimeError, OSError):  # a broken pool refuses new work (BrokenProcessPool is one)
                future = None
        self._futures[i] = future

    def results(self) -> list[R]:
        """Every job's result, in the order the jobs were added; waits for the workers, then stops them."""
        return list(self.iter_results())

    def iter_results(self) -> Iterator[R]:
        """:meth:`results` one at a time, each as soon as its chunk is done (the caller can work meanwhile)."""
        from concurrent.futures.process import BrokenProcessPool  # noqa: PLC0415 lazy: start-up

        self._submit()
        try:
            sent = 0  # chunks handed out so far (all of them without ``ahead``)
            for i, chunk in enumerate(self._chunks):
                if self.ahead is not None:
                    while sent < min(len(self._chunks), i + 1 + self.ahead):
                        self._send(sent)
                        sent += 1
                # Read once, then let go: a finished future holds its results until it is dropped.
                future, self._chunks[i], self._futures[i] = self._futures[i], [], None
                done = None
                if future is not None:
                    try:
                        done = future.result()
                    except (BrokenProcessPool, OSError):
                        done = None  # the worker died (killed, out of memory)
                    except Exception:  # noqa: BLE001 - e.g. a result that cannot be sent back: redo it here,
                        done = None  # where ``fn``'s own per-job barrier applies
                if i == len(self._chunks) - 1:
                    # the last chunk is back: the workers have nothing left, and may exit while the caller goes on
                    self.close(wait=self.join)
                yield from (done if done is not None else self.fn(chunk))
        finally:
            self.close()

    def close(self, wait: bool = True) -> None:
        """Stop the workers: chunks not yet started are dropped (use it when the caller gives up early).
        ``wait``: until they have exited (False: they exit on their own; a later call does not wait either)."""
        if self._executor is not None:
            self._executor.shutdown(wait=wait, cancel_futures=True)
            if not wait:
                self._executor = None


#: The future of a chunk not handed to the workers yet (``ChunkPool(ahead=...)``).
_UNSENT: Any = object()

__all__ = ["ChunkPool", "can_fork", "can_use_helper", "cpu_count", "start_helper", "start_worker"]
