"""Materialization: candidate → plan → decision → apply, with Memzoi's deterministic identities (reference §5).

* :func:`build_candidate` turns a draft record (Markdown with current-profile frontmatter, e.g. outside
  ``.memzoi``) into a candidate for ``create`` (the record must not exist) or ``update`` (its expected prior
  revision is the current record's canonical revision).
* :func:`derive_plan` and :func:`derive_decision` are pure: the same inputs always give the same ids.
  ``id = "blake3:" + hex(BLAKE3(domain ‖ 0x00 ‖ JCS(value)))`` (:func:`memzoi.judge.revision.domain_id`).
* :func:`materialize_apply` revalidates everything in Memzoi's order (``prepare_materialization``) and writes
  the record with its ``materialization:`` attestation as one ledgered change. Only create and update are
  supported, as in Memzoi's CLI. A created record is rendered canonically; an existing one is edited key by key
  (:mod:`memzoi.read.rewrite`), so its comments and other hand edits stay, or the change is refused with
  ``hand_edit_conflict``.

Errors are :class:`~memzoi.ledger.Refusal` with Memzoi's snake_case identifiers (``materialization_*``).
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from ..base.nesting import json_too_deep, nesting_message
from ..base.runtime import git_env
from ..judge.analysis import Analysis, analyze_text, record_id_of
from ..judge.attestation import SAFETY_CONTRACT, attest
from ..judge.revision import (
    REVISION_SCHEMA,
    domain_id,
    lifecycle_projection,
    record_revision,
    revision_hash,
    semantic_projection,
)
from ..ledger import ChangePlan, ChangeResult, FileChange, Refusal, now_utc, read_file_state, run_change
from ..models import RecordFrontmatter
from ..models.materialization import MaterializationCandidate, MaterializationDecision, MaterializationPlan
from ..read.render import RECORD_ORDER, description_of, render_record
from .common import describe, edited, errors, record_rel, verified

CANDIDATE_SCHEMA = "memzoi/repository-materialization-candidate"
PLAN_SCHEMA = "memzoi/repository-materialization-plan"
DECISION_SCHEMA = "memzoi/repository-materialization-decision"
CANDIDATE_DOMAIN = "memzoi.repository-materialization.candidate-id"
PLAN_DOMAIN = "memzoi.repository-materialization.plan-id"
DECISION_DOMAIN = "memzoi.repository-materialization.decision-id"
POLICY = {"policy_id": SAFETY_CONTRACT, "safety_contract": SAFETY_CONTRACT}
MAX_ARTIFACT_BYTES = 2 * 1024 * 1024


def _rev(hash_: str) -> dict[str, str]:
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
            "revision": _rev(record_revision(ident, cur.document.data or {}, cur.document.body)),
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
        raise Refusal("materialization_candidate_invalid", f"candidate does not validate: {_first(err)}") from None
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


def _first(err: ValidationError) -> str:
    e = err.errors()[0]
    return f"{'.'.join(str(x) for x in e['loc'])}: {e['msg']}"


def derive_plan(candidate: dict[str, Any]) -> dict[str, Any]:
    """The plan of a (validated) direct candidate: one ``canonical_record`` output."""
    output = {
        "path": candidate["output_path"],
        "record_id": candidate["record"]["concept_id"],
        "action": candidate["action"],
        "expected_prior_revision": candidate["expected_prior_revision"],
        "intended_semantic_revision": _rev(intended_revision(candidate)),
        "role": "canonical_record",
    }
    plan = {"schema": PLAN_SCHEMA, "plan_id": "", "candidate_id": candidate["candidate_id"], "outputs": [output]}
    plan["plan_id"] = domain_id(
        PLAN_DOMAIN, {"schema": PLAN_SCHEMA, "candidate_id": plan["candidate_id"], "outputs": plan["outputs"]}
    )
    return plan


def derive_decision(plan: dict[str, Any], decision_at: str) -> dict[str, Any]:
    """The decision for ``plan`` at ``decision_at`` (RFC 3339); ``explicit_cli`` under the built-in policy."""
    body = {
        "schema": DECISION_SCHEMA,
        "plan_id": plan["plan_id"],
        "candidate_id": plan["candidate_id"],
        "decision_at": decision_at,
        "policy": dict(POLICY),
        "authorization_capability": "explicit_cli",
        "outputs": plan["outputs"],
    }
    return {
        "schema": DECISION_SCHEMA,
        "decision_id": domain_id(DECISION_DOMAIN, body),
        **{k: v for k, v in body.items() if k != "schema"},
    }


def load_artifact(path: str | os.PathLike[str]) -> dict[str, Any]:
    """A regular, non-symlink, strict-JSON UTF-8 artifact of at most 2 MiB. Raises :class:`Refusal`
    (``materialization_artifact_invalid``, saying which: missing, not a regular file, too large, not JSON)."""
    p = Path(path)
    if not p.is_symlink() and not p.exists():
        raise Refusal(
            "materialization_artifact_invalid",
            f"{path}: no such file; write it first with `memzoi "
            "materialize candidate`, `plan` or `decide` and --output",
        )
    if p.is_symlink() or not p.is_file():
        raise Refusal("materialization_artifact_invalid", f"{path}: not a regular file")
    data = p.read_bytes()
    if len(data) > MAX_ARTIFACT_BYTES:
        raise Refusal("materialization_artifact_invalid", f"{path}: larger than 2 MiB")

    def reject_constant(name: str) -> None:
        raise ValueError(f"non-standard JSON constant {name}")

    if json_too_deep(data) is not None:  # checked first: json.loads recurses once per level
        raise Refusal("materialization_artifact_invalid", f"{path}: {nesting_message()}")
    try:
        value = json.loads(data.decode("utf-8"), parse_constant=reject_constant)
    except (UnicodeDecodeError, ValueError) as err:
        raise Refusal("materialization_artifact_invalid", f"{path}: not strict UTF-8 JSON ({err})") from None
    if not isinstance(value, dict):
        raise Refusal("materialization_artifact_invalid", f"{path}: not a JSON object")
    return value


def _git_review_visible(root: Path, rel: str) -> bool:
    def git(*args: str) -> int:
        try:
            return subprocess.run(
                ["git", "-C", str(root), *args],
                capture_output=True,
                env=git_env(),
                stdin=subprocess.DEVNULL,
                timeout=10,
                check=False,
            ).returncode
        except (OSError, subprocess.SubprocessError):
            return 128

    if git("rev-parse", "--is-inside-work-tree") != 0:
        return False
    if git("ls-files", "--error-unmatch", "--", rel) == 0:
        return True  # tracked wins over ignore rules
    return git("check-ignore", "--quiet", "--no-index", "--", rel) != 0


def plan_materialize(
    root: Path,
    candidate: dict[str, Any],
    plan: dict[str, Any],
    decision: dict[str, Any],
    *,
    expected_ids: dict[str, str | None] | None = None,
    operation: str = "materialize",
    reason: str | None = None,
) -> ChangePlan:
    """Memzoi's apply revalidation (reference §5.4) and the change writing the attested record."""
    for key, value in (expected_ids or {}).items():
        have = {"candidate_id": candidate, "plan_id": plan, "decision_id": decision}[key].get(key)
        if value is not None and value != have:
            raise Refusal("materialization_identity_mismatch", f"--{key.replace('_', '-')} does not match the artifact")
    model = validate_candidate(candidate)
    if model.action not in ("create", "update"):
        raise Refusal("multi_record_transaction_required", "materialize apply supports only create and update actions")
    if plan != derive_plan(candidate):
        raise Refusal(
            "materialization_candidate_plan_mismatch",
            "the plan does not equal the plan derived from the candidate; re-run `memzoi materialize plan`",
        )
    try:
        MaterializationPlan.model_validate(plan)
        MaterializationDecision.model_validate(decision)
    except ValidationError as err:
        raise Refusal("materialization_artifact_invalid", f"artifact does not validate: {_first(err)}") from None
    if decision.get("plan_id") != plan["plan_id"] or decision.get("candidate_id") != plan["candidate_id"]:
        raise Refusal("materialization_plan_decision_identity_mismatch", "the decision is for another plan")
    if decision.get("outputs") != plan["outputs"] or len(plan["outputs"]) != 1:
        raise Refusal("materialization_output_intent_mismatch", "the decision's outputs differ from the plan's")
    if decision.get("authorization_capability") != "explicit_cli":
        raise Refusal("materialization_authorization_capability_mismatch", "authorization must be explicit_cli")
    if decision.get("policy") != POLICY:
        raise Refusal("materialization_policy_mismatch", "the decision was made under another policy")
    if decision != derive_decision(plan, decision["decision_at"]):
        raise Refusal("materialization_decision_identity_mismatch", "decision_id does not match the decision")
    d = model.record.draft
    for ok, code in (
        (d.scope_kind == "repo" and d.scope_id is None, "materialization_candidate_not_repository_scoped"),
        (d.visibility == "repo", "materialization_candidate_not_repository_visible"),
        (d.sensitivity == "repo-safe", "materialization_candidate_not_repo_safe"),
        (d.content_class == "general_repo_knowledge", "materialization_candidate_not_general_repository_knowledge"),
    ):
        if not ok:
            raise Refusal(code, f"the candidate cannot reach the git plane ({code})")
    intended = plan["outputs"][0]["intended_semantic_revision"]["revision_hash"]
    data, body = record_frontmatter(candidate)
    rid = model.record.concept_id
    if record_revision(rid, {**data, "materialization": {"action": model.action}}, body) != intended:
        raise Refusal("materialization_semantic_revision_mismatch", "the record's revision differs from the plan's")
    block = attest(
        rid,
        data,
        body,
        action=model.action,
        plan_id=plan["plan_id"],
        candidate_id=candidate["candidate_id"],
        decision_id=decision["decision_id"],
        decision_at=decision["decision_at"],
    )
    full = {**data, "materialization": block}
    rel = model.output_path
    current = read_file_state(root, rel)
    if current is not None:
        cur = analyze_text(current.decode("utf-8", errors="replace"), root / rel)
        if not isinstance(cur.model, RecordFrontmatter):
            raise Refusal("materialization_current_record_invalid", f"{rel}: the current record does not parse", rel)
        if record_id_of(cur) != rid:  # the path id: Memzoi compares concept ids, never the frontmatter id
            raise Refusal(
                "materialization_current_record_id_mismatch", f"{rel}: the current record has another id", rel
            )
        text, full = _updated_text(rel, cur, full, body)
    else:
        text = render_record(full, body)
        full["description"] = data.get("description") or _first_line(body)
    new = verified(root, rel, text, full, body)
    if not _git_review_visible(root, rel):
        raise Refusal(
            "materialization_git_review_visibility_required",
            f"{rel}: git must be able to show this file to a reviewer (inside a work tree, not ignored)",
            rel,
        )
    if current == new:
        raise Refusal("already_current", f"{rel} already holds exactly this attested record", rel)
    if model.action == "create" and current is not None:
        raise Refusal("materialization_create_conflict", f"{rel} already exists", rel)
    if model.action == "update":
        if current is None:
            raise Refusal("materialization_update_conflict", f"{rel} does not exist", rel)
        cur_rev = record_revision(rid, cur.document.data or {}, cur.document.body)
        if cur_rev != model.expected_prior_revision.revision.revision_hash:  # type: ignore[union-attr]
            raise Refusal(
                "materialization_update_stale", f"{rel} changed since the candidate was made; rebuild it", rel
            )
    return ChangePlan(
        operation,
        [FileChange(rel, current, new)],
        reason=reason,
        summary=f"{operation} {model.action} {rid}",
        details={
            "record_id": rid,
            "action": model.action,
            "candidate_id": candidate["candidate_id"],
            "plan_id": plan["plan_id"],
            "decision_id": decision["decision_id"],
            "revision": block["revision"]["revision_hash"],
        },
    )


