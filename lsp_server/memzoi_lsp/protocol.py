"""Protocol tweaks over pygls's :class:`~pygls.protocol.LanguageServerProtocol`: requests with params that do not
structure get an ``InvalidParams`` error, a malformed reply fails only the request it answers, requests after
``shutdown`` get ``InvalidRequest``, replies to the server's own requests are still taken after ``shutdown``, and a
``$/cancelRequest`` of an unknown or finished request or a late reply to a request the server gave up on (cancelled
by a timeout) is normal traffic: logged at debug level, never as a warning or a traceback (issue 28)."""

from __future__ import annotations

import functools
import logging
from collections.abc import Callable, Generator
from typing import Any

from lsprotocol import types
from lsprotocol.types import ResponseError
from pygls.exceptions import JsonRpcException
from pygls.protocol import LanguageServerProtocol
from pygls.protocol.json_rpc import MsgId
from pygls.protocol.language_server import lsp_method

log = logging.getLogger("memzoi_lsp")


class _Dropped:
    """Marker for a message already answered while structuring it."""

    jsonrpc = "2.0"


class MemzoiProtocol(LanguageServerProtocol):
    """Protocol tweaks: replies to the server's own requests are still processed after ``shutdown`` (B26: pygls
    cancels their futures at ``shutdown`` and then drops every message but ``exit``, so a pending
    ``workspace/configuration`` would never resolve); only new requests and notifications are refused."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._incoming: set[MsgId] = set()  # ids of the client's requests still being handled

    def _handle_request(self, msg_id: MsgId, method_name: str, params: Any) -> Any:
        self._incoming.add(msg_id)
        try:
            return super()._handle_request(msg_id, method_name, params)
        finally:
            future = self._request_futures.get(msg_id)
            if future is None or future.done():
                self._incoming.discard(msg_id)
            else:
                future.add_done_callback(lambda _f: self._incoming.discard(msg_id))

    def _handle_cancel_notification(self, msg_id: MsgId) -> Any:
        """pygls's cancel, without its warning for an id that is unknown or already answered: clients cancel
        requests that raced with their answer all the time (VS Code cancels every superseded hover or code
        action request)."""
        future = self._request_futures.get(msg_id)
        if future is None or future.done():
            log.debug("$/cancelRequest for %r: no such request running (already answered)", msg_id)
            return None
        return super()._handle_cancel_notification(msg_id)

    def _handle_response(self, msg_id: MsgId, result: Any = None, error: Any = None) -> Any:
        """pygls's reply handling, except that a reply to a request the server no longer waits for (unknown id,
        or a future cancelled by a timeout: pygls would raise ``InvalidStateError`` setting its result) is
        dropped quietly."""
        future = self._request_futures.get(msg_id)
        if future is None or future.done():
            self._request_futures.pop(msg_id, None)
            log.debug("late reply to request %r (no longer awaited); ignored", msg_id)
            return None
        return super()._handle_response(msg_id, result, error)

    @lsp_method(types.SHUTDOWN)
    def lsp_shutdown(self, *args: Any) -> Generator[Any, Any, None]:
        """pygls's shutdown, except that only the client's pending requests are cancelled."""
        if (user_handler := self.fm.features.get(types.SHUTDOWN)) is not None:
            yield user_handler, args, None
        current_id = self.msg_id
        for msg_id, future in list(self._request_futures.items()):
            # Only the client's pending requests are cancelled: not our own requests, and not notification
            # handlers (such as `initialized` awaiting our `workspace/configuration`).
            if msg_id == current_id or msg_id not in self._incoming:
                continue
            if not future.done():
                future.cancel()
        self._shutdown = True
        return None

    def structure_message(self, data: dict[str, Any]) -> Any:
        """Answer a request whose params do not structure with an ``InvalidParams`` error (pygls only logs it,
        and the client would wait forever); the message itself is then dropped. A reply to one of the server's
        own requests that does not structure (a client answering ``window/showDocument`` with ``null``) fails
        that request's future, so the command awaiting it goes on instead of waiting forever."""
        try:
            return super().structure_message(data)
        except JsonRpcException as exc:
            if isinstance(data, dict) and "id" in data and "method" in data:
                log.warning("invalid params for %s: answered with an error", data.get("method"))
                self._send_response(
                    data["id"],
                    error=ResponseError(code=exc.code, message=f"{exc.message} for {data.get('method')}"),
                )
                return _Dropped()
            if isinstance(data, dict) and "id" in data and ("result" in data or "error" in data):
                future = self._request_futures.pop(data["id"], None)
                log.warning("malformed reply from the client to request %r", data["id"])
                if future is not None and not future.done():
                    future.set_exception(exc)
                return _Dropped()
            raise

    def handle_message(self, message: Any) -> Any:  # noqa: D401 - pygls API
        if isinstance(message, _Dropped):
            return None
        if self._shutdown and getattr(message, "method", types.EXIT) != types.EXIT and hasattr(message, "id"):
            # LSP: after `shutdown`, every request but `exit` is answered with InvalidRequest (pygls drops it).
            self._send_response(
                message.id, error=ResponseError(code=-32600, message="Invalid request: the server is shutting down")
            )
            return None
        if self._shutdown and not hasattr(message, "method"):
            self._shutdown = False
            try:
                return super().handle_message(message)
            finally:
                self._shutdown = True
        return super().handle_message(message)


def handler(method: Callable[..., Any]) -> Callable[..., Any]:
    """A feature object's bound ``method`` as pygls registers it (``server.feature(...)(handler(self.hover))``):
    pygls marks the function it registers with attributes, which a bound method cannot take; a
    :func:`functools.partial` of it can, and keeps its signature (no ``ls`` parameter: the object holds its
    session) and whether it is a coroutine function."""
    return functools.partial(method)


__all__ = ["MemzoiProtocol", "handler"]
