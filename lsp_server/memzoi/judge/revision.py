"""Memzoi's canonical record revision: semantic projection → RFC 8785 canonical JSON → domain-separated BLAKE3.

Source: ``materialization.rs@164dcd6b`` of Zokiio/Memzoi (reference ``memzoi-format.md`` §4.2)::

    revision_hash = "blake3:" + hex(BLAKE3(DOMAIN_UTF8 ‖ 0x00 ‖ JCS(projection)))
    projection    = {"schema": REVISION_SCHEMA, "record_id": <concept id>,
                     "record": <semantic content>, "lifecycle": <lifecycle projection>}

The projection excludes the ``materialization`` block itself, the rendered YAML bytes and the decision
identities (``plan_id``, ``candidate_id``, ``decision_id``, ``decision_at``, ``safety_contract``), so re-rendering
a record or re-deciding the same content never changes its revision, while any edit to a semantic field does.
Every key of the projection is always present; absent optional values are ``null``.

Also here: :func:`domain_id` (the same construction for plan/candidate/decision ids) and :func:`content_hash`
(Memzoi's plain-hex BLAKE3 of the trimmed body, reference §1.3).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import blake3
import rfc8785

from ..base.utf8 import utf8_bytes
from ..read.text import RUST_WHITESPACE, rust_trim
from ..read.yaml12 import PlainScalar

REVISION_DOMAIN = "memzoi.repository-materialization.revision-id"
REVISION_SCHEMA = "memzoi/repository-canonical-revision"

#: Keys of ``CanonicalRecordSemanticContent`` in Memzoi's declaration order (JCS sorts them anyway).
SEMANTIC_FIELDS = (
    "memory_type",
    "lane",
    "scope_kind",
    "scope_id",
    "visibility",
    "title",
    "body",
    "tags",
    "source_kind",
    "source_ref",
    "content_class",
    "confidence",
    "status",
    "applies_to",
    "created",
    "updated",
    "supersedes_id",
    "retention",
    "origin",
    "lineage",
    "proposal_id",
    "capture",
)
#: Keys of ``CanonicalLifecycleProjection``.
LIFECYCLE_FIELDS = ("action", "target_expected_revision", "counterpart_record_id", "counterpart_relationship", "reason")

_RELATIONSHIP = {"supersede": "supersedes", "tombstone": "tombstones"}


class RevisionError(ValueError):
    """The value cannot be canonicalized (e.g. a float NaN or an integer beyond ±2**53 in ``capture``)."""


def canonical_json(value: Any) -> bytes:
    """RFC 8785 (JCS) canonical JSON of ``value`` as UTF-8 bytes (sorted keys, ES6 numbers, minimal escapes).

    ``value`` may hold dicts with string keys, lists, str, int, float, bool and ``None``; YAML plain scalars are
    converted to their resolved core-schema value first. Raises :class:`RevisionError` for values JCS cannot
    represent.
    """
    try:
        return rfc8785.dumps(_plain(value))
    except (rfc8785.CanonicalizationError, TypeError, ValueError) as err:  # pragma: no branch - message only
        raise RevisionError(f"value cannot be written as canonical JSON: {err}") from err


def domain_id(domain: str, value: Any) -> str:
    """``"blake3:" + hex(BLAKE3(domain ‖ 0x00 ‖ JCS(value)))``: Memzoi's domain-separated identity (§4.2)."""
    h = blake3.blake3(utf8_bytes(domain))
    h.update(b"\x00")
    h.update(canonical_json(value))
    return "blake3:" + h.hexdigest()


def content_hash(body: str) -> str:
    """Memzoi's ``content_hash``: lowercase hex BLAKE3 of ``body.trim()`` (Rust trim), no prefix (§1.3)."""
    return blake3.blake3(utf8_bytes(rust_trim(body))).hexdigest()


#: a body longer than this (code points) is keyed piece by piece (:func:`duplicate_key`)
DUPLICATE_PIECE = 1 << 20


