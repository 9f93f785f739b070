"""Apply a pending proposal packet (create, supersede, tombstone) as one ledgered change.

Memzoi's ``proposal-files apply`` (reference §2.5): the packet must be ``repo-safe`` and
``general_repo_knowledge``, pending, with a fresh identity; create writes a new record with id
``title_to_concept_slug(title)``; supersede and tombstone check that the target exists, is active, has the same
scope kind and scope id, and was not updated after the proposal; the target is rewritten ``superseded`` /
``tombstoned`` with ``updated = resolved_at``; the packet gets ``status: applied`` and its resolution and is moved
to ``resolved/applied/``. A new record is rendered canonically (:mod:`memzoi.read.render`); an existing file is edited
key by key (:mod:`memzoi.read.rewrite`), so the lines the writer does not own (comments, a hand-written
``description``, the body, trailing blank lines) stay as written, or the apply is refused with
``hand_edit_conflict``. Every file must re-parse to the intended data with no error finding, so gate and detector
findings block the apply. Permissions widen nowhere: the rewritten target keeps its mode, and the new record and
the resolved copy get the packet's permission bits (undo gives the packet back its own).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..base.findings import Finding
from ..ledger import ChangePlan, ChangeResult, FileChange, Refusal, file_mode, read_file_state, run_change
from ..ledger.view import LedgerView
from ..models import PendingProposal, RecordFrontmatter
from ..models.common import parse_instant
from ..read.render import PACKET_ORDER, RECORD_ORDER, description_of, render_record
from .common import (
    APPLIED,
    PENDING,
    Loaded,
    concept_slug,
    edited,
    file_id_of,
    identity_taken,
    load,
    load_pending_packet,
    packet_rel,
    record_rel,
    refuse_on_errors,
    resolved_at,
    verified,
)
from .readiness import Blocker, readiness, title_too_long

if TYPE_CHECKING:
    from ..judge.analysis import Analysis

_SENSITIVITY_GUIDANCE = {
    "secret": "secret proposals must not become repo-shared memory; reject it",
    "sensitive": "sensitive proposals must not become repo-shared memory; reject it or route it to local memory",
    "local-only": "local-only proposals belong in local memory; route it to local memory",
    "raw-transcript": "raw transcripts must not become repo-shared memory; summarise the durable fact instead",
    "private-personal-data": "private personal data must not become repo-shared memory; reject it",
    "temporary-state": "temporary task state belongs in local memory; route it to local memory",
    "unknown": "classify the proposal's sensitivity as repo-safe after review, or reject it",
}


def load_pending(root: Path, rel: str) -> tuple[Loaded, PendingProposal]:
    """The pending packet at ``rel`` with its validated model. Raises :class:`Refusal` when it is missing or
    does not validate (``invalid_proposal``)."""
    loaded = load_pending_packet(root, rel)
    model = loaded.analysis.model
    if not isinstance(model, PendingProposal):
        refuse_on_errors(loaded, "the proposal", "fix the packet (see `memzoi check`) and retry")
        raise Refusal("invalid_proposal", f"{rel}: not a pending proposal packet (status must be `proposed`)", rel)
    return loaded, model


def repo_safe_blockers(model: PendingProposal) -> list[Blocker]:
    """Memzoi apply steps 2–3: sensitivity ``repo-safe`` and content class ``general_repo_knowledge``, with
    Memzoi's guidance for each refusal."""
    out = []
    if model.sensitivity != "repo-safe":
        out.append(
            Blocker(
                "sensitivity_not_repo_safe",
                f"proposal sensitivity {model.sensitivity} cannot be applied into repo records; "
                + _SENSITIVITY_GUIDANCE.get(model.sensitivity, "reject it"),
            )
        )
    if model.content_class != "general_repo_knowledge":
        code = {
            "raw_transcript": "raw_transcript",
            "private_personal_data": "private_personal_data",
            "screen_or_activity_history": "activity_history",
            "private_endpoint": "private_endpoint",
            "undisclosed_vulnerability": "undisclosed_vulnerability",
            "unminimized_private_evidence": "private_evidence_unminimized",
            "temporary_task_state": "temporary_task_state",
            "local_only_state": "local_only_state",
        }.get(model.content_class, "unknown_content_class")
        out.append(
            Blocker(
                code,
                f"repository write blocked: proposal content class {model.content_class} cannot be applied into repo "
                "records; reject it or route it to local memory",
            )
        )
    return out


