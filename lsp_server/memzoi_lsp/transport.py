"""The stdio transport: LSP base-protocol frames read so that no byte sequence leaves the server deaf.

pygls 2's reader (``pygls.io_.run_async``) cannot be configured: it trusts ``Content-Length`` (a length too long
waits forever for bytes that never come, one too short misreads every later frame, ``99999999999`` allocates that
much), answers nothing to a body that is not JSON, and skips a broken header without finding the next frame. This
module replaces only that loop; messages still go to pygls's ``structure_message`` and ``handle_message``.

* :class:`FrameParser` is a pure byte-level state machine. A header block must be ``Name: value`` lines with one
  numeric ``Content-Length`` of at most :data:`MAX_CONTENT_LENGTH`. Anything else is a broken frame, and parsing
  resynchronises at the next ``Content-Length: N\\r\\n`` in the stream: that byte sequence can never occur inside
  a JSON body (JSON strings cannot hold a raw line break), so finding one inside a body also shows that the
  declared length was too long, without waiting for the missing bytes. Bytes are never allocated from a
  declared length: a body over the cap is skipped as it arrives.
* :func:`serve` reads stdin on a daemon thread (so ``exit`` never waits for a blocked read), and answers a body
  that is not JSON, and each broken frame, with a ``-32700`` parse error (id ``null``), logging why. When no frame start turns up within
  :data:`MAX_CONTENT_LENGTH` bytes of garbage, resynchronising is hopeless: it logs why and returns the reason,
  and the server exits non-zero so the editor restarts it.
* :func:`serve` keeps a :class:`~memzoi_lsp.clientinput.Input` current (what is parsed, partly received, queued,
  being read), so the server can tell when every message the client sent so far was handled.
"""

from __future__ import annotations

import json
import logging
import os
import re
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, BinaryIO

from .clientinput import Input

if TYPE_CHECKING:
    import asyncio

log = logging.getLogger("memzoi_lsp.transport")

#: The largest body accepted (bytes). A 512 KiB record edited in the editor is well below it.
MAX_CONTENT_LENGTH = 64 * 1024 * 1024
#: A header block longer than this is not a header.
MAX_HEADER_BYTES = 8192
#: Where a frame can start: the one header every frame has, with the line break only a header has.
_FRAME_START = re.compile(rb"Content-Length:[ \t]*[0-9]+\r\n")
_HEADER_LINE = re.compile(rb"([!#$%&'*+.^_`|~0-9A-Za-z-]+):[ \t]*(.*?)[ \t]*")
_KEEP = 64  # bytes kept from skipped data: a frame start may be split across reads


@dataclass(frozen=True, slots=True)
class Broken:
    """Bytes that were not a well-formed frame; ``reason`` says why (never the bytes themselves)."""

    reason: str


