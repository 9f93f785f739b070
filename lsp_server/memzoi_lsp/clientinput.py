"""What the stdio transport knows of the client's input: whether every message the client has sent so far was
handled (nothing parsed and waiting, no part of a frame received, nothing queued or being read, no byte readable
on stdin). The server defers
the work its first diagnostics do not need (the workspace scan, the watchers, the inbox watch) until then
(:meth:`memzoi_lsp.server.MemzoiServer.start_features`), so the documents the client opened with ``initialized``
are analysed and published first (issue 29, first diagnostics). :func:`memzoi_lsp.transport.serve` keeps it current.
"""

from __future__ import annotations

import logging
import select
from collections.abc import Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import asyncio

log = logging.getLogger("memzoi_lsp.transport")

#: Messages handled after :meth:`Input.when_drained` was asked before its callbacks run even if the client's input
#: never drains (a client that never pauses still gets its workspace scanned).
MAX_DEFERRED_MESSAGES = 64


class Input:
    """What :func:`serve` knows of the client's input, for :meth:`when_drained`. Loop-owned, except
    :attr:`reading` (set by the reader thread while a read's bytes are on their way to the queue). Before
    :func:`serve` runs (or when another transport serves, such as pygls's TCP one), the input counts as drained."""

    def __init__(self) -> None:
        self.queue: asyncio.Queue[bytes] | None = None
        self.fd: int | None = None
        self.backlog = 0  # frames parsed and not yet handled
        self.reading = False
        #: the parser holds part of a frame (a header, or a body not all read): a message is on its way. Clients
        #: may write a frame's header and body apart (two writes), and a large body arrives in several reads.
        self.partial = False
        self.handled = 0  # messages handled so far
        self._waiting: list[tuple[int, Callable[[], None]]] = []

    def drained(self) -> bool:
        """True when no message of the client waits to be handled (see the class docstring)."""
        if self.queue is None:
            return True
        if self.backlog or self.reading or self.partial or not self.queue.empty():
            return False
        return not _readable(self.fd)

    def when_drained(self, callback: Callable[[], None]) -> None:
        """Run ``callback`` (on the loop) once the input is drained: now when it is, else when :func:`serve` next
        finds it so, or after :data:`MAX_DEFERRED_MESSAGES` more messages, whichever comes first."""
        if self.drained():
            callback()
        else:
            self._waiting.append((self.handled, callback))

    def check(self) -> None:
        """Called by :func:`serve` after each message and before it waits: run the callbacks that are due."""
        if not self._waiting:
            return
        drained = self.drained()
        due = [cb for since, cb in self._waiting if drained or self.handled - since >= MAX_DEFERRED_MESSAGES]
        self._waiting = [(since, cb) for since, cb in self._waiting if cb not in due]
        for cb in due:
            try:
                cb()
            except Exception:
                log.exception("deferred start-up work failed")


def _readable(fd: int | None) -> bool:
    """Whether bytes wait on ``fd`` (``False`` when it cannot be asked: the reader thread then tells)."""
    if fd is None:
        return False
    try:
        return bool(select.select([fd], [], [], 0)[0])
    except (OSError, ValueError):
        return False


__all__ = ["MAX_DEFERRED_MESSAGES", "Input"]
