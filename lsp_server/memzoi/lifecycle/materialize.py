"""Materialization: candidate → plan → decision → apply, with Memzoi's deterministic identities (reference §5).

* :func:`memzoi.lifecycle.materialize_candidate.build_candidate` turns a draft record into a candidate;
  :func:`~memzoi.lifecycle.materialize_candidate.validate_candidate` checks one against Memzoi's candidate rules.
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

import blake3
from pydantic import ValidationError

from ..base.nesting import json_too_deep, nesting_message
from ..base.runtime import git_env
from ..judge.analysis import Analysis, analyze_text, record_id_of
from ..judge.attestation import attest
from ..judge.attestation_block import SAFETY_CONTRACT
from ..judge.pathsafety import shown_path
from ..judge.revision import canonical_json, domain_id, record_revision
from ..ledger import ChangePlan, ChangeResult, FileChange, Refusal, now_utc, read_file_state, run_change
from ..models import RecordFrontmatter
from ..models.materialization import MaterializationCandidate, MaterializationDecision, MaterializationPlan
from ..read.render import RECORD_ORDER, description_of, render_record
from .common import edited, verified
from .materialize_candidate import (
    first_problem,
    intended_revision,
    record_frontmatter,
    revision_ref,
    validate_candidate,
)

PLAN_SCHEMA = "memzoi/repository-materialization-plan"
DECISION_SCHEMA = "memzoi/repository-materialization-decision"
PLAN_DOMAIN = "memzoi.repository-materialization.plan-id"
DECISION_DOMAIN = "memzoi.repository-materialization.decision-id"
POLICY = {"policy_id": SAFETY_CONTRACT, "safety_contract": SAFETY_CONTRACT}
MAX_ARTIFACT_BYTES = 2 * 1024 * 1024


def derive_plan(candidate: dict[str, Any]) -> dict[str, Any]:
    """The plan of a (validated) direct candidate: one ``canonical_record`` output."""
    output = {
        "path": candidate["output_path"],
        "record_id": candidate["record"]["concept_id"],
        "action": candidate["action"],
        "expected_prior_revision": candidate["expected_prior_revision"],
        "intended_semantic_revision": revision_ref(intended_revision(candidate)),
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
    """Memzoi's apply revalidation (reference §5.4), in its order, and the change writing the attested record:
    the artifacts and their identities, the candidate's git-plane fields, the intended revision, the current file
    (a record of the same id, or none), git review visibility, and the create/update precondition."""
    model = _checked_artifacts(candidate, plan, decision, expected_ids)
    _check_git_plane(model)
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
    rel = model.output_path
    current = read_file_state(root, rel)
    cur = _current_record(root, rel, rid, current)
    if cur is not None:
        text, full = _updated_text(rel, cur, {**data, "materialization": block}, body)
    else:
        full = {**data, "materialization": block}
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
    _check_precondition(model, rel, rid, cur)
    # A re-attestation makes its artifacts from the record (whose bytes a preview covers) at the current second.
    decides = _decides(rel, new, candidate, plan, decision) if operation == "materialize" else {}
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
        decides=decides,
    )


def _decides(rel: str, new: bytes, *artifacts: dict[str, Any]) -> dict[str, str]:
    """What a preview's fingerprint covers beyond the record's before bytes: the three artifacts, which live
    outside the project and decide the write, and the record text they make (:mod:`memzoi.ledger.previewed`).
    Another consistent set swapped in after the preview is then ``preview_stale``, not an unreviewed write."""
    names = ("the materialization candidate", "the materialization plan", "the materialization decision")
    out = {name: blake3.blake3(canonical_json(a)).hexdigest() for name, a in zip(names, artifacts, strict=True)}
    out[f"the text it writes to {shown_path(rel)}"] = blake3.blake3(new).hexdigest()
    return out


def _checked_artifacts(
    candidate: dict[str, Any],
    plan: dict[str, Any],
    decision: dict[str, Any],
    expected_ids: dict[str, str | None] | None,
) -> MaterializationCandidate:
    """The candidate's model once the three artifacts are what they say and belong together (the ids the caller
    expects, the plan derived from the candidate, the decision of that plan under this policy)."""
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
        raise Refusal("materialization_artifact_invalid", f"artifact does not validate: {first_problem(err)}") from None
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
    return model


def _check_git_plane(model: MaterializationCandidate) -> None:
    """Refuse a candidate whose draft cannot reach the git plane (scope, visibility, sensitivity, content class)."""
    d = model.record.draft
    for ok, code in (
        (d.scope_kind == "repo" and d.scope_id is None, "materialization_candidate_not_repository_scoped"),
        (d.visibility == "repo", "materialization_candidate_not_repository_visible"),
        (d.sensitivity == "repo-safe", "materialization_candidate_not_repo_safe"),
        (d.content_class == "general_repo_knowledge", "materialization_candidate_not_general_repository_knowledge"),
    ):
        if not ok:
            raise Refusal(code, f"the candidate cannot reach the git plane ({code})")


def _current_record(root: Path, rel: str, rid: str, current: bytes | None) -> Analysis | None:
    """The analysis of the record at ``rel`` (``None`` when there is none); refused when it does not parse or has
    another id (the path id: Memzoi compares concept ids, never the frontmatter id)."""
    if current is None:
        return None
    cur = analyze_text(current.decode("utf-8", errors="replace"), root / rel)
    if not isinstance(cur.model, RecordFrontmatter):
        raise Refusal("materialization_current_record_invalid", f"{rel}: the current record does not parse", rel)
    if record_id_of(cur) != rid:
        raise Refusal("materialization_current_record_id_mismatch", f"{rel}: the current record has another id", rel)
    return cur


def _check_precondition(model: MaterializationCandidate, rel: str, rid: str, cur: Analysis | None) -> None:
    """A create needs no record at ``rel``; an update needs the record at the revision the candidate expects."""
    if model.action == "create" and cur is not None:
        raise Refusal("materialization_create_conflict", f"{rel} already exists", rel)
    if model.action == "update":
        if cur is None:
            raise Refusal("materialization_update_conflict", f"{rel} does not exist", rel)
        cur_rev = record_revision(rid, cur.document.data or {}, cur.document.body)
        # validate_candidate refused an update whose expected prior revision is not of kind `revision`
        if cur_rev != model.expected_prior_revision.revision.revision_hash:  # type: ignore[union-attr]
            raise Refusal(
                "materialization_update_stale", f"{rel} changed since the candidate was made; rebuild it", rel
            )


def _updated_text(rel: str, cur: Analysis, full: dict[str, Any], body: str) -> tuple[str, dict[str, Any]]:
    """The current record edited to ``full`` and ``body`` key by key (:mod:`memzoi.read.rewrite`): the keys whose value
    differs and the body when it differs are rewritten; comments, blank lines and trailing blank lines stay. The
    candidate carries no ``description``: a description the renderer wrote (the old body's first line) follows the
    new body; a hand-written one, or its absence, is kept. Returns ``(text, the data it must read back as)``."""
    old = cur.model.model_dump(mode="python", exclude_none=True) if cur.model is not None else {}
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
    previewed: str | None = None,
) -> ChangeResult:
    """Write the decided record with its attestation as one ledgered change. Raises :class:`Refusal`
    (``preview_stale`` when the record changed since the preview ``previewed`` was shown)."""
    return run_change(
        project_root,
        lambda root: plan_materialize(root, candidate, plan, decision, expected_ids=expected_ids),
        actor=actor,
        source=source,
        previewed=previewed,
    )


def decision_now() -> str:
    """A decision instant: UTC RFC 3339 to the second."""
    return now_utc(precise=False)
