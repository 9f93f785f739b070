"""Shannon entropy and the ``high_entropy_value`` detector (Memzoi ``bounded_entropy``, reference §3.3).

Memzoi's rule: tokens of ``[A-Za-z0-9_+/=-]{32,256}`` (``=`` trimmed) that are not all hex, do not contain a
placeholder word, use at least 3 of the classes lower / upper / digit / ``_-+/``, and have at least 4.5 bits
of entropy per byte. On top of it this module drops what is long but not secret (bug class B44): UUID-based
identifiers, subresource-integrity strings (``sha512-…``), data-URI payloads (``data:image/png;base64,…``),
identifiers and paths made of words (``recallNoticesRecallBusinessUnitsValidationGroup``,
``src/auth/session_handler``), templated values (``${…}``, ``{{…}}``) and runs longer than 256 characters
(blobs, not credentials).
"""

from __future__ import annotations

import math
import re
from collections import Counter

from .decoding import decodes_to_text

MIN_LEN, MAX_LEN = 32, 256
THRESHOLD = 4.5
_MIN_DISTINCT = math.ceil(2**THRESHOLD)  # Shannon entropy is at most log2(distinct characters)

TOKEN_RE = re.compile(r"(?<![A-Za-z0-9_+/=-])[A-Za-z0-9_+/=-]{32,}")
_HEX = re.compile(r"^[0-9a-fA-F]+$")
_UUID = re.compile(r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}")
_SEGMENT = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|[0-9]+")
_VOWEL = re.compile(r"[aeiouyAEIOUY]")
_PLACEHOLDERS = ("example", "placeholder", "replace", "redacted", "xxxxxxxx", "your_token", "dummy", "changeme",
                 "sample", "fake", "notreal", "not_real", "lorem")
_INTEGRITY = re.compile(r"(?:sha(?:1|256|384|512)|md5|blake3)[-:]$", re.I)
_INTEGRITY_TOKEN = re.compile(r"^(?:sha(?:1|256|384|512)|md5)-", re.I)
_PUBLIC_BLOCK = re.compile(r"-----BEGIN (?:PUBLIC KEY|RSA PUBLIC KEY|CERTIFICATE|CERTIFICATE REQUEST|X509 CRL|PGP PUBLIC KEY BLOCK|PGP SIGNATURE|SSH2 PUBLIC KEY)-----.*?(?:-----END [A-Z0-9 ]+-----|\Z)", re.S)
_SSH_PUBLIC = re.compile(r"(?:ssh-(?:rsa|dss|ed25519)|ecdsa-sha2-nistp\d+|sk-ssh-ed25519@openssh\.com)\s+$")


def shannon(value: str) -> float:
    """Shannon entropy of ``value`` in bits per character (0.0 for the empty string)."""
    if not value:
        return 0.0
    n = len(value)
    log2 = math.log2
    return -sum([c / n * log2(c / n) for c in Counter(value).values()])


_LOWER = frozenset("abcdefghijklmnopqrstuvwxyz")
_UPPER = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZ")
_DIGITS = frozenset("0123456789")
_SYMBOLS = frozenset("_-+/")


def char_classes(value: str) -> int:
    """How many of lower, upper, digit and ``_-+/`` occur in ``value`` (ASCII classes, as Memzoi counts)."""
    chars = set(value)
    return (not chars.isdisjoint(_LOWER)) + (not chars.isdisjoint(_UPPER)) + (not chars.isdisjoint(_DIGITS)) + (
        not chars.isdisjoint(_SYMBOLS)
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


def entropy_candidates(text: str, runs: list[tuple[int, str]] | None = None) -> list[tuple[int, int, str]]:
    """``(start, end, token)`` for every token of ``text`` that the high-entropy rule reports. ``runs`` are the
    whitespace-free runs of 32+ characters with their offsets (:attr:`Ctx.longs`); by default all of ``text``
    is searched."""
    out = []
    pieces = runs if runs is not None else [(0, text)]
    public: list[tuple[int, int]] | None = None  # computed at the first candidate that gets that far
    for base, piece in pieces:
        if len(piece) < MIN_LEN or len(set(piece)) < _MIN_DISTINCT:
            continue  # the run as a whole has too few distinct characters for any token in it to qualify
        for m in TOKEN_RE.finditer(piece):
            token = m.group(0)
            start = base + m.start()
            if len(token) > MAX_LEN:
                continue  # a blob (base64 image, bundle), not a credential
            token = token.rstrip("=")
            if len(token) < MIN_LEN or _HEX.match(token):
                continue
            if len(set(token)) < _MIN_DISTINCT:
                continue  # fewer than 2**4.5 distinct characters can never reach the entropy threshold
            # Each test below only drops the token, so their order does not change the result: the entropy
            # test, which drops nearly every long identifier or path that got this far, comes first.
            if shannon(token) < THRESHOLD:
                continue
            if char_classes(token) < 3 or is_placeholder(token) or _INTEGRITY_TOKEN.match(token):
                continue
            before = text[max(0, start - 24) : start]
            if before.endswith(("base64,", "${", "{{", "%{")) or _INTEGRITY.search(before) or _SSH_PUBLIC.search(before):
                continue
            if public is None:
                # public keys, certificates and signatures are meant to be shared
                public = [(m.start(), m.end()) for m in _PUBLIC_BLOCK.finditer(text)] if "-----BEGIN" in text else []
            if public and any(s <= start < e for s, e in public):
                continue
            stripped = _UUID.sub("", token)
            if len(stripped) < MIN_LEN and (len(stripped) < 12 or is_wordy(stripped) or _HEX.match(stripped.strip("_-"))):
                continue
            if is_wordy(token):
                continue
            if decodes_to_text(token):
                continue  # encoded text, not key material; its decoded view is scanned by the other detectors
            out.append((start, start + len(token), token))
    return out
