"""A likely cold project's first files analysed before its scan asks for them (issue 29: cold server scan ≤ 1.5×
a cold ``memzoi check``).

Between the answer to ``initialize`` and the first chunk its scan's workers return, the language server works on
one core for some 0.5 s (its protocol libraries, the opened documents' first diagnostics, the project's listing),
while the machine's other cores wait. :func:`start` runs one process from the workers' fork server
(:mod:`memzoi.base.parallel`) as soon as that server is forked: it lists the project as the scan will, asks git
once, and makes the entry of each file in the listing's order with the workers' own routine
(:func:`memzoi.stores.fileentry.entry_chunk`), keeping them, until the scan claims them (:func:`claim`) or it has
made :data:`LIMIT`. Nothing is written anywhere: the scan takes these entries exactly as it takes its workers'
(store entries, index rows, diagnostics), and gives to its workers only the files not made here.

What is made here is only taken where it is what a worker would have made then: under the same configuration
(:func:`memzoi.stores.verdictcache.context_stamp`), with the same git visibility, of a file the scan lists; a file
changed since it was read is caught as a worker's is (its stamp is not current). The clock of the retention
findings is this process's start, some tenths of a second before the scan's: a boundary passing in between is
re-judged by the scan's boundary timer, as one passing during the scan is.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ..stores.fileentry import FileEntry

#: The most files analysed before the scan claims them (some 1 s of one core; the entries are held until then).
LIMIT = 1500
#: How long the entries made wait for their claim, in seconds, once made.
CLAIM_WAIT_S = 60.0
#: Files analysed between two looks for the scan's claim (a look costs a ``poll``; the claim waits for the step).
STEP = 16

#: What :func:`claim` gives: the configuration's stamp, ``{absolute path: git visibility value}`` of the files made,
#: and their entries, received as they are taken (:func:`claim`).
Claimed = tuple[str, dict[str, str], Any]


@dataclass
class _Running:
    """A pre-filling being started (:attr:`ready` set once :func:`_begin` is done) or running."""

    process: Any = None
    conn: Any = None
    ready: threading.Event = field(default_factory=threading.Event)


_running: dict[str, _Running] = {}
#: How long a claim or a cancel waits for a pre-filling's start to be done, in seconds (it is, long before).
START_WAIT_S = 10.0


def start(project_root: str | os.PathLike[str], memzoi_dir: str | os.PathLike[str]) -> bool:
    """Start the pre-filling of the project at ``project_root`` (its ``.memzoi``: ``memzoi_dir``) from the running
    fork server of the scan's workers (:func:`memzoi.base.parallel.fork_helper` or ``start_helper`` first), on a
    thread of its own: the fork server answers once it has imported what the workers preload (some 30-45 ms), which
    the caller's start-up does not wait for. Returns whether it is starting; never raises."""
    root = os.fspath(project_root)
    if root in _running:
        return False
    run = _running[root] = _Running()
    try:
        threading.Thread(target=_begin, args=(run, root, os.fspath(memzoi_dir)), name="memzoi-prefill").start()
    except RuntimeError:
        _running.pop(root, None)
        return False
    return True


def _begin(run: _Running, root: str, memzoi_dir: str) -> None:
    """Start ``run``'s process (:func:`start`); ``run.ready`` is set when done, whether it started or not."""
    try:
        import multiprocessing  # noqa: PLC0415 lazy: start-up

        ctx = multiprocessing.get_context("forkserver")
        mine, theirs = ctx.Pipe(duplex=True)
        process = ctx.Process(target=_run, args=(root, memzoi_dir, theirs), name="memzoi-prefill", daemon=True)
        process.start()
        theirs.close()
        run.process, run.conn = process, mine
    except (OSError, ValueError, RuntimeError):
        pass
    finally:
        run.ready.set()


def _started(project_root: str | os.PathLike[str]) -> _Running | None:
    """The pre-filling of the project at ``project_root``, no longer listed, once its start is done; ``None`` when
    there is none or it did not start."""
    run = _running.pop(os.fspath(project_root), None)
    if run is None or not run.ready.wait(START_WAIT_S) or run.conn is None:
        return None  # (one still starting after that long ends with this process: a daemon of the fork server's)
    return run


def claim(project_root: str | os.PathLike[str]) -> Claimed | None:
    """Stop the pre-filling of the project at ``project_root`` after its current step and take what it made:
    ``(configuration stamp, {path: visibility value}, entries)``, ``entries`` an iterator of ``(path, entry or
    None)`` in the order they were made (the listing's), received from the process as they are taken, so that they
    are never all held at once. ``None`` when there is none or it failed. Never raises."""
    run = _started(project_root)
    if run is None:
        return None
    try:
        run.conn.send("claim")
        stamp, made = run.conn.recv()
    except (OSError, EOFError, ValueError):
        _end(run)
        return None
    return stamp, made, _received(run)


