"""Progress of a long run on a terminal: one status line on stderr, rewritten in place and cleared at the end.

The core reports progress through a ``progress(done, total)`` callback (:func:`memzoi.runs.check.check_paths`,
:meth:`memzoi.stores.index.Index.rebuild`); this module draws it. It follows what users of command-line tools expect
(git, cargo, pip): progress goes to stderr, only when stderr is a terminal whose ``TERM`` is not ``dumb``, never
into the report (stdout or ``--output-file``, in any format), and not at all with ``--no-progress`` or
``--quiet``. Short runs stay silent: the line appears for a run of at least :data:`MIN_FILES` files, or once a run
has taken :data:`DELAY` seconds, so a check of a few files never flickers.
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Callable, Mapping
from typing import TextIO

#: A run of this many files shows progress from its start.
MIN_FILES = 300
#: A smaller run shows progress once it has taken this many seconds.
DELAY = 1.0
#: At most this many redraws a second (a terminal that redraws on every file slows the run down).
REDRAWS_PER_SECOND = 10


def progress_wanted(stream: TextIO, *, disabled: bool = False, environ: Mapping[str, str] | None = None) -> bool:
    """Whether progress may be drawn on ``stream``: not ``disabled`` (``--no-progress``, ``--quiet``), the stream
    is a terminal, and ``TERM`` is not ``dumb`` (a terminal that cannot rewrite a line: Emacs' shell, some CI
    consoles). ``environ`` defaults to ``os.environ``."""
    if disabled:
        return False
    env = os.environ if environ is None else environ
    if env.get("TERM") == "dumb":
        return False
    isatty = getattr(stream, "isatty", None)
    try:
        return bool(isatty and isatty())
    except (OSError, ValueError):  # a closed stream
        return False


class Progress:
    """A ``(done, total)`` callback drawing ``memzoi <what>: <verb> N/T files (P%), R files/s`` on one line.

    ``stream`` (default: ``sys.stderr``) is written only when ``enabled`` (default: :func:`progress_wanted` of
    the stream). ``min_files``, ``delay`` and ``clock`` (seconds, monotonic) decide when a run is long enough to
    show (see the module docstring); tests inject them. :meth:`finish` clears the line. Writing never raises:
    a terminal that went away only ends the progress."""

    def __init__(
        self,
        what: str,
        verb: str,
        *,
        stream: TextIO | None = None,
        enabled: bool | None = None,
        min_files: int = MIN_FILES,
        delay: float = DELAY,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.what = what
        self.verb = verb
        self.stream = stream if stream is not None else sys.stderr
        self.enabled = progress_wanted(self.stream) if enabled is None else enabled
        self.min_files = min_files
        self.delay = delay
        self.clock = clock
        self.started = clock()
        self.last = float("-inf")
        self.width = 0  # characters of the line on screen (0: nothing drawn)

    def __call__(self, done: int, total: int) -> None:
        if not self.enabled:
            return
        now = self.clock()
        elapsed = now - self.started
        if total < self.min_files and elapsed < self.delay:
            return
        if done < total and now - self.last < 1 / REDRAWS_PER_SECOND:
            return
        self.last = now
        self._draw(self.line(done, total, elapsed))

    def line(self, done: int, total: int, elapsed: float) -> str:
        """The status text for ``done`` of ``total`` files after ``elapsed`` seconds (no control characters)."""
        pct = 100 * done // total if total else 100
        text = f"memzoi {self.what}: {self.verb} {done:,}/{total:,} files ({pct}%)"
        if elapsed > 0 and done:
            text += f", {done / elapsed:,.0f} files/s"
        return text

    def _draw(self, text: str) -> None:
        # Pad over a longer previous line instead of an escape sequence, so any terminal clears it.
        pad = " " * max(0, self.width - len(text))
        self._write("\r" + text + pad)
        self.width = len(text)

    def finish(self) -> None:
        """Clear the progress line (nothing when none was drawn), leaving the cursor at the start of the line."""
        if self.width:
            self._write("\r" + " " * self.width + "\r")
            self.width = 0

    def _write(self, text: str) -> None:
        try:
            self.stream.write(text)
            self.stream.flush()
        except (OSError, ValueError):  # the terminal is gone (closed, hung up): stop drawing
            self.enabled = False
            self.width = 0


__all__ = ["DELAY", "MIN_FILES", "Progress", "progress_wanted"]
