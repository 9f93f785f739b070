"""The per-file exception barrier of every multi-file run.

``memzoi check`` (in this process and in its workers), ``rebuild``, ``search``, ``doctor``, and the language
server's scan, indexing and watcher each handle one file at a time. Analysis is total by contract, so an
exception there is a bug in memzoi-lsp; when one happens anyway, it becomes an ``internal_error`` finding on that
file (the file counts as unreadable: not admitted, not indexed) and the run goes on with the other files.

The stack goes to the ``memzoi.internal`` logger at debug level, as ``file, line, function`` frames of
memzoi-lsp's own code: never the exception's message or any value, because a message raised while reading a file
can quote its text, and that text can be a secret.
"""

from __future__ import annotations

import logging
import os
import traceback

from ..base.findings import Finding, finding
from ..read.document import frame
from .analysis import Analysis
from .pathsafety import shown_path
from .workspace import Placement, Role, place

log = logging.getLogger("memzoi.internal")

#: Frames of a very deep stack (a runaway recursion) shown from its start and its end.
_HEAD, _TAIL = 10, 30


def safe_traceback(exc: BaseException) -> str:
    """The stack of ``exc`` as ``File "…", line N, in name`` lines and the exception's type, without its message
    (which may quote file contents) or source lines; long stacks are shortened in the middle."""
    frames = traceback.extract_tb(exc.__traceback__)
    lines = [f'  File "{f.filename}", line {f.lineno}, in {f.name}' for f in frames]
    if len(lines) > _HEAD + _TAIL:
        lines = lines[:_HEAD] + [f"  ... {len(lines) - _HEAD - _TAIL} frames ..."] + lines[-_TAIL:]
    kind = type(exc)
    return "\n".join(
        [
            "Traceback (most recent call last):",
            *lines,
            f"{kind.__module__}.{kind.__qualname__} (message withheld: it may quote the file)",
        ]
    )


def log_internal_error(exc: BaseException, path: str | os.PathLike[str] | None = None) -> None:
    """Log an unexpected exception while handling the file (or URI) ``path``: one warning line with its type, and
    the stack (see :func:`safe_traceback`) at debug level."""
    where = shown_path(path) if path is not None else "a document"  # a secret-bearing path is never logged
    log.warning("internal error (%s) on %s; please report it", type(exc).__name__, where)
    log.debug("stack of the internal error on %s\n%s", where, safe_traceback(exc))


def internal_error(exc: BaseException, path: str | os.PathLike[str] | None = None, *, log: bool = True) -> Finding:
    """The ``internal_error`` finding (error, at offset 0) for an unexpected exception while handling the file at
    ``path``; logs it with :func:`log_internal_error` unless ``log`` is false (it was logged where it happened)."""
    if log:
        log_internal_error(exc, path)
    return finding(
        "internal_error",
        f"memzoi-lsp could not analyse this file: an internal error ({type(exc).__name__}) stopped it, so its "
        "findings are unknown (the other files were handled). This is a bug in memzoi-lsp: please report it, with "
        "the stack that `memzoi --debug` prints or the server logs at log level debug (it never shows the file's "
        "contents)",
        0,
        0,
    )


def failed_analysis(
    exc: BaseException, path: str | os.PathLike[str] | None = None, placement: Placement | None = None
) -> Analysis:
    """An :class:`~memzoi.judge.analysis.Analysis` of an empty text at ``path`` holding only the ``internal_error``
    finding for ``exc``: what a caller keeps for a file whose analysis raised."""
    if placement is None:
        placement = place(path) if path is not None else Placement(Role.OTHER)
    return Analysis(frame(""), placement, [internal_error(exc, path)])


__all__ = ["failed_analysis", "internal_error", "log_internal_error", "safe_traceback"]