def _source(model: PendingProposal) -> tuple[str | None, str | None]:
    for src in model.sources or []:
        if src.path:
            return "path", src.path
        if src.url:
            return "url", src.url
        if src.ref:
            return "ref", src.ref
    return None, None


def _new_record(model: PendingProposal, record_id: str, body: str, supersedes: str | None) -> dict[str, Any]:
    source, source_ref = _source(model)
    dump = model.model_dump(mode="python", exclude_none=True)
    return {
        "id": record_id,
        "kind": "memory",
        "profile": "memzoi",
        "type": model.type,
        "lane": model.lane,
        "title": model.title,
        "description": description_of(body),
        "timestamp": model.timestamp,
        "updated": model.timestamp,
        "status": "active",
        "scope": model.scope.kind,
        "scope_id": model.scope.id,
        "visibility": "repo",
        "content_class": "general_repo_knowledge",
        "confidence": 1.0,
        "source": source,
        "source_ref": source_ref,
        "proposal_id": model.id,
        "capture": model.capture,
        "tags": model.tags,
        "applies_to": model.scope.paths,
        "supersedes": supersedes,
        "retention": dump["retention"],
        "origin": dump["origin"],
        "lineage": dump.get("lineage"),
    }


def load_target(
    root: Path, target_id: str, *, scope_kind: str | None, scope_id: str | None, proposed_at: str
) -> Loaded:
    """Memzoi's target checks: exists, parses, ``active``, same scope kind and scope id (skipped when
    ``scope_kind`` is ``None``), not updated after the proposal (reference §2.5). Raises :class:`Refusal` with ``target_missing``, ``target_invalid``,
    ``proposal_target_inactive``, ``proposal_cross_scope`` or ``proposal_target_stale``."""
    rel = record_rel(target_id)
    try:
        loaded = load(root, rel, missing_code="target_missing", what=f"proposal target `{target_id}`")
    except Refusal as err:
        if err.code == "target_missing":
            raise Refusal(
                "target_missing",
                f"proposal target `{target_id}` does not exist ({rel}); fix the packet's target or reject it",
                rel,
            ) from None
        raise
    model = loaded.analysis.model
    if not isinstance(model, RecordFrontmatter):
        refuse_on_errors(loaded, "the proposal target", "fix the target record first")
        raise Refusal("target_invalid", f"{rel}: the proposal target is not a valid current-profile record", rel)
    refuse_on_errors(loaded, "the proposal target", "fix the target record first")
    if model.status != "active":
        raise Refusal(
            "proposal_target_inactive",
            f"proposal target `{target_id}` is inactive with status {model.status}; reject the proposal",
            rel,
        )
    if scope_kind is not None and (model.scope != scope_kind or model.scope_id != scope_id):
        raise Refusal(
            "proposal_cross_scope",
            f"proposal target `{target_id}` is cross-scope (target scope "
            f"{model.scope}/{model.scope_id or '-'}, proposal {scope_kind}/{scope_id or '-'}); "
            "reject the proposal or fix its scope",
            rel,
        )
    updated = parse_instant(model.updated or model.timestamp)
    proposed = parse_instant(proposed_at)
    if updated is None or proposed is None or updated > proposed:
        raise Refusal(
            "proposal_target_stale",
            f"proposal target `{target_id}` is stale: target updated at "
            f"{model.updated or model.timestamp} after proposal at {proposed_at}; re-propose against "
            "the current record",
            rel,
        )
    return loaded


