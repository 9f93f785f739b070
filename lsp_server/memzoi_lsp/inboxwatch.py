"""``memzoi/inboxChanged`` from anywhere (issue 28, contract §2): the clients refresh their inbox views when the
pending proposals or the resident candidates change, whoever changed them (the CLI, an agent over MCP, another
editor, this server).

- Pending proposals live under ``.memzoi/proposals/pending/``, which the server (or the client for it) already
  watches: :meth:`CandidateWatch.paths_changed` is called by :meth:`memzoi_lsp.watch.FileWatching.process` with
  every batch (through the session's ``inbox_paths_changed``).
- Resident candidates live in one SQLite database in the runtime directory
  (:func:`memzoi.resident.candidates.db_path`), outside every workspace: one watchfiles thread watches that
  directory (not recursively) for the database's files, and a change of
  :func:`memzoi.resident.candidates.signature` (computed off the loop) decides, so the events a mere read makes
  (WAL and shared-memory files) notify nothing.
"""

from __future__ import annotations

import asyncio
import logging
import threading
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING

from .notifications import INBOX_CHANGED, notify
from .tasks import Tasks

if TYPE_CHECKING:
    from .session import InboxWatchSession

log = logging.getLogger("memzoi_lsp.inboxwatch")

DEBOUNCE_S = 0.1


class CandidateWatch:
    """The inbox watch feature: it owns the watcher thread of the candidate database, its debounce timer and the
    last signature seen (loop-owned), and tells the client when the pending proposals change
    (:meth:`paths_changed`). Made with the session; started when initialized, stopped at shutdown."""

    def __init__(self, ls: InboxWatchSession) -> None:
        self.ls = ls
        self.stop_event = threading.Event()
        self.thread: threading.Thread | None = None
        self.signature: str | None = None
        self.timer: asyncio.TimerHandle | None = None
        self.checking = False
        self.tasks = Tasks()  # its signature checks

    def paths_changed(self, paths: Iterable[Path]) -> None:
        """Notify when one of ``paths`` is (or was) a pending proposal, or a folder that holds them (a folder event
        stands for the files in it, which a watcher may not report one by one)."""
        for p in paths:
            posix = Path(p).as_posix()
            if "/.memzoi/proposals/pending/" in posix or posix.endswith(
                ("/.memzoi", "/.memzoi/proposals", "/.memzoi/proposals/pending")
            ):
                notify(self.ls, INBOX_CHANGED, {})
                return

    def start(self) -> None:
        """Take the current signature and start watching (once)."""
        if self.thread is not None or self.ls.stopping:
            return
        from memzoi.resident.candidates import DB_NAME  # noqa: PLC0415 lazy: start-up
        from memzoi.resident.store import runtime_root  # noqa: PLC0415 lazy: start-up

        try:
            directory = runtime_root()
        except Exception as err:  # an unusable runtime directory: the inbox still refreshes on request
            log.info("not watching resident candidates: %s", err)
            return
        self.tasks.spawn(self._check(initial=True))
        self.thread = threading.Thread(
            target=self._run, args=(directory, DB_NAME), name="memzoi-inbox-watch", daemon=True
        )
        self.thread.start()

    def _run(self, directory: Path, name: str) -> None:
        from memzoi.base.dirwatch import changed_paths  # noqa: PLC0415 lazy: start-up

        try:
            for paths in changed_paths(directory, stop=self.stop_event, recursive=False):
                if not any(p.name.startswith(name) for p in paths):
                    continue
                loop = self.ls.loop
                if loop is None or loop.is_closed():
                    return
                loop.call_soon_threadsafe(self._schedule)
        except Exception as err:  # a vanished directory must not kill the server
            log.info("watching resident candidates stopped: %s", err)

    def _schedule(self) -> None:
        if self.ls.stopping or self.ls.loop is None:
            return
        if self.timer is not None:
            self.timer.cancel()
        self.timer = self.ls.loop.call_later(DEBOUNCE_S, lambda: self.tasks.spawn(self._check()))

    async def _check(self, initial: bool = False) -> None:
        from memzoi.resident.candidates import signature  # noqa: PLC0415 lazy: start-up

        if self.checking:
            self._schedule()  # a check is running: look again after it
            return
        self.checking = True
        try:
            now = await asyncio.get_running_loop().run_in_executor(None, _safe_signature, signature)
        finally:
            self.checking = False
        self.tasks = Tasks()  # its signature checks
        if now is _UNREADABLE:
            return
        if now != self.signature:
            self.signature = now
            if not initial:
                notify(self.ls, INBOX_CHANGED, {})

    def stop(self) -> None:
        """Stop the thread (shutdown)."""
        self.stop_event.set()
        if self.timer is not None:
            self.timer.cancel()
        self.tasks.cancel()
        if self.thread is not None:
            self.thread.join(timeout=1)


_UNREADABLE = "unreadable"


def _safe_signature(signature: Callable[[], str | None]) -> str | None:
    try:
        return signature()
    except Exception as err:  # a busy or damaged database: treat as unchanged until the next event
        log.info("resident candidates unreadable: %s", type(err).__name__)
        return _UNREADABLE


__all__ = ["CandidateWatch"]