def duplicate_key(body: str, start: int = 0, end: int | None = None) -> str:
    """The key under which two bodies count as the same content (``duplicate_content``): lowercase hex BLAKE3 of
    the body (``body[start:end]``) with line endings made ``\n``, trailing whitespace removed from every line,
    then trimmed.

    Memzoi's :func:`content_hash` hashes the trimmed body byte for byte, so a CRLF copy or a copy with trailing
    spaces would escape it; a reviewer sees the same text, so the duplicate check must too. A body longer than
    :data:`DUPLICATE_PIECE` is hashed in pieces of whole lines, to the same key: its copies (line list, join,
    bytes) took some five times the body's size at once (a 30 MB record, ``memzoi check``)."""
    end = len(body) if end is None else end
    if end - start <= DUPLICATE_PIECE:
        text = body[start:end].replace("\r\n", "\n").replace("\r", "\n")
        lines = [line.rstrip() for line in text.split("\n")]
        return blake3.blake3(utf8_bytes(rust_trim("\n".join(lines)))).hexdigest()
    hasher = blake3.blake3()
    carry = held = ""  # the trailing whitespace of the line in progress; of what was written so far
    begun = False  # a character the outer trim keeps was written
    while start < end:
        cut = min(start + DUPLICATE_PIECE, end)
        if body[cut - 1] == "\r" and cut < end and body[cut] == "\n":
            cut += 1  # never split a `\r\n` pair: each piece's line endings are made `\n` on their own
        lines = body[start:cut].replace("\r\n", "\n").replace("\r", "\n").split("\n")
        lines[0] = carry + lines[0]
        last = lines[-1].rstrip()
        carry = lines[-1][len(last) :]  # kept only if more of the line follows (a line's end is rstripped)
        lines[-1] = last
        text = "\n".join([line.rstrip() for line in lines[:-1]] + [last])
        if not begun:
            text = text.lstrip(RUST_WHITESPACE)
            begun = bool(text)
        trimmed = text.rstrip(RUST_WHITESPACE)
        if trimmed:
            hasher.update(utf8_bytes(held + trimmed))
            held = text[len(trimmed) :]
        else:
            held += text
        start = cut
    return hasher.hexdigest()


def _plain(value: Any) -> Any:
    """Plain JSON values: YAML plain scalars become their resolved value, ``str`` subclasses become ``str``."""
    if isinstance(value, PlainScalar):
        resolved = value.resolved
        return resolved if resolved is None or isinstance(resolved, (bool, int, float)) else str(value)
    if isinstance(value, str):
        return str(value)
    if isinstance(value, Mapping):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    return value


def _opt_trim(value: Any) -> str | None:
    return rust_trim(str(value)) if isinstance(value, str) else None


def _trim(value: Any) -> Any:
    """A string trimmed as Memzoi's ``required_string``/``parse_required_enum`` trim it; other values as JSON."""
    return rust_trim(str(value)) if isinstance(value, str) else _plain(value)


def semantic_projection(data: Mapping[str, Any], body: str) -> dict[str, Any]:
    """``CanonicalRecordSemanticContent`` of a record from its frontmatter ``data`` and Memzoi ``body``.

    ``data`` is the validated frontmatter as plain Python (``Document.data`` of a record whose model parsed);
    ``body`` is the body after H1 removal, trimmed (``Document.body``). Every string Memzoi's parser trims
    before building its record is trimmed here too (``okf.rs`` ``required_string``/``optional_string``/
    ``parse_required_enum``): type, lane, scope, visibility, content class, status, title, scope id, source
    kind/ref, supersedes, proposal id, ``applies_to`` entries, and the ``timestamp`` (``created``) and
    ``updated`` strings, so a quoted, padded timestamp hashes as Memzoi hashes it. ``tags`` keep their exact
    text; ``retention`` holds only the facts present, untrimmed (Memzoi stores them as written).
    """
    raw_retention, raw_origin = data.get("retention"), data.get("origin")
    retention: Mapping[str, Any] = raw_retention if isinstance(raw_retention, Mapping) else {}
    origin: Mapping[str, Any] = raw_origin if isinstance(raw_origin, Mapping) else {}
    lineage = data.get("lineage") if isinstance(data.get("lineage"), Mapping) else None
    capture = data.get("capture") if isinstance(data.get("capture"), Mapping) else None
    confidence = data.get("confidence")
    if isinstance(confidence, PlainScalar):
        confidence = confidence.resolved
    if isinstance(confidence, (int, float)) and not isinstance(confidence, bool):
        confidence = float(confidence)
    content_class = data.get("content_class")
    if isinstance(content_class, str):
        content_class = rust_trim(content_class).replace("-", "_")  # Memzoi parses kebab-case, writes snake_case
    return {
        "memory_type": _trim(data.get("type")),
        "lane": _trim(data.get("lane")),
        "scope_kind": _trim(data.get("scope")),
        "scope_id": _opt_trim(data.get("scope_id")),
        "visibility": _trim(data.get("visibility")),
        "title": _opt_trim(data.get("title")),
        "body": rust_trim(body),
        "tags": [str(t) for t in (data.get("tags") or [])],
        "source_kind": _opt_trim(data.get("source")),
        "source_ref": _opt_trim(data.get("source_ref")),
        "content_class": _plain(content_class),
        "confidence": confidence,
        "status": _trim(data.get("status")),
        "applies_to": [rust_trim(str(p)) for p in (data.get("applies_to") or [])],
        "created": _trim(data.get("timestamp")),
        "updated": _trim(data.get("updated")),
        "supersedes_id": _opt_trim(data.get("supersedes")),
        "retention": {str(k): _plain(v) for k, v in retention.items() if v is not None},
        "origin": {"origin_key": _plain(origin.get("origin_key")), "route": _plain(origin.get("route"))},
        "lineage": None if lineage is None else _plain(lineage),
        "proposal_id": _opt_trim(data.get("proposal_id")),
        "capture": None if capture is None else _plain(capture),
    }