def retire_target(root: Path, target: Loaded, status: str, when: str) -> FileChange:
    """The target with ``status`` and ``updated = when`` (the attestation, now stale, is dropped). Its ``id`` is
    written from its path, as Memzoi's renderer writes the concept id it keys the record by. Only those keys
    change: every other line (a hand-written ``description``, comments, the body, trailing blank lines) is kept
    in place. Raises :class:`Refusal` (``hand_edit_conflict``) where a hand edit sits inside a key it rewrites."""
    data = target.data
    wanted = {
        "id": target.analysis.placement.identity or data["id"],
        "status": status,
        "updated": when,
        "materialization": None,
    }
    changes = {k: v for k, v in wanted.items() if data.get(k) != v}
    text = edited(target.rel, target.analysis.document, changes, RECORD_ORDER)
    want = {k: v for k, v in {**data, **changes}.items() if v is not None}
    return FileChange(target.rel, target.raw, verified(root, target.rel, text, want, target.body))


def resolved_packet(root: Path, loaded: Loaded, folder: str, resolution: dict[str, Any], status: str) -> FileChange:
    """The pending packet with ``status`` and ``resolution`` at ``folder/<file id>.md``; only those keys change
    (and ``supersedes: []`` is added when absent, as Memzoi's packet renderer always writes it). The resolved
    copy keeps the packet's permission bits (a move widens no permission). Raises :class:`Refusal`
    (``hand_edit_conflict``) where a hand edit sits inside a key it rewrites."""
    data = loaded.data
    changes: dict[str, Any] = {"status": status, "resolution": {k: v for k, v in resolution.items() if v is not None}}
    if "supersedes" not in data:
        changes["supersedes"] = []
    rel = f"{folder}/{file_id_of(loaded.rel, PENDING)}.md"
    if read_file_state(root, rel) is not None:
        raise Refusal("duplicate_identity", f"{rel} already exists: a resolved identity is terminal", rel)
    text = edited(loaded.rel, loaded.analysis.document, changes, PACKET_ORDER)
    body = verified(root, rel, text, {**data, **changes}, loaded.body)
    return FileChange(rel, None, body, after_mode=file_mode(root, loaded.rel))


