"""``invisible_character``: code points that render as nothing, and the text hidden in them.

What counts is Unicode's ``Default_Ignorable_Code_Point`` property (zero-width characters, joiners, bidirectional
controls, the U+2060–U+206F family, Hangul fillers U+115F/U+1160/U+3164/U+FFA0, the Mongolian vowel separator,
variation selectors, tag characters U+E0000–U+E007F, …) plus the Braille blank U+2800, a filler that is not
default-ignorable. The property data comes from the ``regex`` package, which tracks the current Unicode release;
Python's ``unicodedata`` has no such property (nor the emoji properties used below). It is imported on the first
non-ASCII text only: an ASCII text has none of these characters.

Legitimate uses stay clean: a byte order mark at the file start (reported as ``bom``), emoji sequences (ZWJ
between emoji, VS15/VS16 after an emoji, subdivision-flag tag sequences such as 🏴 + ``gbsct`` + cancel tag),
variation selectors after an ideograph, ZWJ/ZWNJ between letters of scripts that shape with them, and
directional marks next to right-to-left text.

Smuggled text is decoded: a run of tag characters spells ASCII (U+E0020–U+E007E minus 0xE0000), and a run of
variation selectors after a base spells bytes (VS1–VS16 are 0–15, VS17–VS256 are 16–255). :func:`hidden_views`
yields the decoded text, which the other detectors (``prompt_injection`` among them) scan as a view reported on
the run's span.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Iterator
from functools import lru_cache
from typing import TYPE_CHECKING

from .base import Hit
from .controls import control_hits
from .decoding import View

if TYPE_CHECKING:  # the annotations only: ``regex`` itself is loaded on the first non-ASCII text (see above)
    import regex

_Patterns = tuple[
    "regex.Pattern[str]", "regex.Pattern[str]", "regex.Pattern[str]", "regex.Pattern[str]", "regex.Pattern[str]"
]

_BRAILLE_BLANK = "\u2800"
_ZWJ, _ZWNJ = "\u200d", "\u200c"
_VS15, _VS16 = "\ufe0e", "\ufe0f"
_DIRECTIONAL_MARKS = frozenset("\u200e\u200f\u061c")
_BIDI_CONTROLS = frozenset("\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")
_TAG_FIRST, _TAG_LAST = 0xE0000, 0xE007F
_CANCEL_TAG = "\U000e007f"


@lru_cache(maxsize=1)
def _patterns() -> _Patterns:
    import regex  # noqa: PLC0415 lazy: start-up (imported on the first non-ASCII text; see the module docstring)

    return (
        regex.compile(r"[\p{Default_Ignorable_Code_Point}\u2800]+"),
        regex.compile(r"\p{Extended_Pictographic}|\p{Emoji_Modifier}|\p{Regional_Indicator}"),
        regex.compile(r"\p{Emoji}"),
        regex.compile(r"\p{Ideographic}"),
        # a subdivision flag: black flag, a region and subdivision code in tag letters/digits, cancel tag
        regex.compile(
            "\U0001f3f4[\U000e0061-\U000e007a]{2}[\U000e0030-\U000e0039\U000e0061-\U000e007a]{1,4}\U000e007f"
        ),
    )


def invisible_runs(text: str) -> Iterator[regex.Match[str]]:
    """Iterator over the matches of runs of invisible code points in ``text`` (none for ASCII text)."""
    if text.isascii():
        return iter(())
    return _patterns()[0].finditer(text)


def strip_invisible(text: str) -> tuple[str, list[int] | None]:
    """``text`` without invisible code points, and a list mapping each kept offset to its original offset
    (``None`` when nothing was removed, i.e. the identity map)."""
    runs = list(invisible_runs(text))
    if not runs:
        return text, None
    pieces: list[str] = []
    mapping: list[int] = []
    pos = 0
    for m in runs:
        pieces.append(text[pos : m.start()])
        mapping.extend(range(pos, m.start()))
        pos = m.end()
    pieces.append(text[pos:])
    mapping.extend(range(pos, len(text)))
    mapping.append(len(text))
    return "".join(pieces), mapping


def _is_tag(c: str) -> bool:
    return _TAG_FIRST <= ord(c) <= _TAG_LAST


def _is_vs(c: str) -> bool:
    o = ord(c)
    return 0xFE00 <= o <= 0xFE0F or 0xE0100 <= o <= 0xE01EF


def _allowed(text: str, s: int, e: int) -> list[tuple[int, int]]:
    """The parts of the invisible run ``text[s:e]`` that are not legitimate, as spans."""
    _, pictographic, emoji, ideograph, flag = _patterns()
    bad: list[tuple[int, int]] = []
    i = s
    while i < e:
        c = text[i]
        before = text[i - 1] if i > 0 else ""
        after = text[i + 1] if i + 1 < len(text) else ""
        ok = False
        if (
            c == _ZWJ
            and before
            and after
            and (pictographic.match(after) and (pictographic.match(before) or before == _VS16))
        ):
            ok = True  # inside an emoji ZWJ sequence
        elif (
            c in (_ZWJ, _ZWNJ) and before.isalpha() and after.isalpha() and not before.isascii() and not after.isascii()
        ):
            ok = True  # shaping in scripts that use joiners (Persian, Indic, …)
        elif c in (_VS15, _VS16) and before and i == s and emoji.match(before):
            ok = True  # one presentation selector after an emoji (the first of a run only)
        elif _is_vs(c) and i == s and before and ideograph.match(before):
            ok = True  # an ideographic variation sequence
        elif c in _DIRECTIONAL_MARKS and any(
            ch and unicodedata.bidirectional(ch) in ("R", "AL", "AN") for ch in (before, after)
        ):
            ok = True  # a directional mark next to right-to-left text
        elif _is_tag(c) and i > 0:
            m = flag.match(text, i - 1)  # a subdivision flag: the tags after the black flag, to the cancel tag
            if m is not None:
                i = m.end()
                continue
        if ok:
            i += 1
            continue
        if bad and bad[-1][1] == i:
            bad[-1] = (bad[-1][0], i + 1)
        else:
            bad.append((i, i + 1))
        i += 1
    return bad


def _describe(run: str) -> str:
    chars = sorted(set(run), key=ord)
    if any(_is_tag(c) for c in chars):
        kind = "Unicode tag characters (hidden ASCII text)"
    elif any(c in _BIDI_CONTROLS for c in chars):
        kind = "bidirectional control"
    elif all(_is_vs(c) for c in chars):
        kind = "variation selector not after an emoji"
    elif any(c in "\u115f\u1160\u3164\uffa0\u180e" or c == _BRAILLE_BLANK for c in chars):
        kind = "invisible filler"
    else:
        kind = "zero-width character"
    shown = chars[:6]
    names = ", ".join(f"U+{ord(c):04X} {unicodedata.name(c, 'unnamed').lower()}" for c in shown)
    more = f", and {len(chars) - len(shown)} more" if len(chars) > len(shown) else ""
    return f"{kind} ({names}{more})"


def invisible_hits(text: str, skip_bom_at: int = -1) -> list[Hit]:
    """``invisible_character`` hits: runs of invisible code points that are not part of a legitimate sequence
    (see the module docstring), and runs of C0 control characters (:mod:`.controls`). A byte order mark at ``skip_bom_at`` (the file start) is skipped."""
    out: list[Hit] = []
    for m in invisible_runs(text):
        s, e = m.start(), m.end()
        if s == skip_bom_at and text[s] == "\ufeff":
            s += 1
            if s == e:
                continue
        for bs, be in _allowed(text, s, e):
            out.append(Hit("invisible_character", bs, be, _describe(text[bs:be]), text[bs:be], 0))
    return out + control_hits(text)


def hidden_views(text: str) -> list[View]:
    """Text smuggled in tag characters or in runs of variation selectors, decoded, with the run's span."""
    views: list[View] = []
    for m in invisible_runs(text):
        run = m.group(0)
        tags = "".join(chr(ord(c) - _TAG_FIRST) for c in run if 0xE0020 <= ord(c) <= 0xE007E)
        if len(tags) >= 2:
            views.append(View(tags, m.start(), m.end(), "hidden in Unicode tag characters"))
        selectors = [ord(c) for c in run if _is_vs(c)]
        if len(selectors) >= 4:
            data = bytes(o - 0xFE00 if o <= 0xFE0F else o - 0xE0100 + 16 for o in selectors)
            decoded = data.decode("utf-8", "ignore")
            if decoded.isprintable() and len(decoded) >= 4:
                views.append(View(decoded, m.start(), m.end(), "hidden in variation selectors"))
    return views