class FrameParser:
    """Splits a byte stream into frame bodies (``bytes``) and :class:`Broken` items; see the module docstring."""

    def __init__(self, cap: int = MAX_CONTENT_LENGTH) -> None:
        self.cap = cap
        self.buf = bytearray()
        self.length: int | None = None  # the current frame's body length, once its header was read
        self.skipping = 0  # bytes skipped since the last frame start (0 when not skipping)
        self._scanned = 0  # how far the current body was searched for a frame start

    @property
    def partial(self) -> bool:
        """True while part of a frame is held (a header, or a body not all read); skipped garbage is not."""
        return self.length is not None or (not self.skipping and bool(self.buf.strip(b"\r\n")))

    @property
    def hopeless(self) -> bool:
        """True when more than the cap of bytes went by without a frame start."""
        return self.skipping > self.cap

    def feed(self, data: bytes) -> list[bytes | Broken]:
        """Take the next bytes; return the frames they complete, in order."""
        self.buf += data
        out: list[bytes | Broken] = []
        while True:
            if self.skipping:
                if not self._resync(0):
                    return out
            elif self.length is None:
                if not self._header(out):
                    return out
            elif not self._body(out):
                return out

    def _resync(self, start: int) -> bool:
        """Drop the bytes before the next frame start at or after ``start``; False when none is buffered yet
        (then at least ``start`` bytes are dropped, so a broken header is never found again)."""
        m = _FRAME_START.search(self.buf, start)
        if m is None:
            drop = min(len(self.buf), max(start, len(self.buf) - _KEEP))
            self.skipping += drop + 1
            del self.buf[:drop]
            return False
        del self.buf[: m.start()]
        self.skipping = 0
        return True

    def _broken(self, out: list[bytes | Broken], reason: str, resync_from: int = 1) -> None:
        out.append(Broken(reason))
        self.length = None
        self._scanned = 0
        self._resync(resync_from)

    def _header(self, out: list[bytes | Broken]) -> bool:
        end = self.buf.find(b"\r\n\r\n")
        if end < 0:
            if len(self.buf) > MAX_HEADER_BYTES:
                self._broken(out, f"no end of header within {MAX_HEADER_BYTES} bytes")
                return True
            return False
        if end == 0:
            del self.buf[:4]  # an empty header block: stray line breaks between frames
            return True
        length: int | None = None
        problem = None
        for line in bytes(self.buf[:end]).split(b"\r\n"):
            m = _HEADER_LINE.fullmatch(line)
            if m is None:
                problem = "a header line is not `Name: value`"
                break
            if m.group(1).lower() == b"content-length":
                if length is not None or not m.group(2).isdigit():
                    problem = "Content-Length is repeated or not a non-negative number"
                    break
                length = int(m.group(2))
        if problem is None and length is None:
            problem = "the header has no Content-Length"
        if problem is not None:
            self._broken(out, problem)
            return True
        assert length is not None
        if length > self.cap:
            # Refused without reading it into memory: skip what follows until the next frame start.
            self._broken(out, f"Content-Length {length} is over the {self.cap}-byte cap", resync_from=end + 4)
            return True
        del self.buf[: end + 4]
        self.length = length
        self._scanned = 0
        return True

    def _body(self, out: list[bytes | Broken]) -> bool:
        assert self.length is not None
        # A frame start inside the body: the declared length was too long (the next frame has begun).
        endpos = min(len(self.buf), self.length + 40)
        m = _FRAME_START.search(self.buf, max(0, self._scanned - 40), endpos)
        self._scanned = endpos
        if m is not None and m.start() < self.length:
            self._broken(out, "Content-Length is longer than the message", resync_from=m.start())
            return True
        if len(self.buf) < self.length:
            return False
        body = bytes(self.buf[: self.length])
        del self.buf[: self.length]
        self.length = None
        self._scanned = 0
        out.append(body)
        return True


def _reader_thread(
    stdin: BinaryIO, loop: asyncio.AbstractEventLoop, queue: asyncio.Queue[bytes], state: Input | None = None
) -> None:
    import asyncio  # noqa: PLC0415 lazy: start-up - see serve

    # The file descriptor is read directly: a daemon thread blocked inside the buffered stdin object would hold
    # its lock when the interpreter exits, which aborts the process.
    try:
        fd = stdin.fileno()
        read: Callable[[int], bytes] = lambda n: os.read(fd, n)  # noqa: E731
    except (AttributeError, OSError, ValueError):  # io.UnsupportedOperation is both an OSError and a ValueError
        read = getattr(stdin, "read1", None) or stdin.read
    while True:
        try:
            data = read(65536)
        except (OSError, ValueError):
            data = b""
        if state is not None:
            state.reading = True  # until the bytes are queued (on the loop, by _put): not drained meanwhile
        try:  # waits while the queue is full, so a flood of input is never buffered beyond a few reads
            asyncio.run_coroutine_threadsafe(_put(queue, data, state), loop).result()
        except Exception:  # noqa: BLE001 - the loop is closed or stopping: the server is exiting
            return
        if not data:
            return


async def _put(queue: asyncio.Queue[bytes], data: bytes, state: Input | None) -> None:
    """On the loop: queue ``data`` and end the reader's ``reading`` mark in the same step, so :func:`serve` never
    sees the bytes it took from the queue as still being read."""
    try:
        await queue.put(data)
    finally:
        if state is not None:
            state.reading = False


