"""Every line a client sends gets an answer: JSON-RPC errors for the lines the SDK's stdio transport cannot take.

The SDK's transport drops a line it cannot validate, and a line that is not UTF-8 JSON ends its reader, so the
client waits until its own timeout and the server stops listening. :func:`triage` sorts each line first: a valid
message goes on to the SDK; anything else is answered here, as JSON-RPC 2.0 says (parse error ``-32700`` and
invalid request ``-32600`` with ``id: null`` unless the id can be read, invalid params ``-32602`` for a request
whose method is known but whose shape is not, and for a ``tools/call`` whose ``arguments`` is not an object,
:func:`memzoi.agent.arguments.call_params_problem`), and never reaches the SDK. A malformed notification (no ``id``)
gets no answer, as the specification requires. :func:`triaged_stdin` is standard input so sorted, for the SDK's
stdio transport, with the answers :func:`send_answers` writes.
"""

from __future__ import annotations

import contextlib
import io
import json
import logging
import sys
import threading
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from anyio.streams.memory import MemoryObjectReceiveStream

    from .arrivals import Arrivals

PARSE_ERROR, INVALID_REQUEST, INVALID_PARAMS = -32700, -32600, -32602


def error_response(code: int, message: str, rid: Any = None) -> dict[str, Any]:
    """A JSON-RPC 2.0 error response object."""
    return {"jsonrpc": "2.0", "id": rid, "error": {"code": code, "message": message}}


def _id_of(obj: Any) -> Any:
    rid = obj.get("id") if isinstance(obj, dict) else None
    return rid if isinstance(rid, (str, int)) and not isinstance(rid, bool) else None


def triage(line: str, valid: Any) -> tuple[bool, dict[str, Any] | None]:
    """``(forward, answer)`` for one input line: ``forward`` when the SDK should take it; else ``answer`` is the
    error response to send (``None`` for a blank line or a malformed notification, which get none).
    ``valid(line)`` validates a line as the SDK does (raises on failure)."""
    if not line.strip():
        return False, None
    try:
        obj = json.loads(line)
    except ValueError:
        return False, error_response(PARSE_ERROR, "Parse error: the line is not JSON")
    try:
        valid(line)
    except Exception:
        return False, _invalid(obj)
    if isinstance(obj, dict) and obj.get("method") == "tools/call" and _id_of(obj) is not None:
        from memzoi.agent.arguments import call_params_problem  # noqa: PLC0415 lazy: start-up (pydantic)

        problem = call_params_problem("tools/call", obj.get("params"))
        if problem is not None:
            return False, error_response(INVALID_PARAMS, problem, _id_of(obj))
    return True, None


def _invalid(obj: Any) -> dict[str, Any] | None:
    """The answer to a JSON value the SDK does not take (``None``: a malformed notification or response, which
    get none)."""
    rid = _id_of(obj)
    if not isinstance(obj, dict):
        why = "batches are not supported" if isinstance(obj, list) else "a message must be a JSON object"
        return error_response(INVALID_REQUEST, f"Invalid Request: {why}")
    if "id" not in obj and isinstance(obj.get("method"), str) and obj.get("jsonrpc") == "2.0":
        return None  # a malformed notification: never answered
    if obj.get("jsonrpc") != "2.0" or not isinstance(obj.get("method"), str) or rid is None:
        if "method" not in obj and ("result" in obj or "error" in obj):
            return None  # a malformed response to one of our requests: nothing to answer
        return error_response(
            INVALID_REQUEST,
            'Invalid Request: needs "jsonrpc": "2.0", a string "method" and a string or integer id',
            rid,
        )
    return error_response(INVALID_PARAMS, f"Invalid params for {obj['method'][:100]}", rid)


#: Lines read ahead of the SDK, at most: beyond, the reader waits (the client's writes are held back, as before).
LINES_AHEAD = 64


def triaged_stdin(arrivals: Arrivals | None = None) -> tuple[MemoryObjectReceiveStream[dict[str, Any]], Any]:
    """Standard input as the SDK's transport reads it, minus the lines it cannot take: those are answered
    (:func:`triage`) through the returned stream of error responses. A thread of its own reads the lines
    (:func:`_read_ahead`) and notes each with ``arrivals`` as soon as it is read (:meth:`memzoi_mcp.arrivals.Arrivals.read`:
    a call's arrival and listing), before the event loop gets to it: at a session's start the loop is still handling
    the lines before it (``initialized``) while the core loads, and a call's find waited for that (issue 29: some
    10-25 ms of the first call's critical path). A line the check refuses is dropped from ``arrivals``."""
    import anyio  # noqa: PLC0415 lazy: start-up
    import mcp_types as types  # noqa: PLC0415 lazy: start-up

    send, receive = anyio.create_memory_object_stream[dict[str, Any]](100)
    ahead_send, ahead_receive = anyio.create_memory_object_stream[tuple[str, str | int | None]](LINES_AHEAD)
    stream = io.TextIOWrapper(sys.stdin.buffer, encoding="utf-8", errors="replace")

    class Lines:
        def __aiter__(self) -> AsyncIterator[str]:
            return self._lines()

        async def _lines(self) -> AsyncIterator[str]:
            token = anyio.lowlevel.current_token()
            args = (stream, arrivals, ahead_send, token)
            threading.Thread(target=_read_ahead, args=args, name="memzoi-mcp-stdin", daemon=True).start()
            async with send, ahead_receive:
                async for line, rid in ahead_receive:
                    forward, answer = triage(line, types.jsonrpc_message_adapter.validate_json)
                    if forward:
                        yield line
                        continue
                    if rid is not None and arrivals is not None:
                        arrivals.drop(rid)
                    if answer is not None:
                        await send.send(answer)

    return receive, Lines()


def _read_ahead(stream: Any, arrivals: Arrivals | None, ahead: Any, token: Any) -> None:
    """Read ``stream`` line by line to its end, note each line with ``arrivals`` as soon as it is read, and hand it
    with the noted id to the event loop of ``token`` through ``ahead`` (closed at the end, which ends the session
    as the end of input did). Ends quietly where the loop is gone or the input cannot be read (logged)."""
    import anyio  # noqa: PLC0415 lazy: start-up

    gone = (anyio.ClosedResourceError, anyio.BrokenResourceError, RuntimeError)  # RuntimeError: the loop has ended
    try:
        for line in stream:
            rid = arrivals.read(line) if arrivals is not None else None
            anyio.from_thread.run(ahead.send, (line, rid), token=token)
    except gone:
        return
    except (OSError, ValueError) as err:  # an input that cannot be read ends the session as its end does
        logging.getLogger("memzoi-mcp").warning("reading the input stopped: %s", type(err).__name__)
    with contextlib.suppress(*gone):
        anyio.from_thread.run_sync(ahead.close, token=token)


async def send_answers(answers: MemoryObjectReceiveStream[dict[str, Any]], write: Any) -> None:
    """Send each error response of :func:`triaged_stdin` through the SDK's writer (one writer: no interleaving)."""
    import mcp_types as types  # noqa: PLC0415 lazy: start-up
    from mcp.shared.message import SessionMessage  # noqa: PLC0415 lazy: start-up

    async with answers:
        async for answer in answers:
            await write.send(SessionMessage(types.JSONRPCError.model_validate(answer)))
