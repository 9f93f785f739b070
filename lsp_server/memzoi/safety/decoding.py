"""Text views the detectors match against: folded text, and decoded percent-encoding / base64url.

* :func:`fold` maps full-width ASCII forms (U+FF01–U+FF5E) to ASCII and the no-break space family to a plain
  space, one code point for one, so offsets into the folded text are offsets into the original (Zuno
  ``threat.rs`` folds the same way before matching; reference ``zuno-memory.md`` §4).
* :func:`decoded_views` finds percent-encoded runs (``%XX``) and base64 / base64url runs whose decoding is
  printable text, and yields the decoded text with the span of the encoded run. Detectors run on each view
  and report the encoded run's span, so a token hidden in ``?next=https%3A%2F%2F…`` or in a base64 value is
  still found. Decoding nests up to :data:`MAX_DEPTH` levels.
"""

from __future__ import annotations

import base64
import binascii
import re
from dataclasses import dataclass
from urllib.parse import unquote

MAX_DEPTH = 2

_FOLD = {c: c - 0xFEE0 for c in range(0xFF01, 0xFF5F)}
_FOLD.update({c: 0x20 for c in (0x00A0, 0x3000, 0x202F, 0x205F, *range(0x2000, 0x200B))})

_PERCENT = re.compile(r"%[0-9A-Fa-f]{2}")
_RUN_END = re.compile(r"[\s\"'<>`]")
_B64 = re.compile(r"(?<![A-Za-z0-9+/_-])[A-Za-z0-9+/_-]{16,}={0,2}(?![A-Za-z0-9+/_=-])")
_LOWER = frozenset("abcdefghijklmnopqrstuvwxyz")
_UPPER = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZ")
_PRINTABLE = re.compile(r"[\x20-\x7e\t\r\n]")


_FOLDABLE = re.compile("[\uff01-\uff5e\u00a0\u3000\u202f\u205f\u2000-\u200a]")


def fold(text: str) -> str:
    """Full-width forms to ASCII, no-break spaces to a space; same length as ``text``."""
    if text.isascii() or _FOLDABLE.search(text) is None:
        return text  # str.translate is slow on non-ASCII text; most text has nothing to fold
    return text.translate(_FOLD)


@dataclass(frozen=True, slots=True)
class View:
    """Decoded text of the encoded run ``[start, end)`` of the original; ``how`` names the encoding(s)."""

    text: str
    start: int
    end: int
    how: str


def _printable(data: bytes) -> str | None:
    try:
        s = data.decode("utf-8")
    except UnicodeDecodeError:
        return None
    if len(s) < 8:
        return None
    printable = len(_PRINTABLE.findall(s))
    return s if printable >= 0.95 * len(s) else None


def _b64(run: str) -> str | None:
    core = run.rstrip("=")
    if len(core) % 4 == 1:
        return None
    alt = core.replace("+", "-").replace("/", "_")
    try:
        data = base64.urlsafe_b64decode(alt + "=" * (-len(alt) % 4))
    except (binascii.Error, ValueError):
        return None
    return _printable(data)


def decoded_views(text: str, *, depth: int = 1, runs: list[tuple[int, str]] | None = None) -> list[View]:
    """Decoded views of ``text`` (spans into ``text``), nested up to :data:`MAX_DEPTH` levels.

    A percent-encoded run is a view when decoding changes it; a base64/base64url run (16+ characters, mixed
    case, not a JWT segment) is a view when it decodes to printable UTF-8 text. Nested views keep the outer
    run's span. ``runs`` (whitespace-free runs of 16+ characters with offsets) limits the base64 search.
    """
    views: list[View] = []
    if "%" in text:
        pos = 0
        while (m := _PERCENT.search(text, pos)) is not None:
            start = m.start()
            while start > 0 and not _RUN_END.match(text[start - 1]):
                start -= 1
            stop = _RUN_END.search(text, m.end())
            end = stop.start() if stop else len(text)
            run = text[start:end]
            decoded = unquote(run, errors="strict") if _safe_unquote(run) else None
            if decoded and decoded != run:
                views.append(View(decoded, start, end, "percent-encoded"))
            pos = end
    for base, piece in runs if runs is not None else [(0, text)]:
        if piece.islower() or piece.isupper():
            continue  # base64 of text is always mixed case
        for m in _B64.finditer(piece):
            run = m.group(0)
            chars = set(run)
            if run.startswith("eyJ") or chars.isdisjoint(_LOWER) or chars.isdisjoint(_UPPER):
                continue  # JWT segments have their own detector; base64 of text is always mixed case
            decoded = _b64(run)
            if decoded is not None:
                views.append(View(decoded, base + m.start(), base + m.end(), "base64-encoded"))
    if depth < MAX_DEPTH:
        nested: list[View] = []
        for v in views:
            for inner in decoded_views(v.text, depth=depth + 1):
                nested.append(View(inner.text, v.start, v.end, f"{inner.how} inside {v.how}"))
        views.extend(nested)
    return views


def _safe_unquote(run: str) -> bool:
    try:
        unquote(run, errors="strict")
    except UnicodeDecodeError:
        return False
    return True