def parse_error(protocol: Any, why: str) -> None:
    """Send a JSON-RPC ``-32700`` error (id ``null``: the request's id cannot be known)."""
    _send_error(protocol, -32700, f"Parse error: {why}")


def _send_error(protocol: Any, code: int, message: str) -> None:
    # A plain dict: pygls's serializer would drop the `"id": null` that JSON-RPC requires here.
    protocol._send_data({"jsonrpc": "2.0", "id": None, "error": {"code": code, "message": message}})


@dataclass
class Early:
    """What was read from stdin before the server was imported (:func:`read_early`): the parser with any partial
    frame, the frames read (the ``initialize`` request first, normally), whether stdin ended, and, once
    :func:`answer_early` sent a kept answer, the request's id and that result."""

    parser: FrameParser
    items: list[bytes | Broken]
    eof: bool = False
    request_id: Any = None
    answered: Any = None
    keep: Callable[[Any], None] | None = field(default=None, repr=False)
    #: called once these frames are handled and answered, before :func:`serve` starts its reader thread (the
    #: process runs one thread until then: :func:`memzoi_lsp.startup.prefork`)
    settled: Callable[[], None] | None = field(default=None, repr=False)


def read_early(stdin: BinaryIO) -> Early:
    """Read ``stdin`` until one frame is complete (or it ends), without the event loop or the protocol
    libraries: what the server's start-up does before it imports them."""
    parser = FrameParser()
    try:
        fd = stdin.fileno()
        read: Callable[[int], bytes] = lambda n: os.read(fd, n)  # noqa: E731
    except (AttributeError, OSError, ValueError):
        read = getattr(stdin, "read1", None) or stdin.read
    items: list[bytes | Broken] = []
    while not items:
        try:
            data = read(65536)
        except (OSError, ValueError):
            data = b""
        if not data:
            return Early(parser, items, eof=True)
        items = parser.feed(data)
    return Early(parser, items)


def initialize_request(early: Early) -> tuple[Any, Any] | None:
    """``(id, params)`` when the first frame read early is an ``initialize`` request, else ``None``."""
    if not early.items or isinstance(early.items[0], Broken):
        return None
    try:
        message = json.loads(early.items[0])
    except (ValueError, RecursionError):
        return None
    if not isinstance(message, dict) or message.get("method") != "initialize" or "id" not in message:
        return None
    params = message.get("params")
    return (message["id"], params) if isinstance(params, dict) else None


def answer_early(early: Early, stdout: BinaryIO, request_id: Any, result: Any) -> None:
    """Send ``result`` as the answer to the ``initialize`` request ``request_id`` now (a frame written straight
    to ``stdout``); the server's own answer to it is dropped later (:func:`serve`)."""
    body = json.dumps({"jsonrpc": "2.0", "id": request_id, "result": result}, separators=(",", ":")).encode()
    stdout.write(b"Content-Length: %d\r\n\r\n%s" % (len(body), body))
    stdout.flush()
    early.request_id, early.answered = request_id, result


def _follow_initialize(protocol: Any, early: Early) -> None:
    """Watch the server's answer to the early-read ``initialize`` request: hand its result to ``early.keep``
    (which keeps it for the next start) and, when a kept answer was sent already, drop it (logging a difference)."""
    original = protocol._send_data
    if early.keep is None and early.answered is None:
        return

    def send(data: Any) -> None:
        if getattr(data, "id", None) != early.request_id or hasattr(data, "method"):
            original(data)
            return
        protocol._send_data = original  # the one answer to follow has come
        result = json.loads(json.dumps(data, default=protocol._serialize_message)).get("result")
        if early.keep is not None and isinstance(result, dict) and getattr(data, "error", None) is None:
            if result != early.answered:
                if early.answered is not None:
                    log.warning("the kept answer to initialize differed from the server's; it is replaced")
                early.keep(result)
        if early.answered is None:
            original(data)
        elif not isinstance(result, dict):
            log.warning("the server's own initialize failed after the kept answer was sent")

    protocol._send_data = send


