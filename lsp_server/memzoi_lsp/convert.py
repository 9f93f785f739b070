"""Conversion between core spans (code-point offsets) and LSP positions in the negotiated encoding.

The core computes spans as Python string offsets of the text it analysed. LSP positions are ``(line,
character)`` with ``character`` counted in the client's position encoding (utf-16 for VS Code, utf-8 for
Neovim 0.11+). Lines are split on ``\\r\\n``, ``\\r`` and ``\\n`` only, as LSP says; pygls's ``TextDocument.lines``
uses ``str.splitlines`` (which also breaks on U+2028, form feed, …), so this module builds its own line table
(:class:`memzoi.read.text.LineIndex`) and uses pygls 2.1's :class:`~pygls.workspace.PositionCodec` only to count
code units within one line.
"""

from __future__ import annotations

import re
from functools import lru_cache

from lsprotocol import types
from pygls.workspace import PositionCodec, ServerTextPosition

from memzoi.read.text import LineIndex

_BREAK = re.compile(r"\r\n|\r|\n")


def encoding_name(encoding: object) -> str:
    """The encoding as a plain string (pygls gives an enum or a str; compare by value, never ``str(enum)``)."""
    value = getattr(encoding, "value", encoding)
    return str(value) if value else "utf-16"


@lru_cache(maxsize=8)
def _codec(encoding: str) -> PositionCodec:
    return PositionCodec(encoding)


class TextMap:
    """Position conversion for one exact text in one encoding.

    ``range(start, end)`` maps a code-point span to an LSP :class:`~lsprotocol.types.Range`; ``offset(pos)``
    maps an LSP position back to a code-point offset (clamped to the line's content, so a position past the end
    of a line lands before its line break).
    """

    __slots__ = ("text", "index", "codec", "_lines")

    def __init__(self, text: str, encoding: object = "utf-16") -> None:
        self.text = text
        self.index = LineIndex(text)
        self.codec = _codec(encoding_name(encoding))
        self._lines: list[str] | None = None

    @property
    def lines(self) -> list[str]:
        """Line contents without their line breaks, split the LSP way."""
        if self._lines is None:
            self._lines = [self.text[s:e] for s, e in (self.index.line_span(i) for i in range(self.index.line_count))]
        return self._lines

    def position(self, offset: int) -> types.Position:
        """LSP position of code-point ``offset`` (clamped into the text)."""
        line, col = self.index.position(offset)
        content = self.lines[line]
        col = min(col, len(content))
        return self.codec.position_to_client_units(self.lines, ServerTextPosition(line, col))

    def range(self, start: int, end: int) -> types.Range:
        """LSP range of the half-open code-point span ``[start, end)``."""
        return types.Range(start=self.position(start), end=self.position(max(start, end)))

    def offset(self, position: types.Position) -> int:
        """Code-point offset of an LSP position; lines beyond the end clamp to the end of the text."""
        if position.line >= self.index.line_count:
            return len(self.text)
        if position.line < 0:
            return 0
        content = self.lines[position.line]
        units = 0
        col = 0
        count = self.codec.impl.code_units_for_char
        for ch in content:
            if units >= position.character:
                break
            units += count(ch)
            col += 1
        return self.index.offset(position.line, col)