def lifecycle_projection(metadata: Mapping[str, Any] | None) -> dict[str, Any]:
    """``CanonicalLifecycleProjection`` for an attested record's ``materialization`` block, or all ``null`` for an
    unattested record (``metadata`` is ``None``).

    ``action`` is the metadata action; ``target_expected_revision`` and ``counterpart_record_id`` come from
    ``target``; ``counterpart_relationship`` is ``supersedes``/``tombstones`` for supersede/tombstone, else null.
    """
    if metadata is None:
        return {k: None for k in LIFECYCLE_FIELDS}
    target = metadata.get("target") if isinstance(metadata.get("target"), Mapping) else None
    action = _plain(metadata.get("action"))
    return {
        "action": action,
        "target_expected_revision": _plain(target.get("expected_revision")) if target else None,
        "counterpart_record_id": _plain(target.get("record_id")) if target else None,
        "counterpart_relationship": _RELATIONSHIP.get(action) if isinstance(action, str) else None,
        "reason": _plain(metadata.get("reason")),
    }


def revision_projection(record_id: str, record: Mapping[str, Any], lifecycle: Mapping[str, Any]) -> dict[str, Any]:
    """The full ``CanonicalRevisionProjection`` object that is hashed."""
    return {"schema": REVISION_SCHEMA, "record_id": record_id, "record": dict(record), "lifecycle": dict(lifecycle)}


def revision_hash(record_id: str, record: Mapping[str, Any], lifecycle: Mapping[str, Any]) -> str:
    """``blake3:<hex>`` revision of a semantic projection and lifecycle projection."""
    return domain_id(REVISION_DOMAIN, revision_projection(record_id, record, lifecycle))


def record_revision(record_id: str, data: Mapping[str, Any], body: str, *, attested: bool | None = None) -> str:
    """The canonical revision of a record, as Memzoi recomputes it when it reads the file.

    ``data`` is the record's frontmatter (with or without a ``materialization`` block), ``body`` its Memzoi body.
    ``attested`` overrides whether the lifecycle projection comes from ``data["materialization"]`` (``True``) or
    is all ``null`` (``False``); by default it is taken from the block when present.
    """
    metadata = data.get("materialization") if isinstance(data.get("materialization"), Mapping) else None
    if attested is False:
        metadata = None
    return revision_hash(record_id, semantic_projection(data, body), lifecycle_projection(metadata))


__all__ = [
    "LIFECYCLE_FIELDS",
    "REVISION_DOMAIN",
    "REVISION_SCHEMA",
    "SEMANTIC_FIELDS",
    "RevisionError",
    "canonical_json",
    "content_hash",
    "duplicate_key",
    "domain_id",
    "lifecycle_projection",
    "record_revision",
    "revision_hash",
    "revision_projection",
    "semantic_projection",
]
