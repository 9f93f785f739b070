"""The server's output to the client over stdio, gathered per turn of the event loop (issue 29, warm start).

pygls hands each message to its writer as one frame and the stdio writer sends each at once: a write and a flush,
one system call per message. A scan's turn of the loop publishes a chunk of files, reports its progress and may log:
:class:`GatheredWriter` sends what one turn wrote in one write at the end of that turn (``loop.call_soon``), in the
order it was written, and at once from :data:`LIMIT` bytes on. A thread other than the loop's (or a write with no
loop running) writes at once, after what was gathered; so no message waits for a turn that will not come, and the
order of the stream is the order of the writes. :meth:`GatheredWriter.drain` sends what is left (the server calls
it when it stops serving). A lost connection in a gathered write is logged once and what was gathered is dropped
(the client is gone: the reader sees the end of its input and the server stops).
"""

from __future__ import annotations

import asyncio
import logging
import threading
from typing import BinaryIO

log = logging.getLogger("memzoi_lsp.output")

#: Gathered bytes from which a write goes out at once, without waiting for the end of the turn.
LIMIT = 1 << 20


class GatheredWriter:
    """pygls's writer (``write(bytes)``, ``close()``) over the binary stream ``stream``; see the module docstring."""

    def __init__(self, stream: BinaryIO) -> None:
        self._stream = stream
        self._lock = threading.Lock()
        self._pending: list[bytes] = []
        self._size = 0
        self._scheduled = False
        self._lost = False

    def write(self, data: bytes) -> None:
        """Send ``data`` (one frame) at the end of the loop's turn, or now (off the loop, or past :data:`LIMIT`).
        Raises what the stream raises when the write is now (``BrokenPipeError`` for a lost client), as pygls's
        writer does."""
        try:
            loop: asyncio.AbstractEventLoop | None = asyncio.get_running_loop()
        except RuntimeError:  # another thread, or no loop running: now
            loop = None
        with self._lock:
            self._pending.append(data)
            self._size += len(data)
            if loop is None or self._size >= LIMIT:
                self._send()
            elif not self._scheduled:
                self._scheduled = True
                loop.call_soon(self._turn_ended)

    def flush(self) -> None:
        """Send what is gathered now. Raises as :meth:`write`."""
        with self._lock:
            self._send()

    def drain(self) -> None:
        """:meth:`flush` when the server stops serving: a lost client is nothing to send to, not an error."""
        try:
            self.flush()
        except OSError as err:
            log.info("output not sent at the end: %s", err)

    def close(self) -> None:
        """Send what is gathered, then close the stream."""
        try:
            self.flush()
        finally:
            self._stream.close()

    def _turn_ended(self) -> None:
        lost: OSError | None = None
        with self._lock:
            self._scheduled = False
            try:
                self._send()
            except OSError as err:  # the client is gone (a broken pipe): nothing can reach it any more
                if not self._lost:
                    lost = err
                self._lost = True
        if lost is not None:  # logged once the lock is free: the client log bridge writes through this writer
            log.error("the connection to the client is lost: %s", lost)

    def _send(self) -> None:
        if not self._pending:
            return
        data = b"".join(self._pending)
        self._pending.clear()
        self._size = 0
        self._stream.write(data)
        self._stream.flush()


__all__ = ["LIMIT", "GatheredWriter"]