def plan_apply(root: Path, packet: str | os.PathLike[str], actor: str) -> ChangePlan:
    """Validate a pending packet and compute every file of its application (see the module docstring).

    The decision is :func:`~memzoi.lifecycle.readiness.readiness` over the facts read here from disk, under the
    lifecycle lock: the same rule the editor and ``proposals list`` show. Raises :class:`Refusal` naming every
    blocking reason (the first one's code) when it says no."""
    rel = packet_rel(root, packet)
    loaded, model = load_pending(root, rel)
    file_id = file_id_of(rel, PENDING)
    findings = packet_findings(root, rel, loaded.analysis)
    extra = [b for b in repo_safe_blockers(model) if b.code not in {f.code for f in findings}]
    action = model.proposal.action
    target_id: str | None = None
    target: Loaded | None = None
    if action == "supersede":
        target_id = model.supersedes[0] if model.supersedes else None
    elif action == "tombstone":
        target_id = model.proposal.target
    if action in ("supersede", "tombstone") and target_id is None:
        # The packet's invalid_proposal_shape finding says this too (models.proposal.proposal_rule_violations),
        # unless [rules] turned it off: either way nothing can be superseded or tombstoned.
        if "invalid_proposal_shape" not in {f.code for f in findings}:
            where = "supersedes" if action == "supersede" else "proposal.target"
            extra.append(Blocker("invalid_proposal_shape", f"a {action} proposal must name its record in {where}"))
    elif target_id is not None:
        try:
            target = load_target(
                root,
                target_id,
                scope_kind=model.scope.kind,
                scope_id=model.scope.id,
                proposed_at=model.proposal.proposed_at,
            )
        except Refusal as err:
            extra.append(Blocker(err.code, err.message))
    record_id = target_id
    new: tuple[str, str] | None = None  # the new record's (id, path)
    long_title = None
    if action in ("create", "supersede"):
        new_id = concept_slug(model.title) or file_id.replace("_", "-")
        record_id = new_id
        long_title = title_too_long(model.title, pending=True)
        if long_title is not None and long_title.code not in {f.code for f in findings}:
            extra.append(long_title)  # the packet's finding says it too, unless suppressed
        if new_id == target_id:
            extra.append(
                Blocker(
                    "record_exists",
                    f"the replacement record id `{new_id}` equals the superseded "
                    "record's id; give the proposal a different title",
                )
            )
        new = (new_id, record_rel(new_id))
    new_rel = new[1] if new is not None else None
    verdict = readiness(
        findings,
        identity_resolved=rel if identity_taken(root, model.id, file_id) else None,
        record_taken=new_rel if new_rel and not long_title and read_file_state(root, new_rel) is not None else None,
        extra=extra,
    )
    if not verdict.can_apply:
        raise Refusal(verdict.blockers[0].code, f"{rel}: applying the proposal is {verdict.refusal()}", rel)
    when = resolved_at()
    files: list[FileChange] = []
    if new is not None:
        new_id, new_rel = new
        data = _new_record(model, new_id, loaded.body, target_id if action == "supersede" else None)
        text = render_record(data, loaded.body)
        written = verified(root, new_rel, text, data, loaded.body)
        # The record holds the packet's content: it gets the packet's permission bits, never wider ones.
        files.append(FileChange(new_rel, None, written, after_mode=file_mode(root, rel)))
    if target is not None:
        files.append(retire_target(root, target, "superseded" if action == "supersede" else "tombstoned", when))
    resolution = {
        "outcome": "applied",
        "resolved_by": actor,
        "resolved_at": when,
        "reason": model.proposal.reason,
        "record_id": record_id,
        "target_id": target_id,
    }
    files.append(resolved_packet(root, loaded, APPLIED, resolution, "applied"))
    files.append(FileChange(rel, loaded.raw, None))
    return ChangePlan(
        "apply",
        files,
        reason=model.proposal.reason,
        summary=f"apply {action} proposal {model.id}",
        details={"proposal_id": model.id, "action": action, "record_id": record_id, "target_id": target_id},
    )


def packet_findings(root: Path, rel: str, analysis: Analysis) -> list[Finding]:
    """The packet's findings at write time: its verdict (:func:`memzoi.project.verdict.judge`) with git visibility asked
    now (one git batch) and the ledger's findings; cross-file facts are checked by the plan itself."""
    from ..project.gitfacts import GitFacts  # noqa: PLC0415 lazy: start-up
    from ..project.verdict import ProjectContext, judge  # noqa: PLC0415 lazy: start-up

    path = root / rel
    git = GitFacts(root)
    git.ask([path])
    ctx = ProjectContext.of(root / ".memzoi", git=git, ledger=LedgerView(root))
    return list(judge(path, analysis, ctx).findings)


def apply_proposal(
    project_root: str | os.PathLike[str],
    packet: str | os.PathLike[str],
    *,
    actor: str,
    source: str = "cli",
    previewed: str | None = None,
) -> ChangeResult:
    """Apply the pending packet ``packet`` (path or file id) as one ledgered change.

    Raises :class:`~memzoi.ledger.Refusal` (nothing written) when a finding blocks it, a precondition fails or a
    file changed since it was read, or since the preview ``previewed`` (its fingerprint) was shown
    (``preview_stale``, :mod:`memzoi.ledger.previewed`).
    """
    return run_change(
        project_root, lambda root: plan_apply(root, packet, actor), actor=actor, source=source, previewed=previewed
    )
