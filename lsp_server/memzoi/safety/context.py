"""The per-text scan context: lower-cased text, a word set for cheap gating, and the long whitespace-free runs.

Detectors are gated on words (``ctx.any_of(PASSWORD_WORDS)``) before any regular expression runs, so a typical
record pays for one translation pass, one split and a few set look-ups; only texts that mention a detector's
vocabulary pay for its patterns. Words are maximal ASCII alphanumeric runs of the lower-cased text, as bytes
(``api_key`` gives ``api`` and ``key``; ``ghp_…`` gives ``ghp``). Long runs (16+ characters between whitespace)
are where every token, hash and encoded value lives.

A detector declares the words it gates on with :func:`gate_words` when its module is imported; :attr:`Ctx.words`
keeps only those (a record has some hundred distinct words and mentions a handful of gate words, so every
later set operation is on a tiny set). :meth:`Ctx.any_of` takes such a declared set; :meth:`Ctx.has` takes
words and refuses one nobody declared.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Callable, Iterable
from typing import Any, Generic, TypeVar, overload

from . import prefilter

_NON_ALNUM = bytes(c for c in range(256) if not (48 <= c <= 57 or 97 <= c <= 122))
_TO_SPACE = bytes.maketrans(_NON_ALNUM, b" " * len(_NON_ALNUM))
_ASCII_LOWER = str.maketrans({chr(c): chr(c + 32) for c in range(65, 91)})
_FENCE = re.compile(r"(?m)^[ \t]{0,3}(`{3,}|~{3,})")
LONG = 16
#: ASCII bytes → space for the characters ``str.split()`` splits on (``str.isspace``), ``x`` for the others
_SPACE_MARKS = bytes(32 if chr(c).isspace() else 120 for c in range(128)) + b"x" * 128
_LONG_MARK = b"x" * LONG
#: from this many bytes on, a text's gate words are found by the prefilter's scan; below it a split is cheaper
#: (measured: the scan's fixed cost is some 2 us, a split costs some 6 ns per byte; equal near 500 bytes)
SCAN_WORDS_FROM = 512


_T = TypeVar("_T")


class lazy(Generic[_T]):  # noqa: N801 - used like functools.cached_property
    """``functools.cached_property`` without its lock (Python < 3.12 takes one on every first access): the value
    is computed on first access and stored in the instance ``__dict__``, which later lookups find directly. A
    :class:`Ctx` belongs to one scan in one thread."""

    def __init__(self, fn: Callable[[Any], _T]) -> None:
        self.fn = fn
        self.name = fn.__name__
        self.__doc__ = fn.__doc__

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name

    @overload
    def __get__(self, obj: None, owner: type | None = None) -> lazy[_T]: ...
    @overload
    def __get__(self, obj: object, owner: type | None = None) -> _T: ...
    def __get__(self, obj: object | None, owner: type | None = None) -> lazy[_T] | _T:
        if obj is None:
            return self
        value = obj.__dict__[self.name] = self.fn(obj)
        return value


#: every word some detector gates on (see gate_words)
_VOCABULARY: set[bytes] = set()


def gate_words(words: Iterable[bytes]) -> frozenset[bytes]:
    """Declare ``words`` (lower-case ASCII alphanumeric, as bytes) as gate words and return them as a frozenset.

    Only declared words are kept in :attr:`Ctx.words`, so a detector module calls this at import time for every
    word it looks up (contexts built before a declaration do not know the new word)."""
    out = frozenset(words)
    _VOCABULARY.update(out)
    prefilter.register_words(out)
    return out


def lower(text: str) -> str:
    """Lower-case ``text`` keeping every offset (``str.lower`` can change the length, e.g. for U+0130)."""
    low = text.lower()
    return low if len(low) == len(text) else text.translate(_ASCII_LOWER)


#: an ASCII text longer than this, whose lower-cased bytes no detector asked for, is marked for its long runs
#: a piece at a time (:func:`_piecewise_runs`): whole, the marking took two more copies of a 30 MB record at once
MARK_PIECE = 1 << 20
_WHITESPACE = re.compile(r"\s")  # in a str pattern, exactly the characters of str.isspace


def _marked_runs(marks: bytes, text: str, base: int, out: list[tuple[int, str]]) -> None:
    """Append ``(offset, run)`` for each 16+ character run of ``marks`` (the :data:`_SPACE_MARKS` marking of
    ``text[base:base + len(marks)]``, which ends with a space or at the text's end)."""
    i = marks.find(_LONG_MARK)
    while i >= 0:
        end = marks.find(b" ", i + LONG)
        if end < 0:
            end = len(marks)
        out.append((base + i, text[base + i : base + end]))
        i = marks.find(_LONG_MARK, end)


def _piecewise_runs(text: str, out: list[tuple[int, str]]) -> None:
    """The long runs of the ASCII ``text`` as :attr:`Ctx.longs` finds them, marked :data:`MARK_PIECE` characters at
    a time, each piece cut after its last whitespace (a run never spans two pieces); a piece without whitespace
    starts a run that ends at the next whitespace."""
    base, size = 0, len(text)
    while base < size:
        stop = min(base + MARK_PIECE, size)
        marks = text[base:stop].encode("ascii").translate(_SPACE_MARKS)
        if stop < size:
            cut = marks.rfind(b" ") + 1
            if not cut:
                found = _WHITESPACE.search(text, stop)
                stop = found.start() if found is not None else size
                if stop - base >= LONG:  # always, but for pieces shorter than a long run
                    out.append((base, text[base:stop]))
                base = stop
                continue
            marks, stop = marks[:cut], base + cut
        _marked_runs(marks, text, base, out)
        base = stop


class Ctx:
    """Scan context of one text. ``body_start`` is where fenced examples are looked for."""

    __slots__ = ("text", "low", "__dict__", "body_start")

    def __init__(self, text: str, body_start: int = 0) -> None:
        self.text = text
        self.low = lower(text)
        self.body_start = body_start

    # ``low_bytes`` and ``words`` are computed when first asked: Memzoi's rules alone (the scan of a text over the
    # size limit, :func:`.scan.collect_hits`'s ``floor_only``) never ask for ``words``, whose split of a 30 MB
    # text took some 300 MB, and ask for ``low_bytes`` only in a text that is not ASCII.
    @lazy
    def low_bytes(self) -> bytes:
        """The lower-cased text as UTF-8 (lone surrogates kept)."""
        return self.low.encode("utf-8", "surrogatepass")

    @lazy
    def words(self) -> frozenset[bytes]:
        """The declared gate words (:func:`gate_words`) that occur in the text: in a text of some length found by
        the prefilter's one scan for all of them (:func:`.prefilter.words_in`), else by splitting the text (the
        same set)."""
        spaced = self.low_bytes.translate(_TO_SPACE)
        found = prefilter.words_in(spaced) if len(spaced) >= SCAN_WORDS_FROM else None
        return found if found is not None else frozenset(_VOCABULARY.intersection(spaced.split()))

    def has(self, *words: bytes) -> bool:
        """True when any of ``words`` occurs. Raises ``ValueError`` for a word not declared with
        :func:`gate_words` (it would never be found)."""
        if not _VOCABULARY.issuperset(words):
            raise ValueError(f"undeclared gate words: {sorted(set(words) - _VOCABULARY)}")
        return not self.words.isdisjoint(words)

    def any_of(self, gate: frozenset[bytes]) -> bool:
        """True when a word of ``gate`` (a set returned by :func:`gate_words`) occurs."""
        return not self.words.isdisjoint(gate)

    @lazy
    def possible(self) -> frozenset[str] | None:
        """The prefilter's answer for the text (:func:`.prefilter.possible`): the declared pattern names that may
        match, or ``None`` when every pattern must be searched."""
        return prefilter.possible(self.text)

    def may(self, name: str) -> bool:
        """False only when the pattern declared as ``name`` (:func:`.prefilter.register`) cannot match the text;
        a detector then skips its search. Without the prefilter, always True."""
        possible = self.possible
        return possible is None or name in possible

    @lazy
    def all_words(self) -> frozenset[bytes]:
        """Every distinct word of the text (gate words or not); computed only when asked."""
        return frozenset(self.low_bytes.translate(_TO_SPACE).split())

    @lazy
    def digit_words(self) -> list[bytes]:
        """The distinct all-digit words."""
        return list(filter(bytes.isdigit, self.all_words))

    @lazy
    def digit_lengths(self) -> frozenset[int]:
        """Lengths of the all-digit words."""
        return frozenset(map(len, self.digit_words)) if self.digit_words else frozenset()

    @lazy
    def big_prefixes(self) -> frozenset[bytes]:
        """2, 3 and 4-character prefixes of the 12+ character words."""
        big = self.big_words
        return frozenset([w[:2] for w in big] + [w[:3] for w in big] + [w[:4] for w in big])

    @lazy
    def big_words(self) -> list[bytes]:
        """Words of 12+ characters (where run-together token prefixes such as ``akia…`` show up)."""
        return [w for w in self.all_words if len(w) >= 12]

    @lazy
    def longs(self) -> list[tuple[int, str]]:
        """``(offset, run)`` for every whitespace-free run of at least 16 characters, in text order.

        The runs are ``str.split()``'s parts of 16+ characters. For ASCII text they are found with ``bytes.find``
        on a marking of the whitespace (whose bytes are the characters), so a record's few long runs cost two
        C-level searches each instead of a Python pass over every word.
        """
        out: list[tuple[int, str]] = []
        text = self.text
        if text.isascii():
            # lower-casing ASCII keeps every character's whitespace-ness, so low_bytes marks text's runs
            low_bytes = self.__dict__.get("low_bytes")
            if low_bytes is not None or len(text) <= MARK_PIECE:
                _marked_runs((low_bytes or text.encode("ascii")).translate(_SPACE_MARKS), text, 0, out)
            else:  # a long text nobody asked the bytes of (Memzoi's rules over the size limit): marked in pieces
                _piecewise_runs(text, out)
            return out
        cursor = 0
        for w in [w for w in text.split() if len(w) >= LONG]:
            # Runs in between are shorter than ``w`` and cannot contain it, so the next match is ``w``.
            pos = text.find(w, cursor)
            out.append((pos, w))
            cursor = pos + len(w)
        return out

    @lazy
    def long_text(self) -> str:
        """The :attr:`longs` runs joined by line breaks (empty when there are none): a short string where a
        literal that only occurs inside a 16+ character token can be looked for without scanning the text."""
        return "\n".join([run for _, run in self.longs])

    @lazy
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
