"""The per-text scan context: lower-cased text, a word set for cheap gating, and the long whitespace-free runs.

Detectors are gated on words (``b"password" in ctx.words``) before any regular expression runs, so a typical
record pays for one translation pass, one split and a few set look-ups; only texts that mention a detector's
vocabulary pay for its patterns. Words are maximal ASCII alphanumeric runs of the lower-cased text, as bytes
(``api_key`` gives ``api`` and ``key``; ``ghp_…`` gives ``ghp``). Long runs (16+ characters between whitespace)
are where every token, hash and encoded value lives.
"""

from __future__ import annotations

import bisect
import re
from functools import cached_property

_NON_ALNUM = bytes(c for c in range(256) if not (48 <= c <= 57 or 97 <= c <= 122))
_TO_SPACE = bytes.maketrans(_NON_ALNUM, b" " * len(_NON_ALNUM))
_ASCII_LOWER = str.maketrans({chr(c): chr(c + 32) for c in range(65, 91)})
_FENCE = re.compile(r"(?m)^[ \t]{0,3}(`{3,}|~{3,})")
LONG = 16


def lower(text: str) -> str:
    """Lower-case ``text`` keeping every offset (``str.lower`` can change the length, e.g. for U+0130)."""
    low = text.lower()
    return low if len(low) == len(text) else text.translate(_ASCII_LOWER)


class Ctx:
    """Scan context of one text. ``body_start`` is where fenced examples are looked for."""

    __slots__ = ("text", "low", "words", "low_bytes", "__dict__", "body_start")

    def __init__(self, text: str, body_start: int = 0) -> None:
        self.text = text
        self.low = lower(text)
        self.low_bytes = self.low.encode("utf-8", "surrogatepass")
        self.words: frozenset[bytes] = frozenset(self.low_bytes.translate(_TO_SPACE).split())
        self.body_start = body_start

    def has(self, *words: bytes) -> bool:
        """True when any of ``words`` occurs."""
        return not self.words.isdisjoint(words)

    @cached_property
    def digit_words(self) -> list[bytes]:
        """The distinct all-digit words."""
        return list(filter(bytes.isdigit, self.words))

    @cached_property
    def digit_lengths(self) -> frozenset[int]:
        """Lengths of the all-digit words."""
        return frozenset(map(len, self.digit_words)) if self.digit_words else frozenset()

    @cached_property
    def big_prefixes(self) -> frozenset[bytes]:
        """2, 3 and 4-character prefixes of the 12+ character words."""
        big = self.big_words
        return frozenset([w[:2] for w in big] + [w[:3] for w in big] + [w[:4] for w in big])

    @cached_property
    def big_words(self) -> list[bytes]:
        """Words of 12+ characters (where run-together token prefixes such as ``akia…`` show up)."""
        return [w for w in self.words if len(w) >= 12]

    @cached_property
    def longs(self) -> list[tuple[int, str]]:
        """``(offset, run)`` for every whitespace-free run of at least 16 characters, in text order."""
        out: list[tuple[int, str]] = []
        text = self.text
        cursor = 0
        for w in [w for w in text.split() if len(w) >= LONG]:
            # Runs in between are shorter than ``w`` and cannot contain it, so the next match is ``w``.
            pos = text.find(w, cursor)
            out.append((pos, w))
            cursor = pos + len(w)
        return out

    @cached_property
    def long_text(self) -> str:
        """The :attr:`longs` runs joined by line breaks (empty when there are none): a short string where a
        literal that only occurs inside a 16+ character token can be looked for without scanning the text."""
        return "\n".join([run for _, run in self.longs])

    @cached_property
    def fences(self) -> list[tuple[int, int]]:
        """Spans of fenced code blocks at or after ``body_start`` (an unclosed fence runs to the end)."""
        ranges: list[tuple[int, int]] = []
        if "```" not in self.text and "~~~" not in self.text:
            return ranges
        open_at: tuple[int, str] | None = None
        for m in _FENCE.finditer(self.text, self.body_start):
            marker = m.group(1)
            if open_at is None:
                open_at = (m.start(), marker[0] * 3)
            elif marker.startswith(open_at[1]):
                ranges.append((open_at[0], m.end()))
                open_at = None
        if open_at is not None:
            ranges.append((open_at[0], len(self.text)))
        return ranges

    def in_fence(self, offset: int) -> bool:
        """True when ``offset`` lies inside a fenced code block."""
        ranges = self.fences
        i = bisect.bisect_right([r[0] for r in ranges], offset) - 1
        return i >= 0 and offset < ranges[i][1]

    def boundary_before(self, start: int) -> bool:
        """True when no identifier character precedes ``start``."""
        return start == 0 or not (self.text[start - 1].isalnum() or self.text[start - 1] == "_")

    def boundary_after(self, end: int) -> bool:
        """True when no identifier character follows ``end``."""
        return end >= len(self.text) or not (self.text[end].isalnum() or self.text[end] == "_")
