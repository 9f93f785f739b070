"""The MCP server's watchers: one watchfiles thread per served project, handing its notifications to the core's
:class:`memzoi.stores.changefeed.ChangeFeed` (which decides what a refresh stats or walks), and the opening refresh
run when the server starts serving a project, so that the first tool call waits only for what is left of it.
"""

from __future__ import annotations

import contextlib
import logging
import threading
from collections.abc import Callable, Iterator
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
#: The server's hold on setting up the watches (s, :class:`Watching`'s ``settle_s``): until the session's first call
#: is answered, or this long with no call. watchfiles lists the whole tree when it sets them up and holds the
#: interpreter meanwhile (0.2 s at 50,000 records), which a call made then would wait for.
SETTLE_S = 2.0
#: How long after the first call's handler returned the held watches are set up (s): its answer is written then.
PAUSE_S = 0.05


class Watching:
    """The projects served so far, each with its feed and watcher thread (:meth:`serve`); :meth:`stop` ends them.
    With ``settle_s``, a watcher sets up its watches once the first tool call was answered (:meth:`calling`), or
    after ``settle_s`` seconds without one: until then the calls list by find
    (:func:`memzoi.stores.changefeed.refreshing`), which needs no watch."""

    def __init__(self, settle_s: float = 0.0) -> None:
        self._stop = threading.Event()
        self._lock = threading.Lock()
        self._served: set[Path] = set()
        self._calls = self._answered = 0  # tool calls in flight, and ended (calling)
        self._quiet = threading.Condition()
        self._settle_s = settle_s

    @contextlib.contextmanager
    def calling(self) -> Iterator[None]:
        """Count one tool call in flight: an opening refresh about to walk the plane waits until none is (at most
        :data:`OPENING_BARRIER_S`), so that the first calls of a session, which list by find meanwhile
        (:func:`memzoi.stores.changefeed.refreshing`), do not share the interpreter with that walk."""
        with self._quiet:
            self._calls += 1
        try:
            yield
        finally:
            with self._quiet:
                self._calls -= 1
                self._answered += 1
                self._quiet.notify_all()

    def _wait_quiet(self) -> bool:
        """Wait until no call is in flight (at most :data:`OPENING_BARRIER_S`); false once the server stops."""
        with self._quiet:
            self._quiet.wait_for(lambda: self._calls == 0 or self._stop.is_set(), OPENING_BARRIER_S)
        return not self._stop.is_set()

    def _wait_settled(self) -> None:
        """Return once the watches may be set up: at once without ``settle_s``; else :data:`PAUSE_S` after the
        first call was answered, or after ``settle_s`` without one."""
        if self._settle_s > 0:
            with self._quiet:
                self._quiet.wait_for(lambda: self._answered > 0 or self._stop.is_set(), self._settle_s)
            self._stop.wait(PAUSE_S)  # its answer is written once the handler has returned

    def warm(self, load: Callable[[], object]) -> None:
        """Run ``load`` (a function that loads the core) on a thread of its own, so that a first call that comes
        meanwhile finds it loaded or loading; a failure is left to that call. Never raises."""

        def run() -> None:
            try:
                load()
            except Exception as err:  # the first call loads it again and says what is wrong
                log.info("loading the core: %s", err)

        threading.Thread(target=run, name="memzoi-mcp-warm", daemon=True).start()

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
                log.warning("%s", _said(root, f"change notifications for {root} not used: {err}"))
                self._served.add(root)
                return
            changefeed.register(feed)
            self._served.add(root)
        threading.Thread(target=self._watch, args=(feed,), name="memzoi-mcp-watch", daemon=True).start()
        if warm is not None:
            threading.Thread(
                target=_opening_refresh, args=(root, warm, feed, self._wait_quiet), name="memzoi-mcp-open", daemon=True
            ).start()

    def _watch(self, feed: ChangeFeed) -> None:
        from memzoi.base.dirwatch import changed_paths  # noqa: PLC0415 lazy: start-up

        try:
            self._wait_settled()
            feed.running()
            # every path reported (no filter): the barrier's files and every name below .memzoi count
            for paths in changed_paths(feed.memzoi, feed.sentinels, stop=self._stop, step_ms=STEP_MS, every_path=True):
                feed.events([str(p) for p in paths])
        except Exception as err:  # a vanished folder or a watcher error: the refreshes walk from now on
            log.info("%s", _said(Path(feed.root), f"watching {feed.memzoi} stopped: {err}"))
            feed.failed(str(err))
        else:
            feed.failed("stopped")

    def stop(self) -> None:
        """End every watcher and remove the barriers' folders."""
        from memzoi.stores import changefeed  # noqa: PLC0415 lazy: start-up

        self._stop.set()
        with self._quiet:
            self._quiet.notify_all()
        with self._lock:
            roots = list(self._served)
        for root in roots:
            changefeed.unregister(root)


def _opening_refresh(root: Path, warm: Callable[[], object], feed: ChangeFeed, quiet: Callable[[], bool]) -> None:
    """Load the core, wait until the watcher's watches are in place (its first barrier) and no tool call is in
    flight (``quiet``; false: the server stops, and nothing more is done), walk the plane for the feed (from then
    on the calls' refreshes take its listing, :meth:`memzoi.stores.changefeed.ChangeFeed.vouches`; a call before
    that takes find's, without waiting) and refresh ``root``'s index once through it (the rows' stamps read for the
    calls after it); a failure is left to the next call, which reports it."""
    try:
        warm()
        feed.barrier(timeout=OPENING_BARRIER_S)
        if not quiet():  # no tool call in flight (Watching.calling), unless the server stops
            return
        with feed.refreshing:  # the feed's first listing: from then on it vouches (the calls before take find's)
            feed.listing()
        from memzoi.agent.recall import Reader  # noqa: PLC0415 lazy: start-up

        with Reader(root):
            pass
    except Exception as err:  # the first call refreshes again and says what is wrong
        log.info("%s", _said(root, f"opening refresh of {root}: {err}"))


def _said(root: Path, line: str) -> str:
    """``line`` (a log line about the project at ``root``) with its local paths shown as every output shows them
    (:func:`memzoi.judge.pathsafety.shown_for_projects`)."""
    from memzoi.judge.pathsafety import shown_for_projects  # noqa: PLC0415 lazy: start-up

    shown: str = shown_for_projects(line, [root])
    return shown