def _handle(protocol: Any, item: bytes | Broken) -> bool:
    """Hand one frame to ``protocol``; True when it was a message (the caller lets its handler start)."""
    if isinstance(item, Broken):
        log.warning("broken frame from the client: %s; skipped to the next frame", item.reason)
        parse_error(protocol, item.reason)
        return False
    try:
        message = json.loads(item, object_hook=protocol.structure_message)
    except ValueError as err:  # not JSON (json.JSONDecodeError and UnicodeDecodeError are ValueErrors)
        log.warning("a message body is not JSON: %s", type(err).__name__)
        parse_error(protocol, "the message body is not JSON")
        return False
    except RecursionError:
        parse_error(protocol, "the message body nests too deeply")
        return False
    except Exception as err:  # structuring failed in pygls: one line here, the stack only at DEBUG
        from .logbridge import unreadable_message  # noqa: PLC0415 lazy: start-up

        log.warning("a message could not be read (%s); skipped", unreadable_message(err))
        log.debug("the message that could not be read", exc_info=True)
        return False
    if not hasattr(message, "jsonrpc"):  # JSON, but not a message object (a batch array, a number…)
        log.warning("a message is not a JSON-RPC object")
        _send_error(protocol, -32600, "Invalid request: not a JSON-RPC message object")
        return False
    try:
        protocol.handle_message(message)
    except Exception:
        log.exception("unable to handle a message")
    return True


async def serve(
    stop_event: threading.Event, stdin: BinaryIO, protocol: Any, early: Early | None = None, state: Input | None = None
) -> str | None:
    """Read frames from ``stdin`` and hand each message to ``protocol`` until EOF or ``stop_event``; ``early``:
    what :func:`read_early` read before (handled first, see :func:`_follow_initialize`); ``state``: the
    :class:`Input` this keeps current (its due callbacks run after each message and before each wait).

    Returns ``None`` at EOF or stop, or the reason the stream could not be resynchronised (the caller exits
    non-zero). ``SystemExit`` from the ``exit`` handler propagates, as in pygls.
    """
    import asyncio  # noqa: PLC0415 lazy: start-up - not needed before the kept answer to initialize is sent

    state = state or Input()
    queue: asyncio.Queue[bytes] = asyncio.Queue(maxsize=16)
    state.queue = queue
    try:
        state.fd = stdin.fileno()
    except (AttributeError, OSError, ValueError):
        state.fd = None
    parser = early.parser if early is not None else FrameParser()
    if early is not None:
        _follow_initialize(protocol, early)
        await _handle_all(protocol, early.items, state, parser)
        if early.eof:
            return None
        if early.settled is not None:
            await asyncio.sleep(0)  # the answers written (the writer sends a turn's output as the turn ends)
            early.settled()
    loop = asyncio.get_running_loop()
    threading.Thread(target=_reader_thread, args=(stdin, loop, queue, state), name="memzoi-stdin", daemon=True).start()
    while not stop_event.is_set():
        state.check()
        data = await queue.get()
        if not data:
            return None
        await _handle_all(protocol, parser.feed(data), state, parser)
        if parser.hopeless:
            reason = f"no frame start in over {parser.cap} bytes from the client; exiting so the editor restarts"
            log.error("%s", reason)
            return reason
    return None


async def _handle_all(protocol: Any, items: list[bytes | Broken], state: Input, parser: FrameParser) -> None:
    """Hand ``items`` (what ``parser`` gave) to ``protocol`` in order, keeping ``state`` current."""
    import asyncio  # noqa: PLC0415 lazy: start-up - see serve

    state.backlog, state.partial = len(items), parser.partial
    for item in items:
        state.backlog -= 1
        if _handle(protocol, item):
            state.handled += 1
            # Let the handlers just started run before the next message, as pygls's reader does by awaiting
            # each line: a burst of requests followed by `shutdown` must not cancel them unstarted.
            await asyncio.sleep(0)
            state.check()


__all__ = [
    "Broken",
    "Early",
    "FrameParser",
    "MAX_CONTENT_LENGTH",
    "answer_early",
    "initialize_request",
    "parse_error",
    "read_early",
    "serve",
]
