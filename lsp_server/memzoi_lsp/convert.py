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
from collections.abc import Callable, Sequence
from functools import lru_cache
from typing import overload

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


class _OneLine(Sequence[str]):
    """The lines of a text up to ``line`` as :meth:`~pygls.workspace.PositionCodec.position_to_client_units` reads
    them (it indexes them by the position's line only): that line's ``content``, the lines before it empty."""

    __slots__ = ("line", "content")

    def __init__(self, line: int, content: str) -> None:
        self.line, self.content = line, content

    def __len__(self) -> int:
        return self.line + 1

    @overload
    def __getitem__(self, i: int) -> str: ...
    @overload
    def __getitem__(self, i: slice) -> Sequence[str]: ...
    def __getitem__(self, i: int | slice) -> str | Sequence[str]:
        if isinstance(i, slice):
            return [self[j] for j in range(len(self))[i]]
        if not -len(self) <= i < len(self):
            raise IndexError(i)
        return self.content if i % len(self) == self.line else ""


def placer(source: str | LineIndex, encoding: object = "utf-16") -> Callable[[int], tuple[int, int]]:
    """``(line, character)`` of a code-point offset in ``encoding``: of the text ``source`` (:meth:`TextMap.place`),
    or, for a file known by its line index alone (:meth:`memzoi.stores.firststage.FirstStage.plain_lines`: an ASCII
    text, offsets inside their lines), that index's ``(line, column)``, a code point being one code unit in every
    encoding."""
    if isinstance(source, LineIndex):
        return source.position
    return TextMap(source, encoding).place


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

    def place(self, offset: int) -> tuple[int, int]:
        """``(line, character)`` of code-point ``offset`` (clamped into the text) in the encoding. Only the offset's
        own line is cut out of the text (a diagnostic of a closed file needs one or two lines, not the list of all of
        them); an ASCII line needs no counting (a code point is one code unit in every encoding)."""
        line, col = self.index.position(offset)
        if self._lines is not None:
            content = self._lines[line]
        else:
            start, end = self.index.line_span(line)
            content = self.text[start:end]
        col = min(col, len(content))
        if content.isascii():
            return line, col
        got = self.codec.position_to_client_units(_OneLine(line, content), ServerTextPosition(line, col))
        return got.line, got.character

    def position(self, offset: int) -> types.Position:
        """LSP position of code-point ``offset`` (:meth:`place`)."""
        line, character = self.place(offset)
        return types.Position(line=line, character=character)

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