def _received(run: _Running) -> Iterator[tuple[str, FileEntry | None]]:
    """The entries ``run`` sends, :data:`STEP` at a time, until its last; those lost on the way (a broken pipe) are
    missing. Its process is ended once they are taken, or when the caller stops taking them."""
    try:
        while True:
            got = run.conn.recv()
            if not got:
                return
            yield from got
    except (OSError, EOFError, ValueError):
        return
    finally:
        _end(run)


def cancel(project_root: str | os.PathLike[str]) -> None:
    """End the pre-filling of the project at ``project_root`` without taking anything (its scan is not cold after
    all, or the project is gone). Never raises."""
    run = _started(project_root)
    if run is not None:
        _end(run)


def _end(run: _Running) -> None:
    try:
        run.conn.close()
        run.process.join(timeout=0)  # it exits once its pipe is closed; a daemon, it is ended with this process
    except (OSError, ValueError, AssertionError):
        pass


def _run(root: str, memzoi_dir: str, conn: Any) -> None:
    """The pre-filling process: set up as a pool's worker is (:func:`memzoi.base.parallel.start_worker`), then
    :func:`serve`."""
    from ..base.parallel import start_worker  # noqa: PLC0415 lazy: start-up - in the process only

    start_worker(None)  # its parent is the fork server, which ends when the caller does
    serve(root, memzoi_dir, conn)


def serve(root: str, memzoi_dir: str, conn: Any) -> None:
    """Make the entries of the project at ``root`` (its ``.memzoi``: ``memzoi_dir``) in its listing's order, at most
    :data:`LIMIT`, looking for the claim on ``conn`` (a :class:`multiprocessing.connection.Connection`) every
    :data:`STEP` files; once claimed (or every file made, then the claim awaited up to :data:`CLAIM_WAIT_S`), send
    ``(stamp, {path: visibility value})`` and then the entries, :data:`STEP` ``(path, entry)`` at a time, and an
    empty list last. Nothing made is sent when the configuration changed meanwhile, or anything failed. Returns
    quietly when the pipe closes (the caller is gone)."""
    from ..base.clock import utc_now  # noqa: PLC0415 lazy: start-up - in the process only
    from ..project.gitfacts import GitFacts  # noqa: PLC0415 lazy: start-up - in the process only
    from ..project.projectfiles import listed  # noqa: PLC0415 lazy: start-up - in the process only
    from ..project.verdict import ProjectContext  # noqa: PLC0415 lazy: start-up - in the process only
    from ..stores.fileentry import entry_chunk  # noqa: PLC0415 lazy: start-up - in the process only
    from ..stores.verdictcache import context_stamp  # noqa: PLC0415 lazy: start-up - in the process only

    now = utc_now()
    made: dict[str, str] = {}
    entries: list[tuple[str, FileEntry | None]] = []
    stamp = ""
    try:
        stamp = context_stamp(ProjectContext.of(memzoi_dir, now=now).config)
        paths = sorted(listed(memzoi_dir))[:LIMIT]
        git = GitFacts(root)
        git.ask(paths)
        for i in range(0, len(paths), STEP):
            if conn.poll():
                break
            jobs = [(p, git.visibility(p).value) for p in paths[i : i + STEP]]
            for (path, visibility), got in zip(jobs, entry_chunk(jobs, now=now, root=root)):
                made[path] = visibility
                entries.append((path, got))
        if context_stamp(ProjectContext.of(memzoi_dir, now=now).config) != stamp:
            made, entries = {}, []  # the configuration changed meanwhile: nothing made is taken
    except Exception:  # noqa: BLE001 - the scan then analyses every file itself
        made, entries = {}, []
    try:
        if not conn.poll(CLAIM_WAIT_S):
            return  # never claimed nor cancelled (the scan found another project): its entries are let go
        conn.recv()  # the claim (EOFError: the caller is gone)
        conn.send((stamp, made))
        for i in range(0, len(entries), STEP):  # a step at a time: neither side holds them all pickled at once
            conn.send(entries[i : i + STEP])
        conn.send([])
    except (OSError, EOFError, ValueError):
        return


__all__ = ["CLAIM_WAIT_S", "LIMIT", "START_WAIT_S", "STEP", "Claimed", "cancel", "claim", "serve", "start"]
