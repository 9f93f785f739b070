"""Materialization attestation of a record: the ``materialization:`` block, its validation, and staleness.

A record may carry Memzoi's ``MaterializationMetadata`` block (reference ``memzoi-format.md`` §4.1) recording the
reviewed decision that wrote it and the canonical revision of its semantic content at decision time. Memzoi's
parser (``okf.rs::validate_record_materialization``) refuses a record whose block is invalid or whose recomputed
revision differs; we report the same conditions as ``materialization_metadata`` and ``stale_attestation``.

Records without the block are *unattested*, which the current profile allows.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from pydantic import ValidationError

from ..base.findings import Finding, finding
from ..models.common import parse_instant, parse_rfc3339
from ..read.document import Document
from ..read.text import rust_trim
from ..read.yaml12 import locate
from .attestation_block import METADATA_SCHEMA, SAFETY_CONTRACT, MaterializationMetadata
from .revision import (
    LIFECYCLE_FIELDS,
    REVISION_SCHEMA,
    RevisionError,
    lifecycle_projection,
    revision_hash,
    semantic_projection,
)


class AttestationState(enum.Enum):
    """Attestation state of a record, as shown in hover and stored in the index."""

    UNATTESTED = "unattested"
    ATTESTED = "attested"  # the block is valid and the recomputed revision matches
    STALE = "stale"  # the block is valid but the record changed after the decision
    INVALID = "invalid"  # the block does not validate
    UNKNOWN = "unknown"  # the record itself does not validate, so no revision can be computed


@dataclass
class Attestation:
    """Result of :func:`check_attestation`.

    ``revision`` is the recomputed canonical revision (``None`` when the record does not validate);
    ``recorded`` the block's ``revision.revision_hash``; ``projection`` the semantic projection that was hashed
    (callers keep it for records that verify, to explain a later :attr:`AttestationState.STALE`);
    ``suspects`` names semantic fields that could explain a stale revision.
    """

    state: AttestationState
    revision: str | None = None
    recorded: str | None = None
    decision_at: str | None = None
    action: str | None = None
    projection: dict[str, Any] | None = None
    suspects: list[str] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)


def _span(doc: Document, loc: tuple[Any, ...], *, key: bool = False) -> tuple[int, int]:
    k, v = locate(doc.yaml_root, loc)
    if key and k is not None:
        return k.start, k.end
    if v is not None:
        return v.start, v.end
    if k is not None:
        return k.start, k.end
    return 0, min(3, len(doc.text))


def validate_metadata(doc: Document, block: Any) -> tuple[MaterializationMetadata | None, list[Finding]]:
    """Validate a ``materialization`` block; findings (``materialization_metadata``) sit on the exact key/value."""
    base = ("materialization",)
    if not isinstance(block, Mapping):
        start, end = _span(doc, base)
        return None, [
            finding(
                "materialization_metadata",
                "`materialization` must be a mapping with Memzoi's "
                "attestation fields (schema, action, plan_id, …); remove it or re-attest",
                start,
                end,
            )
        ]
    schema = block.get("schema")
    if schema != METADATA_SCHEMA:
        start, end = _span(doc, base + ("schema",))
        what = "missing `materialization.schema`" if schema is None else "unsupported `materialization.schema`"
        return None, [
            finding(
                "materialization_metadata",
                f"{what}: Memzoi reads only `{METADATA_SCHEMA}`; re-attest the record or remove the block",
                start,
                end,
            )
        ]
    try:
        return MaterializationMetadata.model_validate(dict(block)), []
    except ValidationError as err:
        out: list[Finding] = []
        missing: list[str] = []
        for e in err.errors(include_url=False, include_input=False):
            loc = tuple("schema" if p == "schema_" else p for p in e["loc"])
            name = ".".join(str(p) for p in base + loc)
            kind = e["type"]
            if kind == "missing":
                missing.append(name)
                continue
            if kind == "extra_forbidden":
                start, end = _span(doc, base + loc, key=True)
                msg = f"unknown key `{name}` in the attestation block; remove it"
            elif kind == "literal_error":
                start, end = _span(doc, base + loc)
                msg = f"`{name}` must be one of {e.get('ctx', {}).get('expected', '')}"
            elif kind == "materialization_shape":
                start, end = _span(doc, base + ("action",))
                msg = f"{e['msg']}; fix the block or re-attest the record"
            else:
                start, end = _span(doc, base + loc)
                msg = f"`{name}` {e['msg']}" if kind == "materialization_metadata" else f"`{name}`: {e['msg']}"
            out.append(finding("materialization_metadata", msg, start, end, loc=list(map(str, base + loc))))
        if missing:
            start, end = _span(doc, base, key=True)
            out.append(
                finding(
                    "materialization_metadata",
                    "attestation block is missing "
                    + ", ".join(f"`{m}`" for m in missing)
                    + "; re-attest the record or remove the block",
                    start,
                    end,
                    keys=missing,
                )
            )
        return None, out


def check_attestation(
    doc: Document, record_id: str | None, *, valid: bool, known: Mapping[str, Any] | None = None
) -> Attestation:
    """Attestation state and findings of a record document.

    ``record_id`` is the path concept id (or the frontmatter id outside ``.memzoi/records``); ``valid`` says
    whether the record's frontmatter validated (only then is a revision computed, as Memzoi parses first).
    ``known`` is an optional semantic projection recorded when this record last verified (from the index or the
    language server's workspace); with it the ``stale_attestation`` message names the changed fields exactly.
    """
    data = doc.data or {}
    if "materialization" not in data or data.get("materialization") is None:
        state = AttestationState.UNATTESTED if valid else AttestationState.UNKNOWN
        return Attestation(state)
    metadata, findings = validate_metadata(doc, data.get("materialization"))
    if metadata is None:
        return Attestation(AttestationState.INVALID, findings=findings)
    result = Attestation(
        AttestationState.UNKNOWN,
        recorded=metadata.revision.revision_hash,
        decision_at=metadata.decision_at,
        action=metadata.action,
    )
    if not valid or not record_id:
        return result
    block = dict(data["materialization"])
    try:
        projection = semantic_projection(data, doc.body)
        lifecycle = lifecycle_projection(block)
        result.revision = revision_hash(record_id, projection, lifecycle)
    except RevisionError as err:
        start, end = _span(doc, ("capture",))
        result.state = AttestationState.INVALID
        result.findings.append(
            finding(
                "materialization_metadata", f"the record cannot be canonicalized for its revision: {err}", start, end
            )
        )
        return result
    result.projection = projection
    if result.revision == metadata.revision.revision_hash:
        result.state = AttestationState.ATTESTED
        return result
    result.state = AttestationState.STALE
    result.suspects = explain_stale(record_id, projection, metadata, known)
    start, end = _span(doc, ("materialization",), key=True)
    why = (
        "; ".join(result.suspects)
        if result.suspects
        else "a semantic field (body, title, tags, status, timestamps, retention, …) was edited after the decision"
    )
    result.findings.append(
        finding(
            "stale_attestation",
            f"stale attestation: the record's canonical revision no longer matches `materialization.revision` "
            f"(decided {metadata.decision_at}): {why}. Re-attest the edit if it was reviewed, or restore the "
            "reviewed content",
            start,
            end,
            expected=metadata.revision.revision_hash,
            actual=result.revision,
            suspects=result.suspects,
        )
    )
    return result


def explain_stale(
    record_id: str,
    projection: Mapping[str, Any],
    metadata: MaterializationMetadata,
    known: Mapping[str, Any] | None = None,
) -> list[str]:
    """Short phrases naming what could explain a stale revision, most specific first.

    With ``known`` (the projection when the record last verified, whose revision must equal the recorded one)
    the changed fields are named exactly. Without it only what the file itself shows can be said: ``updated``
    later than ``decision_at``, a status the decided action cannot produce, or a revision computed without the
    lifecycle projection. An empty list means nothing specific is known.
    """
    out: list[str] = []
    recorded = metadata.revision.revision_hash
    block = metadata.model_dump(by_alias=True, exclude_none=True)
    if known is not None and revision_hash(record_id, known, lifecycle_projection(block)) == recorded:
        changed = [k for k in projection if projection.get(k) != known.get(k)]
        if changed:
            out.append("changed since decision time: " + ", ".join(f"`{_label(k)}`" for k in changed))
            return out
    if revision_hash(record_id, projection, {k: None for k in LIFECYCLE_FIELDS}) == recorded:
        out.append(
            "the recorded revision was computed without the attestation's lifecycle projection "
            "(as for an unattested record)"
        )
        return out
    decided = parse_rfc3339(metadata.decision_at)
    updated = projection.get("updated")
    when = parse_instant(rust_trim(updated)) if isinstance(updated, str) else None
    if decided is not None and when is not None and when > decided:
        out.append(f"`updated` ({updated}) is later than the decision time, so the record was edited after review")
    expected_status = "tombstoned" if metadata.action == "tombstone" else "active"
    if projection.get("status") != expected_status:
        out.append(
            f"`status` is `{projection.get('status')}` but a {metadata.action} decision writes `{expected_status}`"
        )
    return out


_LABELS = {
    "memory_type": "type",
    "scope_kind": "scope",
    "source_kind": "source",
    "created": "timestamp",
    "supersedes_id": "supersedes",
}


def _label(key: str) -> str:
    return _LABELS.get(key, key)


def decision_time(att: Attestation) -> datetime | None:
    """The decision instant of an attestation, when it has a valid one."""
    return parse_rfc3339(att.decision_at) if att.decision_at else None


__all__ = [
    "REVISION_SCHEMA",
    "Attestation",
    "AttestationState",
    "attest",
    "check_attestation",
    "decision_time",
    "explain_stale",
    "validate_metadata",
]


def attest(
    record_id: str,
    data: Mapping[str, Any],
    body: str,
    *,
    action: str,
    plan_id: str,
    candidate_id: str,
    decision_id: str,
    decision_at: str,
    safety_contract: str = SAFETY_CONTRACT,
    target: Mapping[str, Any] | None = None,
    reason: str | None = None,
) -> dict[str, Any]:
    """Build a ``materialization`` block for a record whose semantic content is ``data``/``body``.

    The block's revision is computed with the lifecycle projection of the block itself (action, target,
    reason), exactly as Memzoi verifies it; any existing ``materialization`` key in ``data`` is ignored. The
    returned dict is in Memzoi's key order and validates as :class:`MaterializationMetadata` (raises
    ``pydantic.ValidationError`` otherwise). Writing it into a file is the renderer's job.
    """
    block: dict[str, Any] = {
        "schema": METADATA_SCHEMA,
        "action": action,
        "plan_id": plan_id,
        "candidate_id": candidate_id,
        "decision_id": decision_id,
        "decision_at": decision_at,
        "safety_contract": safety_contract,
    }
    if target is not None:
        block["target"] = dict(target)
    if reason is not None:
        block["reason"] = reason
    rest = {k: v for k, v in data.items() if k != "materialization"}
    block["revision"] = {
        "schema": REVISION_SCHEMA,
        "revision_hash": revision_hash(record_id, semantic_projection(rest, body), lifecycle_projection(block)),
    }
    ordered: dict[str, Any] = {
        k: block[k]
        for k in (
            "schema",
            "action",
            "plan_id",
            "candidate_id",
            "decision_id",
            "decision_at",
            "safety_contract",
            "revision",
            "target",
            "reason",
        )
        if k in block
    }
    MaterializationMetadata.model_validate(ordered)
    return ordered
