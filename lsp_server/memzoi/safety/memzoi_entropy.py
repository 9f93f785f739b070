"""Memzoi's ``bounded_entropy`` rule (``detectors.rs::contains_high_entropy_token``, reference §3.3), reported as
``high_entropy_value`` with Memzoi's own skips: all-hex tokens and its placeholder words on any text, and fields
Memzoi types as digests (:func:`typed_digest_field`).

Memzoi skips the rule for a *field kind* (``typed_digest``, ``uuid``, ``commit_hash``), never for what a text
looks like: ``integrity sha384-<base64>`` or ``digest sha256:<base64>`` in a body is a text field to Memzoi, and its
rule refuses the token. So the only digest skip of this floor is by field, in the frontmatter; UUIDs and commit
hashes never need one (their tokens are hex, or have too few distinct characters to reach the threshold). Our own
detectors keep their digest contexts (identifier and digest key names, :mod:`.assignments`); they cannot remove
this floor.
"""

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
_MIN_DISTINCT = 23  # 2 ** 4.5 ≈ 22.6: fewer distinct characters cannot reach the threshold
#: Keys whose values Memzoi types as digests (the identities and revisions of the ``materialization`` block,
#: reference §4.1: ``blake3:<64 hex>``), exempt from the rule as Memzoi exempts its ``typed_digest`` field kind.
DIGEST_KEYS = frozenset(
    {
        "plan_id",
        "candidate_id",
        "decision_id",
        "selection_id",
        "action_id",
        "policy_digest",
        "revision_hash",
        "expected_prior_revision",
        "intended_semantic_revision",
    }
)
_ARMOR = re.compile(r"-----BEGIN ([A-Z0-9][A-Z0-9 ]{0,40})-----.*?(?:-----END \1-----|(?=-----BEGIN )|\Z)", re.S)


def entropy_value(token: str) -> bool:
    """Memzoi's ``bounded_entropy`` test on one candidate (``=`` trimmed at both ends first)."""
    token = token.strip("=")
    if not MIN_ENTROPY_TOKEN <= len(token) <= MAX_ENTROPY_TOKEN:
        return False
    chars = set(token)
    # Entropy is at most log2 of the number of distinct characters, so fewer cannot reach the threshold; and an
    # all-hex token (Memzoi's skip) has at most 22 (0-9, a-f, A-F), so this test skips every one of them too.
    if len(chars) < _MIN_DISTINCT:
        return False
    low = token.lower()
    if any(p in low for p in ENTROPY_PLACEHOLDERS):
        return False
    return char_classes(chars) >= 3 and shannon(token) >= ENTROPY_THRESHOLD


def typed_digest_field(field: str) -> bool:
    """True when ``field`` (a logical location such as ``frontmatter.materialization.plan_id``, see
    :func:`memzoi.safety.scan.field_at`) is one Memzoi types as a digest: a :data:`DIGEST_KEYS` key inside the
    frontmatter's ``materialization`` block."""
    parts = field.split(".")
    return len(parts) >= 3 and parts[0] == "frontmatter" and parts[1] == "materialization" and parts[-1] in DIGEST_KEYS


def entropy_hits(ctx: Ctx) -> list[Hit]:
    """``high_entropy_value``: every candidate of :data:`TOKEN_CANDIDATE_SOURCE` (runs longer than 256 are cut
    in 256-character pieces, as the Rust regex does) that :func:`entropy_value` accepts, wherever it stands (the
    caller drops those in digest-typed fields, :func:`typed_digest_field`, which only it can place). Adjacent pieces of one run give one hit; matches inside one armored block
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
            if not entropy_value(token):
                continue
            if blocks is None:
                blocks = (
                    [(b.start(), b.end(), b.group(1)) for b in _ARMOR.finditer(text)] if "-----BEGIN " in text else []
                )
            block = next(((s, e, kind) for s, e, kind in blocks if s <= start < e), None)
            if block is not None:
                s, e, kind = block
                if not (out and out[-1].start == s):  # the block is reported once
                    out.append(
                        Hit(
                            "high_entropy_value",
                            s,
                            e,
                            f"armored {kind} block (Memzoi rule `bounded_entropy`)",
                            text[s:e],
                            memzoi="bounded_entropy",
                        )
                    )
                continue
            last = out[-1] if out else None
            if last is not None and last.end == start and not last.label.startswith("armored"):
                # the next 256-character piece of the same run: one finding for the run
                out[-1] = Hit(
                    "high_entropy_value", last.start, end, last.label, text[last.start : end], memzoi="bounded_entropy"
                )
                continue
            out.append(
                Hit(
                    "high_entropy_value",
                    start,
                    end,
                    "high-entropy value (Memzoi rule `bounded_entropy`)",
                    token,
                    memzoi="bounded_entropy",
                )
            )
    return out
