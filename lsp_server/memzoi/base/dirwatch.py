"""The one way this project runs a watchfiles watcher (the language server's ``.memzoi`` watcher,
:mod:`memzoi_lsp.watch`, and resident candidates' watcher, :mod:`memzoi_lsp.inboxwatch`; the MCP server's watcher
of the change feed, :mod:`memzoi_mcp.watching`).

It waits without a timeout inside watchfiles (``rust_timeout=0``): in watchfiles 1.x ``RustNotify.watch`` (src/lib.rs)
reads the size of its pending-changes set under the set's lock, releases the lock and, once the timeout has passed
with the set seen empty, clears the set under a second lock. A notification the notify thread inserts in between is
cleared unseen, and a closed file's diagnostics (or the inbox) would stay stale until something else touched it.
Without a timeout that return never happens; the stop event is still polled at every step, so a stop ends the
watcher within one step (:data:`STEP_MS` by default).

watchfiles sets its watches up (a walk of the tree) when it makes its ``RustNotify``, before its first wait; the
stop event is first polled inside that wait, so that first poll is the caller's sign that every change from then
on is reported (``ready``): what changed before it is for the caller to look for (the language server lists its
project once then, :func:`memzoi.runs.scandrift.drifted`).

A file name that is not UTF-8 (a byte ``0xff`` in ``.memzoi/records/``) cannot be handed to Python by watchfiles
1.x: its notify thread records "Unable to decode path …" and every later wait raises that error again, so the
watcher is broken for good and the changes noted with that path are lost. With ``lost``, such a watcher is made
anew and ``lost()`` is called once its watches exist, as ``ready`` is: what changed meanwhile is for the caller to
look for (:func:`undecodable`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Protocol

#: watchfiles' grouping of notifications (ms): a batch is handed over once no new path came for ``STEP_MS``, or
#: ``DEBOUNCE_MS`` after its first; the stop event is polled every ``STEP_MS``.
STEP_MS = 20
DEBOUNCE_MS = 50
#: Watchers made anew in a row for a name that is not UTF-8 (:func:`undecodable`) without a batch handed over
#: between them: past it the error is raised (a folder whose name is not UTF-8 breaks every new watcher at once).
RESTARTS = 3


class StopEvent(Protocol):
    """What watchfiles polls to stop (a :class:`threading.Event` or anything with ``is_set``)."""

    def is_set(self) -> bool:
        """True once the watcher should end."""
        ...


def undecodable(err: BaseException) -> bool:
    """Whether ``err``, raised by a watchfiles watcher, says it met a path it cannot decode (a name that is not
    UTF-8): watchfiles 1.x (``src/lib.rs``) raises ``WatchfilesRustInternalError`` (a ``RuntimeError``) "Unable to
    decode path …" at that wait and every later one."""
    return isinstance(err, RuntimeError) and str(err).startswith("Unable to decode path")


def changed_paths(
    *paths: Path | str,
    stop: StopEvent,
    recursive: bool = True,
    step_ms: int = STEP_MS,
    every_path: bool = False,
    ready: Callable[[], None] | None = None,
    lost: Callable[[], None] | None = None,
) -> Iterator[list[Path]]:
    """The paths watchfiles reports under ``paths`` (one watcher, one inotify instance, for them all), one list per
    batch, until ``stop.is_set()`` (checked every ``step_ms`` ms); watchfiles' default filter of editor and VCS files
    applies unless ``every_path``. ``ready()`` is called once, on the watcher's thread, when the watches are set up
    (every change after it is reported; module docstring). Never loses a notification to a timeout (module
    docstring). With ``lost``, a watcher broken by a name that is not UTF-8 is made anew, and ``lost()`` is called on
    this thread once its watches exist (module docstring; at most :data:`RESTARTS` times in a row). Raises what
    watchfiles raises (``FileNotFoundError`` for a missing directory, its ``WatchfilesRustInternalError`` for a
    watcher error): the caller logs it and carries on without the watcher."""
    import watchfiles  # noqa: PLC0415 lazy: start-up

    first, restarts = ready, 0
    while True:
        try:
            for changes in watchfiles.watch(
                *paths,
                watch_filter=None if every_path else watchfiles.DefaultFilter(),
                stop_event=stop if first is None else _Polled(stop, first),
                recursive=recursive,
                debounce=DEBOUNCE_MS,
                step=step_ms,
                raise_interrupt=False,
                rust_timeout=0,  # no timeout return: it clears the pending set after an unlocked look (module docstring)
                yield_on_timeout=False,
            ):
                restarts = 0
                yield [Path(p) for _, p in changes]
            return
        except RuntimeError as err:
            if lost is None or not undecodable(err) or restarts >= RESTARTS:
                raise
        first, restarts = lost, restarts + 1


class _Polled:
    """``stop`` as watchfiles polls it, calling ``ready`` at the first poll (the watches exist by then)."""

    def __init__(self, stop: StopEvent, ready: Callable[[], None]) -> None:
        self._stop = stop
        self._ready: Callable[[], None] | None = ready

    def is_set(self) -> bool:
        """``stop.is_set()``; the first call also calls ``ready`` (once)."""
        if self._ready is not None:
            ready, self._ready = self._ready, None
            ready()
        return self._stop.is_set()


__all__ = ["DEBOUNCE_MS", "RESTARTS", "STEP_MS", "StopEvent", "changed_paths", "undecodable"]
