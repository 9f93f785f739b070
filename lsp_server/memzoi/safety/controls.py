"""C0 control characters (U+0000–U+001F) where text should have none.

A control character renders as nothing (or moves the cursor), and some of them (U+0000 above all) make git treat a
file as binary, so a pull-request reviewer sees no diff of the memory at all. They are reported as
``invisible_character`` (the code of characters that hide text from reviewers). Tab and the line break are text:
a line break is ``\\n`` or ``\\r\\n`` (a CRLF file). :func:`control_spans` finds runs in any text;
:func:`control_hits` makes them detector hits for a whole file.
"""

from __future__ import annotations

import re

from .base import Hit

_IN_FILE = re.compile(r"(?:[\x00-\x08\x0b\x0c\x0e-\x1f]|\r(?!\n))+")
_IN_LINE = re.compile(r"[\x00-\x1f]+")
#: the C0 control bytes other than tab and ``\n`` (``\r`` among them: a CRLF text takes the general test)
_NOT_BREAKS = bytes(c for c in range(32) if c not in (9, 10))


def control_spans(text: str, *, breaks: bool = True) -> list[tuple[int, int]]:
    """``(start, end)`` code-point spans of the runs of C0 control characters in ``text``. With ``breaks`` (a
    body, a file) tab, ``\\n`` and ``\\r\\n`` are allowed; without it (a one-line field: a title, a reason, a tag)
    none is."""
    if text.isprintable():  # the usual case, and faster than the regex
        return []
    if breaks:
        if text.isascii():
            # the usual file: ASCII whose only controls are tabs and `\n`; one C pass deletes the other controls
            data = text.encode("ascii")
            if len(data.translate(None, _NOT_BREAKS)) == len(data):
                return []
        if text.replace("\r\n", "").replace("\n", "").replace("\t", "").isprintable():
            return []  # a text whose only controls are allowed line breaks and tabs: no regex pass
    pattern = _IN_FILE if breaks else _IN_LINE
    return [m.span() for m in pattern.finditer(text)]


def _describe(run: str) -> str:
    shown = ", ".join(f"U+{ord(c):04X}" for c in run[:6])
    more = f", and {len(run) - 6} more" if len(run) > 6 else ""
    return f"control character ({shown}{more})"


def control_hits(text: str) -> list[Hit]:
    """``invisible_character`` hits for the runs of C0 control characters in a file's ``text`` (tab and line
    breaks allowed), labelled with their code points (never the surrounding text)."""
    return [Hit("invisible_character", s, e, _describe(text[s:e]), text[s:e], 0) for s, e in control_spans(text)]
