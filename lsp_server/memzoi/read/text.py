"""Text primitives: strict UTF-8 decoding, line endings, and offset ↔ (line, column) mapping.

All positions in the core are Python string offsets (code points). Lines are split on ``\\r\\n``, ``\\r`` and
``\\n`` only, as LSP does (never on U+2028, form feed or the other breaks ``str.splitlines`` knows).
"""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass

from ..base.findings import Finding, finding

#: Unicode White_Space, the set Rust's ``str::trim`` removes (Python's ``str.strip`` also removes \x1c-\x1f).
RUST_WHITESPACE = "\t\n\x0b\x0c\r \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000"


def rust_trim(value: str) -> str:
    """Trim like Rust's ``str::trim`` (Unicode White_Space), so hashes of trimmed text match Memzoi's."""
    return value.strip(RUST_WHITESPACE)


BOM = "\ufeff"
_LINE_BREAK = re.compile(r"\r\n|\r|\n")


@dataclass(frozen=True, slots=True)
class Decoded:
    """Result of :func:`decode`: the text (always a ``str``) and at most one ``invalid_encoding`` finding."""

    text: str
    findings: tuple[Finding, ...]


def decode(data: bytes) -> Decoded:
    """Decode ``data`` as strict UTF-8.

    On invalid bytes the text is decoded with U+FFFD replacement (so every later analyser still runs) and an
    ``invalid_encoding`` finding reports the first bad byte's offset in the file and its code-point span in the
    replaced text. A UTF-8 BOM is kept in the text as U+FEFF at offset 0 (editors keep it too), so spans agree
    with the editor buffer. Never raises.
    """
    try:
        return Decoded(data.decode("utf-8"), ())
    except UnicodeDecodeError as err:
        prefix = data[: err.start].decode("utf-8", errors="replace")
        text = data.decode("utf-8", errors="replace")
        at = len(prefix)
        msg = (
            f"file is not valid UTF-8: invalid byte 0x{data[err.start]:02x} at byte offset {err.start}; "
            "re-save the file as UTF-8"
        )
        return Decoded(text, (finding("invalid_encoding", msg, at, min(at + 1, len(text)), byte_offset=err.start),))


def line_ending(text: str) -> str:
    """The document's dominant line ending (``"\\r\\n"``, ``"\\n"`` or ``"\\r"``); ``"\\n"`` when it has none.

    Writers use it so an edit never mixes styles into a file.
    """
    crlf = text.count("\r\n")
    lf = text.count("\n") - crlf
    cr = text.count("\r") - crlf
    best = max((crlf, "\r\n"), (lf, "\n"), (cr, "\r"), key=lambda p: p[0])
    return best[1] if best[0] else "\n"


def _known(text: str | None) -> str:
    """``text``, or ``TypeError`` for the missing text of an index known only by its line starts."""
    if text is None:
        raise TypeError("this LineIndex was made from line starts only (LineIndex.from_starts) and has no text")
    return text


class LineIndex:
    """Maps code-point offsets of one text to 0-based ``(line, column)`` pairs and back.

    Columns are code points from the line start. Offsets beyond the text clamp to its end.
    """

    __slots__ = ("text", "starts", "length")

    #: the text (``None`` for an index made by :meth:`from_starts`)
    text: str | None
    starts: list[int]
    length: int

    def __init__(self, text: str) -> None:
        self.text = text
        if "\r" in text:
            self.starts = [0] + [m.end() for m in _LINE_BREAK.finditer(text)]
        else:  # only `\n` breaks lines: str.find is three times faster than the expression
            starts, find, at = [0], text.find, text.find("\n")
            while at >= 0:
                at += 1
                starts.append(at)
                at = find("\n", at)
            self.starts = starts
        self.length = len(text)

    @classmethod
    def from_starts(cls, starts: list[int], length: int) -> LineIndex:
        """An index of a text known only by its line starts (``self.starts`` of its index) and its length in code
        points, as the verdict cache keeps it: :meth:`position` and :attr:`line_count` work; :meth:`offset` and
        :meth:`line_span`, which need the text, raise ``TypeError``."""
        index = cls.__new__(cls)
        index.text, index.starts, index.length = None, starts, length
        return index

    def position(self, offset: int) -> tuple[int, int]:
        """``(line, column)`` of ``offset``; an offset inside a ``\\r\\n`` pair maps to the end of its line."""
        offset = max(0, min(offset, self.length))
        line = bisect.bisect_right(self.starts, offset) - 1
        return line, offset - self.starts[line]

    def inside_line(self, offset: int) -> bool:
        """Whether the column of ``offset`` (:meth:`position`) lies within its line's content whatever that line's
        break is (``\\n``, ``\\r\\n`` or ``\\r``, LSP's three): the offset is on the last line, which has no break,
        or at least two code points before the next line's start. Such a column needs no clamping to the line's
        content, so an index made from line starts alone (:meth:`from_starts`) gives it exactly."""
        offset = max(0, min(offset, self.length))
        line = bisect.bisect_right(self.starts, offset) - 1
        return line + 1 >= len(self.starts) or offset <= self.starts[line + 1] - 2

    def offset(self, line: int, column: int) -> int:
        """Offset of ``(line, column)``, clamped to the line's content (its line break excluded)."""
        if line < 0:
            return 0
        text = self.text
        if line >= len(self.starts):
            return len(_known(text))
        start = self.starts[line]
        end = self.starts[line + 1] if line + 1 < len(self.starts) else len(_known(text))
        content_end = end
        while content_end > start and _known(text)[content_end - 1] in "\r\n":
            content_end -= 1
        return min(start + max(column, 0), content_end)

    def line_span(self, line: int) -> tuple[int, int]:
        """``(start, end)`` of ``line``'s content, without its line break."""
        start = self.offset(line, 0)
        return start, self.offset(line, 1 << 30)

    @property
    def line_count(self) -> int:
        """Number of lines (a trailing line break starts one more, empty line)."""
        return len(self.starts)
