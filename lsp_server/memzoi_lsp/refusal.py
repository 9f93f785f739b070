"""Refusals of ``workspace/executeCommand`` as JSON-RPC error responses.

A refused command (a core :class:`~memzoi.ledger.Refusal`, bad arguments, unsaved changes) answers with an error
response, never a success carrying an error object: every client then reports it once, through its own request
error path, and the server sends no ``window/showMessage`` of its own. The error's ``data`` holds the CLI's JSON
refusal shape ``{"code", "message"[, "path"]}``. Missing or malformed arguments (a reason that is required, a change
id) use InvalidParams (-32602); other refusals RequestFailed (-32803, LSP 3.17).
"""

from __future__ import annotations

import logging
from typing import Any

from pygls.exceptions import JsonRpcException

INVALID_PARAMS = -32602
REQUEST_FAILED = -32803
ARGUMENT_CODES = frozenset({"invalid_arguments", "reason_required"})


class CommandRefused(JsonRpcException):
    """A command refused to run; nothing was written. ``data`` is ``{"code", "message"[, "path"]}``."""

    def __init__(self, code: str, message: str, path: str | None = None) -> None:
        data: dict[str, Any] = {"code": code, "message": message}
        if path:
            data["path"] = path
        super().__init__(message=message, code=INVALID_PARAMS if code in ARGUMENT_CODES else REQUEST_FAILED, data=data)


class _QuietRefusals(logging.Filter):
    """pygls logs every exception a handler raises with its traceback; a refusal is an answer, not a fault."""

    def filter(self, record: logging.LogRecord) -> bool:
        exc = record.exc_info[1] if record.exc_info else None
        return not isinstance(exc, CommandRefused)


def install() -> None:
    """Keep refusals out of pygls's error log (they are logged once, at info level, by the command wrapper)."""
    for name in ("pygls.protocol.json_rpc", "pygls.protocol", "pygls"):
        logging.getLogger(name).addFilter(_QuietRefusals())
