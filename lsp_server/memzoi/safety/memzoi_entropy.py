"""Memzoi's ``bounded_entropy`` rule (``detectors.rs::contains_high_entropy_token``, reference §3.3), reported as
``high_entropy_value`` with Memzoi's own skips: all-hex tokens, its placeholder words, and typed digests."""

from __future__ import annotations

import re

from .base import Hit
from .context import Ctx
from .entropy import char_classes, shannon
from .memzoi_source import (
    ENTROPY_PLACEHOLDERS,
    ENTROPY_THRESHOLD,
    MAX_ENTROPY_TOKEN,
    MIN_ENTROPY_TOKEN,
    TOKEN_CANDIDATE_SOURCE,
)

_TOKEN_CANDIDATE = re.compile(TOKEN_CANDIDATE_SOURCE)
_HEX = re.compile(r"[0-9a-fA-F]+")
_MIN_DISTINCT = 23  # 2 ** 4.5 ≈ 22.6: fewer distinct characters cannot reach the threshold
#: a typed digest (Memzoi exempts fields of kind ``typed_digest`` from this rule): the base64 of a 32, 48 or
#: 64-byte digest after an algorithm name and ``:`` (``sha256:…``, ``blake3:…``), or a subresource-integrity
#: string (``sha256-``/``sha384-``/``sha512-`` and exactly its digest's base64)
_TYPED_PREFIX = re.compile(r"(?i)(?:sha(?:256|384|512)|sha3-(?:256|384|512)|blake2[bs]|blake3):$")
_DIGEST_B64_LENGTHS = frozenset({43, 64, 86})
_SRI = re.compile(r"sha256-[A-Za-z0-9+/]{43}=|sha384-[A-Za-z0-9+/]{64}|sha512-[A-Za-z0-9+/]{86}==")
_ARMOR = re.compile(r"-----BEGIN ([A-Z0-9][A-Z0-9 ]{0,40})-----.*?(?:-----END \1-----|(?=-----BEGIN )|\Z)", re.S)


def entropy_value(token: str) -> bool:
    """Memzoi's ``bounded_entropy`` test on one candidate (``=`` trimmed at both ends first)."""
    token = token.strip("=")
    if not MIN_ENTROPY_TOKEN <= len(token) <= MAX_ENTROPY_TOKEN or _HEX.fullmatch(token):
        return False
    low = token.lower()
    if any(p in low for p in ENTROPY_PLACEHOLDERS) or len(set(token)) < _MIN_DISTINCT:
        return False  # (entropy is at most log2 of the number of distinct characters)
    return char_classes(token) >= 3 and shannon(token) >= ENTROPY_THRESHOLD


def typed_digest(text: str, start: int, token: str) -> bool:
    """True when the candidate ``token`` at ``start`` of ``text`` is a typed digest (see :data:`_SRI`)."""
    if _SRI.fullmatch(token):
        return True
    return len(token.rstrip("=")) in _DIGEST_B64_LENGTHS and _TYPED_PREFIX.search(text, max(0, start - 9), start) is not None


def entropy_hits(ctx: Ctx) -> list[Hit]:
    """``high_entropy_value``: every candidate of :data:`TOKEN_CANDIDATE_SOURCE` (runs longer than 256 are cut
    in 256-character pieces, as the Rust regex does) that :func:`entropy_value` accepts, except typed digests
    (:func:`typed_digest`). Adjacent pieces of one run give one hit; matches inside one armored block
    (``-----BEGIN …-----`` to ``-----END …-----``) give one hit for the whole block, so it has one fingerprint."""
    out: list[Hit] = []
    text = ctx.text
    blocks: list[tuple[int, int, str]] | None = None
    for base, run in ctx.longs:
        if len(run) < MIN_ENTROPY_TOKEN or len(set(run)) < _MIN_DISTINCT:
            continue
        for m in _TOKEN_CANDIDATE.finditer(run):
            token = m.group(0)
            start, end = base + m.start(), base + m.end()
            if not entropy_value(token) or typed_digest(text, start, token):
                continue
            if blocks is None:
                blocks = [(b.start(), b.end(), b.group(1)) for b in _ARMOR.finditer(text)] if "-----BEGIN " in text else []
            block = next(((s, e, kind) for s, e, kind in blocks if s <= start < e), None)
            if block is not None:
                s, e, kind = block
                if not (out and out[-1].start == s):  # the block is reported once
                    out.append(Hit("high_entropy_value", s, e, f"armored {kind} block (Memzoi rule `bounded_entropy`)",
                                   text[s:e], memzoi="bounded_entropy"))
                continue
            last = out[-1] if out else None
            if last is not None and last.end == start and not last.label.startswith("armored"):
                # the next 256-character piece of the same run: one finding for the run
                out[-1] = Hit("high_entropy_value", last.start, end, last.label, text[last.start:end], memzoi="bounded_entropy")
                continue
            out.append(Hit("high_entropy_value", start, end, "high-entropy value (Memzoi rule `bounded_entropy`)", token,
                           memzoi="bounded_entropy"))
    return out