def _updated_text(rel: str, cur: Analysis, full: dict[str, Any], body: str) -> tuple[str, dict[str, Any]]:
    """The current record edited to ``full`` and ``body`` key by key (:mod:`memzoi.read.rewrite`): the keys whose value
    differs and the body when it differs are rewritten; comments, blank lines and trailing blank lines stay. The
    candidate carries no ``description``: a description the renderer wrote (the old body's first line) follows the
    new body; a hand-written one, or its absence, is kept. Returns ``(text, the data it must read back as)``."""
    if cur.model is None:
        raise Refusal("materialization_current_record_invalid", f"{rel}: the current record does not parse", rel)
    old = cur.model.model_dump(mode="python", exclude_none=True)
    changes: dict[str, Any] = {k: v for k, v in full.items() if old.get(k) != v}
    changes.update({k: None for k in old if k not in full and k != "description"})
    changes.pop("description", None)
    old_body = cur.document.body
    if "description" in old and old["description"] == _first_line(old_body) and _first_line(body) != old["description"]:
        changes["description"] = _first_line(body) or None
    text = edited(rel, cur.document, changes, RECORD_ORDER, title=full["title"], body=body)
    return text, {k: v for k, v in {**old, **changes}.items() if v is not None}


def _first_line(body: str) -> str:
    return description_of(body)  # what render_record writes when the candidate gives none


def materialize_apply(
    project_root: str | os.PathLike[str],
    candidate: dict[str, Any],
    plan: dict[str, Any],
    decision: dict[str, Any],
    *,
    actor: str,
    source: str = "cli",
    expected_ids: dict[str, str | None] | None = None,
) -> ChangeResult:
    """Write the decided record with its attestation as one ledgered change. Raises :class:`Refusal`."""
    return run_change(
        project_root,
        lambda root: plan_materialize(root, candidate, plan, decision, expected_ids=expected_ids),
        actor=actor,
        source=source,
    )


def decision_now() -> str:
    """A decision instant: UTC RFC 3339 to the second."""
    return now_utc(precise=False)
