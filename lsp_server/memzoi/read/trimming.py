"""Which frontmatter strings Memzoi's parser trims, applied once when a document is framed.

Memzoi reads every field as a plain ``String`` and then trims exactly these (``okf.rs@164dcd6b`` and
``@77169aa8``: ``validate_schema_identity``, ``required_string``, ``optional_string``, ``parse_required_enum``,
``validate_string_list``, ``validate_applies_to``, ``parse_proposal_metadata``, ``parse_proposal_scope``,
``parse_proposal_resolution``), so ``profile: " memzoi "`` or a quoted, padded ``timestamp`` read as their trimmed
values there, in enum matches, and in the canonical revision. Everything else keeps its exact text: ``tags``,
``created_by``, ``sources``, ``retention``, ``origin``, ``lineage``, ``capture``, ``materialization`` and a
record's ``description`` (which Memzoi ignores). Trimming is Rust's ``str::trim`` (Unicode White_Space).
"""

from __future__ import annotations

from typing import Any

from .text import rust_trim
from .yaml12 import PlainScalar, resolve_plain

#: Top-level keys trimmed when their value is a string (record and packet frontmatter alike).
TRIMMED_KEYS = frozenset(
    {
        "id",
        "kind",
        "profile",
        "type",
        "lane",
        "title",
        "scope",
        "scope_id",
        "visibility",
        "content_class",
        "status",
        "source",
        "source_ref",
        "proposal_id",
        "timestamp",
        "updated",
        "supersedes",
        "sensitivity",
    }
)
#: Top-level lists whose string items are trimmed (record ``applies_to``; packet ``supersedes``).
TRIMMED_ITEMS = frozenset({"applies_to", "supersedes"})
#: Packet blocks whose string fields are trimmed (and ``scope.paths`` items).
TRIMMED_BLOCKS = {
    "proposal": frozenset({"action", "proposed_by", "proposed_at", "reason", "confidence", "target"}),
    "scope": frozenset({"kind", "id"}),
    "resolution": frozenset({"outcome", "resolved_by", "resolved_at", "reason", "record_id", "target_id"}),
}


def trimmed(value: Any) -> Any:
    """``value`` trimmed when it is a string with surrounding white space; anything else unchanged. A plain
    scalar stays a :class:`PlainScalar` with its value resolved again."""
    if not isinstance(value, str):
        return value
    cut = rust_trim(value)
    if len(cut) == len(value):
        return value
    return PlainScalar(cut, resolve_plain(cut)) if isinstance(value, PlainScalar) else cut


def trim_frontmatter(data: dict[str, Any]) -> dict[str, Any]:
    """``data`` (frontmatter as plain Python) with the fields Memzoi trims trimmed, in place; returns it.

    A packet's ``description`` is trimmed too (``required_string``); a record's is not read by Memzoi at all.
    """
    for key, value in data.items():
        if key in TRIMMED_KEYS and isinstance(value, str):
            data[key] = trimmed(value)
        elif key in TRIMMED_ITEMS and isinstance(value, list):
            data[key] = [trimmed(v) for v in value]
        elif key in TRIMMED_BLOCKS and isinstance(value, dict):
            for field in TRIMMED_BLOCKS[key] & value.keys():
                value[field] = trimmed(value[field])
            if key == "scope" and isinstance(value.get("paths"), list):
                value["paths"] = [trimmed(v) for v in value["paths"]]
    if data.get("kind") == "proposal" and isinstance(data.get("description"), str):
        data["description"] = trimmed(data["description"])
    return data
