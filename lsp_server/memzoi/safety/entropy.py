"""Entropy and the value-shape tests the detectors share: Shannon entropy, Memzoi's character classes, words
and placeholders.

The ``high_entropy_value`` detector itself is Memzoi's ``bounded_entropy`` rule, applied exactly in
:mod:`.memzoi_rules`; the tests here serve the plausibility checks of our own detectors (:mod:`.base`), e.g. to
tell an identifier made of words (``recallNoticesRecallBusinessUnitsValidationGroup``) from a password.
"""

from __future__ import annotations

import math
import re
from collections import Counter

_SEGMENT = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|[0-9]+")
_VOWEL = re.compile(r"[aeiouyAEIOUY]")
_PLACEHOLDERS = (
    "example",
    "placeholder",
    "replace",
    "redacted",
    "xxxxxxxx",
    "your_token",
    "dummy",
    "changeme",
    "sample",
    "fake",
    "notreal",
    "not_real",
    "lorem",
)


#: ``_TERMS[n][c]`` is ``c / n * log2(c / n)``, a term of :func:`shannon` for a string of length ``n``, computed
#: once per length up to :data:`_TABLED` (the length of Memzoi's longest entropy token) when first needed
_TERMS: dict[int, list[float]] = {}
_TABLED = 256


def shannon(value: str) -> float:
    """Shannon entropy of ``value`` in bits per character (0.0 for the empty string)."""
    if not value:
        return 0.0
    n = len(value)
    counts = Counter(value).values()
    if n > _TABLED:
        log2 = math.log2
        return -sum([c / n * log2(c / n) for c in counts])
    terms = _TERMS.get(n)
    if terms is None:
        terms = _TERMS[n] = _terms(n)
    # the same terms as computed above, summed in the same order: the same float
    return -sum(map(terms.__getitem__, counts))


def _terms(n: int) -> list[float]:
    log2 = math.log2
    return [0.0] + [c / n * log2(c / n) for c in range(1, n + 1)]


_LOWER = frozenset("abcdefghijklmnopqrstuvwxyz")
_UPPER = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZ")
_DIGITS = frozenset("0123456789")
_SYMBOLS = frozenset("_-+/")


def char_classes(value: str | set[str]) -> int:
    """How many of lower, upper, digit and ``_-+/`` occur in ``value`` (ASCII classes, as Memzoi counts); ``value``
    may be given as the set of its characters."""
    chars = value if isinstance(value, set) else set(value)
    return (
        (not chars.isdisjoint(_LOWER))
        + (not chars.isdisjoint(_UPPER))
        + (not chars.isdisjoint(_DIGITS))
        + (not chars.isdisjoint(_SYMBOLS))
    )


def is_wordy(value: str) -> bool:
    """True when ``value`` is an identifier or path made of words: every part between separators splits into
    camel-case words of two or more letters that contain a vowel (one leading capital and short numbers
    allowed), averaging at least four letters. Random strings split into many short or vowel-less pieces."""
    letters = words = 0
    for part in re.split(r"[_+/=.-]+", value):
        if not part:
            continue
        segs = _SEGMENT.findall(part)
        if "".join(segs) != part:
            return False
        for i, s in enumerate(segs):
            if s.isdigit():
                if len(s) > 4:
                    return False
            elif len(s) == 1:
                if i != 0 or not s.isupper():
                    return False
            elif not _VOWEL.search(s) or (len(s) > 3 and s.isupper()):
                return False
            else:
                words += 1
                letters += len(s)
    return words >= 2 and letters >= 4 * words


def is_placeholder(value: str) -> bool:
    """Placeholder words Memzoi skips, plus a few more and runs of one repeated character."""
    low = value.lower()
    return any(p in low for p in _PLACEHOLDERS) or len(set(low)) <= 2
