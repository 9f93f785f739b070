"""A materialization candidate from a draft record (Memzoi's ``memzoi/repository-materialization-candidate``,
reference §5.1): the draft (Markdown with current-profile frontmatter, e.g. outside ``.memzoi``) becomes a
candidate for ``create`` (the record must not exist) or ``update`` (its expected prior revision is the current
record's canonical revision), with its deterministic ``candidate_id`` and the revision the written record will have.
It also checks a candidate against Memzoi's rules (:func:`validate_candidate`). Plans, decisions and apply:
:mod:`.materialize`.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from ..judge.analysis import analyze_text
from ..judge.revision import (
    REVISION_SCHEMA,
    domain_id,
    lifecycle_projection,
    record_revision,
    revision_hash,
    semantic_projection,
)
from ..ledger import Refusal, read_file_state
from ..models import RecordFrontmatter
from ..models.materialization import MaterializationCandidate
from .common import describe, errors, record_rel

CANDIDATE_SCHEMA = "memzoi/repository-materialization-candidate"
CANDIDATE_DOMAIN = "memzoi.repository-materialization.candidate-id"


def revision_ref(hash_: str) -> dict[str, str]:
    """A revision reference ``{"schema": "memzoi/revision", "revision_hash": hash_}`` (reference §5)."""
    return {"schema": REVISION_SCHEMA, "revision_hash": hash_}


def candidate_identity(candidate: dict[str, Any]) -> str:
    """``candidate_id`` over ``{schema, destination, action, output_path, expected_prior_revision, target,
    reason, record}``."""
    keys = ("schema", "destination", "action", "output_path", "expected_prior_revision", "target", "reason", "record")
    return domain_id(CANDIDATE_DOMAIN, {k: candidate.get(k) for k in keys})


def record_frontmatter(candidate: dict[str, Any]) -> tuple[dict[str, Any], str]:
    """The record frontmatter (no ``materialization``) and body a candidate describes."""
    rec = candidate["record"]
    d = rec["draft"]
    data = {
        "id": rec["concept_id"],
        "kind": "memory",
        "profile": "memzoi",
        "type": d["memory_type"],
        "lane": d["lane"],
        "title": d["title"],
        "timestamp": rec["created"],
        "updated": rec.get("updated"),
        "status": rec["status"],
        "scope": d["scope_kind"],
        "scope_id": d.get("scope_id"),
        "visibility": d["visibility"],
        "content_class": d["content_class"],
        "confidence": float(d["confidence"]),
        "source": d.get("source_kind"),
        "source_ref": d.get("source_ref"),
        "proposal_id": rec.get("proposal_id"),
        "capture": rec.get("capture"),
        "tags": d.get("tags") or None,
        "applies_to": rec.get("applies_to") or None,
        "supersedes": rec.get("supersedes_id"),
        "retention": rec["retention"],
        "origin": rec["origin"],
        "lineage": rec.get("lineage"),
    }
    return {k: v for k, v in data.items() if v is not None}, d["body"]


def intended_revision(candidate: dict[str, Any]) -> str:
    """The semantic revision the written record will have (lifecycle from the candidate's action/target/reason)."""
    data, body = record_frontmatter(candidate)
    target = candidate.get("target")
    lifecycle = lifecycle_projection(
        {"action": candidate["action"], "target": target, "reason": candidate.get("reason")}
    )
    return revision_hash(candidate["record"]["concept_id"], semantic_projection(data, body), lifecycle)


#: Where a user whose draft is refused finds a complete one (:mod:`.draft_template`).
TEMPLATE_HINT = "`memzoi materialize template` prints a complete draft record to start from"


def build_candidate(
    project_root: str | os.PathLike[str], draft_text: str, *, action: str = "create", reason: str | None = None
) -> dict[str, Any]:
    """A candidate from a draft record's text (its ``id`` names the output record). ``create`` requires the
    record to be absent; ``update`` takes the existing record's current canonical revision as expected prior.

    Raises :class:`Refusal` when the draft does not validate or the action does not fit the repository.
    """
    if action not in ("create", "update"):
        raise Refusal("materialization_action_unsupported", "materialize supports only create and update actions")
    root = Path(project_root).resolve()
    first = analyze_text(draft_text, None)
    ident = first.document.data.get("id") if first.document.data else None
    if not isinstance(ident, str):
        raise Refusal("invalid_value", f"the draft needs frontmatter with an `id`; {TEMPLATE_HINT}")
    rel = record_rel(ident)
    analysis = analyze_text(draft_text, root / rel)
    if not isinstance(analysis.model, RecordFrontmatter) or errors(analysis):
        raise Refusal(
            "materialization_candidate_invalid",
            f"the draft record is not valid: {describe(errors(analysis))}; {TEMPLATE_HINT}",
        )
    m = analysis.model
    prior: dict[str, Any] = {"kind": "absent"}
    current = read_file_state(root, rel)
    if action == "update":
        if current is None:
            raise Refusal("materialization_update_conflict", f"{rel} does not exist; use action create")
        cur = analyze_text(current.decode("utf-8", errors="replace"), root / rel)
        if not isinstance(cur.model, RecordFrontmatter):
            raise Refusal("materialization_current_record_invalid", f"{rel}: the current record does not parse")
        prior = {
            "kind": "revision",
            "revision": revision_ref(record_revision(ident, cur.document.data or {}, cur.document.body)),
        }
    elif current is not None:
        raise Refusal("materialization_create_conflict", f"{rel} already exists; use action update")
    dump = m.model_dump(mode="python", exclude_none=True)
    record: dict[str, Any] = {
        "concept_id": ident,
        "draft": {
            "memory_type": m.type,
            "lane": m.lane,
            "scope_kind": m.scope,
            "scope_id": m.scope_id,
            "visibility": m.visibility,
            "title": m.title,
            "body": analysis.document.body,
            "tags": list(m.tags or []),
            "source_kind": m.source,
            "source_ref": m.source_ref,
            "sensitivity": "repo-safe",
            "content_class": m.content_class,
            "confidence": m.confidence,
        },
        "status": m.status,
        "applies_to": list(m.applies_to or []),
        "created": m.timestamp,
    }
    for key, value in (("updated", m.updated), ("supersedes_id", m.supersedes)):
        if value is not None:
            record[key] = value
    record["retention"] = dump["retention"]
    record["origin"] = dump["origin"]
    for key in ("lineage", "proposal_id", "capture"):
        if dump.get(key) is not None:
            record[key] = dump[key]
    candidate: dict[str, Any] = {
        "schema": CANDIDATE_SCHEMA,
        "candidate_id": "",
        "destination": "repo",
        "action": action,
        "output_path": rel,
        "expected_prior_revision": prior,
        "target": None,
        "reason": reason,
        "record": record,
    }
    candidate["candidate_id"] = candidate_identity(candidate)
    validate_candidate(candidate)
    return candidate


def validate_candidate(candidate: dict[str, Any]) -> MaterializationCandidate:
    """Schema, identity and Memzoi's candidate rules (reference §5.1). Raises :class:`Refusal`."""
    try:
        model = MaterializationCandidate.model_validate(candidate)
    except ValidationError as err:
        raise Refusal(
            "materialization_candidate_invalid", f"candidate does not validate: {first_problem(err)}"
        ) from None
    if candidate_identity(candidate) != model.candidate_id:
        raise Refusal(
            "materialization_candidate_identity_mismatch",
            "candidate_id does not match the candidate's content; rebuild it with `memzoi materialize candidate`",
        )
    rec, d = model.record, model.record.draft
    if model.output_path != record_rel(rec.concept_id):
        raise Refusal("materialization_output_path_mismatch", f"output_path must be {record_rel(rec.concept_id)}")
    if model.action in ("create", "update", "supersede") and rec.status != "active":
        raise Refusal("materialization_candidate_invalid", f"{model.action} candidates must be active")
    if model.action == "create" and model.expected_prior_revision.kind != "absent":
        raise Refusal("materialization_candidate_invalid", "create candidates need an absent prior revision")
    if model.action == "update" and model.expected_prior_revision.kind != "revision":
        raise Refusal(
            "materialization_update_requires_expected_prior_revision", "update candidates need a prior revision"
        )
    if model.action in ("create", "update") and (
        model.target is not None or model.reason is not None or rec.supersedes_id is not None
    ):
        raise Refusal(
            "materialization_candidate_invalid",
            "create and update candidates cannot carry a target, a reason or supersedes_id",
        )
    if d.title != d.title.strip() or not d.body.strip():
        raise Refusal("materialization_candidate_invalid", "the title must be trimmed and the body non-empty")
    return model


def first_problem(err: ValidationError) -> str:
    """The first problem pydantic found, as ``"field.path: message"`` (never the value: it may be a secret)."""
    e = err.errors()[0]
    return f"{'.'.join(str(x) for x in e['loc'])}: {e['msg']}"
