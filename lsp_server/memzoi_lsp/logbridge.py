"""Bridge from Python logging to ``window/logMessage`` with its levels (settings ``logToClient``, on by default,
and ``logLevel``, the least severe record sent).

Records from pygls are skipped: pygls logs every message it sends, so forwarding its records would send a log
message about sending a log message, without end. Records emitted on worker threads are handed to the event
loop, which owns the transport.
"""

from __future__ import annotations

import logging
import re
import sys
import threading
from typing import TYPE_CHECKING, TypeVar

from lsprotocol import types

if TYPE_CHECKING:
    from .session import LogSession
    from .session_members import ProjectsView

T = TypeVar("T")

_LEVELS = {
    logging.ERROR: types.MessageType.Error,
    logging.WARNING: types.MessageType.Warning,
    logging.INFO: types.MessageType.Info,
    logging.DEBUG: types.MessageType.Log,
}


class ClientLogHandler(logging.Handler):
    """Forwards ``memzoi*`` log records to the client while ``settings.log_to_client`` is on."""

    def __init__(self, server: LogSession) -> None:
        super().__init__(logging.DEBUG)
        self.server = server
        self._local = threading.local()

    def emit(self, record: logging.LogRecord) -> None:
        ls = self.server
        if "pygls" in record.name or not ls.settings.log_to_client or ls.stopping or ls.loop is None:
            return
        if record.levelno < logging.getLevelName(ls.settings.log_level.upper()):
            return
        if getattr(self._local, "busy", False):
            return
        self._local.busy = True
        try:
            params = types.LogMessageParams(
                type=_LEVELS.get(record.levelno, types.MessageType.Log), message=shown_in(ls, self.format(record))
            )
            if threading.current_thread() is threading.main_thread():
                ls.window_log_message(params)
            elif not ls.loop.is_closed():
                ls.loop.call_soon_threadsafe(ls.window_log_message, params)
        except Exception:  # logging must never break the server
            pass
        finally:
            self._local.busy = False


def _is_uri(key: str) -> bool:
    """A result's key whose value the client opens (``uri``, ``targetUri``): it stays the file's real URI."""
    return key.lower().endswith("uri")


def shown_in(ls: ProjectsView, value: T) -> T:
    """``value`` (a log line, a command's result or refusal text) with the local places of the workspace's projects
    it names (their roots, runtime directories, the memzoi home, Zuno's folder and the paths below them) spelled as
    :func:`memzoi.judge.pathsafety.shown_local_path` shows them; a ``uri`` the client opens is kept. The same
    object when none of their names bears a secret (:func:`~memzoi.judge.pathsafety.shown_for_projects`)."""
    from memzoi.judge.pathsafety import shown_for_projects  # noqa: PLC0415 lazy: start-up

    shown: T = shown_for_projects(value, sorted(ls.projects), _is_uri)
    return shown


class ShownPaths(logging.Filter):
    """Spells the local places a ``memzoi*`` record names as every output shows them (:func:`shown_in`), before any
    handler writes it: the client's log window and the server's stderr, which editors show in an output panel."""

    def __init__(self, server: ProjectsView) -> None:
        super().__init__()
        self.server = server

    def filter(self, record: logging.LogRecord) -> bool:
        try:
            text = record.getMessage()
            shown = shown_in(self.server, text)
            if record.exc_info and not record.exc_text:  # the formatters reuse the text set here
                record.exc_text = shown_in(self.server, _PLAIN.formatException(record.exc_info))
        except Exception:  # logging must never break the server (a projects mapping changing meanwhile)
            return True
        if shown is not text:
            record.msg, record.args = shown, ()
        return True


#: What formats an exception's traceback (``logging.Formatter`` does it the same way whatever its format string).
_PLAIN = logging.Formatter()


#: How a formatted traceback starts (pygls puts one in the message text of "Unable to deserialize message").
_TRACEBACK = "Traceback (most recent call last)"
_PLACEHOLDER = re.compile(r"%(?:\([^)]*\))?[-#0 +]*\d*(?:\.\d+)?[a-zA-Z%]")


class OneLineLibraryErrors(logging.Filter):
    """Turns a library's error record with a traceback into one line on stderr: pygls logs the full stack of a
    client's mistake (an unknown command, a malformed reply to one of our requests, a message it cannot
    deserialize), which editors show as a wall of errors. The line keeps pygls's message and the exception's type,
    never its text (it can quote the client's parameters, document text included); ``--log-level DEBUG`` keeps the
    stack. pygls passes the stack either as ``exc_info`` or already formatted in the message's arguments; in that
    case only the first line of its message template is kept, without arguments."""

    def filter(self, record: logging.LogRecord) -> bool:
        if record.name.startswith("memzoi"):
            return True
        if record.exc_info and record.exc_info[1] is not None:
            kind = type(record.exc_info[1]).__name__
            record.msg = f"{record.getMessage()} ({kind}; run with --log-level DEBUG for the stack)"
            record.args = ()
            record.exc_info = None
            record.exc_text = None
        elif _TRACEBACK in _rendered(record):
            # Logged from inside the ``except`` block, so the exception being handled is the one formatted.
            exc = sys.exc_info()[1]
            kind = type(exc).__name__ if exc is not None else "an exception"
            head = _PLACEHOLDER.sub("…", str(record.msg).split("\n", 1)[0]).strip()
            record.msg = f"{head} ({kind}; run with --log-level DEBUG for the stack)"
            record.args = ()
        return True


def unreadable_message(err: BaseException) -> str:
    """One line saying why a client's message could not be read: the error's kind and where it failed, e.g.
    ``JsonRpcInvalidParams: ValueError at DidChangeTextDocumentNotification.params.content_changes[0].range.start``
    (a negative position). Only type and attribute names from the structuring library's exception group (its
    ``While structuring`` message and ``@ attribute``/``@ index`` notes) are used: never a value, which can quote the
    client's document text. The stack is for ``--log-level DEBUG``."""
    exc: BaseException | None = err.__cause__ or err.__context__
    where: list[str] = []
    if isinstance(exc, BaseExceptionGroup):
        head = str(getattr(exc, "message", "")).removeprefix("While structuring ").split(" ", 1)[0]
        where.append(head if head.isidentifier() else "")
    leaf = ""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
        where += [_step(str(note)) for note in getattr(exc, "__notes__", ())]
        leaf = f": {type(exc).__name__}"
    path = "".join(where).lstrip(".")
    return f"{type(err).__name__}{leaf}{f' at {path}' if path else ''}"


def _step(note: str) -> str:
    """The step a structuring note names (``.name`` for ``@ attribute name``, ``[3]`` for ``@ index 3``), else
    nothing (a mapping's key is the client's text)."""
    _, at, name = note.rpartition(" @ attribute ")
    if at and name.isidentifier():
        return f".{name}"
    _, at, index = note.rpartition(" @ index ")
    return f"[{index}]" if at and index.isdigit() else ""


def _rendered(record: logging.LogRecord) -> str:
    try:
        return record.getMessage()
    except Exception:  # arguments that do not fit the template: logging reports that itself
        return str(record.msg)


def install(server: LogSession) -> None:
    """Attach the bridge to the ``memzoi_lsp`` and ``memzoi`` loggers, its records' local paths shown
    (:class:`ShownPaths`; the record is shared, so the stderr handler writes them shown too)."""
    handler = ClientLogHandler(server)
    handler.setFormatter(logging.Formatter("%(levelname)s %(name)s: %(message)s"))
    handler.addFilter(ShownPaths(server))
    logging.getLogger("memzoi_lsp").addHandler(handler)
    logging.getLogger("memzoi").addHandler(handler)
