"""The MCP server's watchers: one watchfiles thread per served project, handing its notifications to the core's
:class:`memzoi.stores.changefeed.ChangeFeed` (which decides what a refresh stats or walks), and the opening refresh
run when the server starts serving a project, so that the first tool call waits only for what is left of it.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from memzoi.stores.changefeed import ChangeFeed

log = logging.getLogger("memzoi-mcp")

#: watchfiles' step (ms): a batch is handed over once no new path came for ``STEP_MS`` (or
#: :data:`memzoi.base.dirwatch.DEBOUNCE_MS` after its first); a refresh's barrier waits about one to two steps.
STEP_MS = 5
#: How long the opening refresh waits for the watcher to set up its watches (s) before it refreshes anyway.
OPENING_BARRIER_S = 60.0


class Watching:
    """The projects served so far, each with its feed and watcher thread (:meth:`serve`); :meth:`stop` ends them."""

    def __init__(self) -> None:
        self._stop = threading.Event()
        self._lock = threading.Lock()
        self._served: set[Path] = set()

    def serve(self, root: Path, warm: Callable[[], object] | None = None) -> None:
        """Start the watcher of ``root``'s ``.memzoi`` and, with ``warm`` (a function that loads the core), an
        opening refresh of its index on a thread of its own. Once per project; never raises."""
        from memzoi.stores import changefeed  # noqa: PLC0415 lazy: start-up

        with self._lock:
            if root in self._served or self._stop.is_set():
                return
            try:
                feed = changefeed.ChangeFeed(root)
            except OSError as err:  # no private folder for the barrier: every refresh walks, as before
                log.warning("change notifications for %s not used: %s", root, err)
                self._served.add(root)
                return
            changefeed.register(feed)
            self._served.add(root)
        threading.Thread(target=self._watch, args=(feed,), name="memzoi-mcp-watch", daemon=True).start()
        if warm is not None:
            threading.Thread(
                target=_opening_refresh, args=(root, warm, feed), name="memzoi-mcp-open", daemon=True
            ).start()

    def _watch(self, feed: ChangeFeed) -> None:
        from memzoi.base.dirwatch import changed_paths  # noqa: PLC0415 lazy: start-up

        try:
            feed.running()
            # every path reported (no filter): the barrier's files and every name below .memzoi count
            for paths in changed_paths(feed.memzoi, feed.sentinels, stop=self._stop, step_ms=STEP_MS, every_path=True):
                feed.events([str(p) for p in paths])
        except Exception as err:  # a vanished folder or a watcher error: the refreshes walk from now on
            log.info("watching %s stopped: %s", feed.memzoi, err)
            feed.failed(str(err))
        else:
            feed.failed("stopped")

    def stop(self) -> None:
        """End every watcher and remove the barriers' folders."""
        from memzoi.stores import changefeed  # noqa: PLC0415 lazy: start-up

        self._stop.set()
        with self._lock:
            roots = list(self._served)
        for root in roots:
            changefeed.unregister(root)


def _opening_refresh(root: Path, warm: Callable[[], object], feed: ChangeFeed) -> None:
    """Load the core, wait until the watcher's watches are in place (its first barrier, outside the refresh lock:
    a tool call meanwhile walks without waiting) and refresh ``root``'s index once (what the first tool call would
    do, its walk kept for the calls after it); a failure is left to that call, which reports it."""
    try:
        warm()
        feed.barrier(timeout=OPENING_BARRIER_S)
        from memzoi.agent.recall import Reader  # noqa: PLC0415 lazy: start-up

        with Reader(root):
            pass
    except Exception as err:  # the first call refreshes again and says what is wrong
        log.info("opening refresh of %s: %s", root, err)
