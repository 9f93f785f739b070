"""The language server's one way to run a watchfiles watcher on a directory (the ``.memzoi`` watcher of
:mod:`memzoi_lsp.watch` and the resident candidates' watcher of :mod:`memzoi_lsp.inboxwatch`).

It waits without a timeout inside watchfiles (``rust_timeout=0``): in watchfiles 1.x ``RustNotify.watch`` (src/lib.rs)
reads the size of its pending-changes set under the set's lock, releases the lock and, once the timeout has passed
with the set seen empty, clears the set under a second lock. A notification the notify thread inserts in between is
cleared unseen, and a closed file's diagnostics (or the inbox) would stay stale until something else touched it.
Without a timeout that return never happens; the stop event is still polled at every step, so a stop ends the
watcher within :data:`STEP_MS`.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Protocol

#: watchfiles' grouping of notifications (ms): a batch is handed over once no new path came for ``STEP_MS``, or
#: ``DEBOUNCE_MS`` after its first; the stop event is polled every ``STEP_MS``.
STEP_MS = 20
DEBOUNCE_MS = 50


class StopEvent(Protocol):
    """What watchfiles polls to stop (a :class:`threading.Event` or anything with ``is_set``)."""

    def is_set(self) -> bool:
        """True once the watcher should end."""
        ...


def changed_paths(directory: Path, stop: StopEvent, *, recursive: bool = True) -> Iterator[list[Path]]:
    """The paths watchfiles reports under ``directory``, one list per batch, until ``stop.is_set()`` (checked every
    :data:`STEP_MS` ms). Never loses a notification to a timeout (module docstring). Raises what watchfiles raises
    (``FileNotFoundError`` for a missing directory, its ``WatchfilesRustInternalError`` for a watcher error): the
    caller logs it and carries on without the watcher."""
    import watchfiles  # noqa: PLC0415 lazy: start-up

    for changes in watchfiles.watch(
        directory,
        stop_event=stop,
        recursive=recursive,
        debounce=DEBOUNCE_MS,
        step=STEP_MS,
        raise_interrupt=False,
        rust_timeout=0,  # no timeout return: it clears the pending set after an unlocked look (module docstring)
        yield_on_timeout=False,
    ):
        yield [Path(p) for _, p in changes]


__all__ = ["DEBOUNCE_MS", "STEP_MS", "StopEvent", "changed_paths"]
