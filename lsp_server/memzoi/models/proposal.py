"""Proposal packet frontmatter (``OkfProposalFrontmatter``, reference §2.2–2.4).

Three shapes: a pending packet (``status: proposed``, no resolution), and resolved packets (``applied`` or
``rejected``, with a ``resolution`` block). Action-shape and status/resolution rules live in
:func:`proposal_rule_violations` so their findings can be anchored on the exact key.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from .common import (
    ContentClass,
    Identifier,
    Instant,
    Lane,
    Lineage,
    MemoryType,
    NonEmptyStr,
    Origin,
    RelativePath,
    RetentionFacts,
    ScopeKind,
    SensitivityName,
    Strict,
    Timestamp,
)


class ProposalBlock(Strict):
    """``proposal`` block: the requested action and who proposed it."""

    action: Literal["create", "supersede", "tombstone"] = Field(description="What applying the packet does.")
    proposed_by: NonEmptyStr = Field(description="Who proposed it (agent, human, tool).")
    proposed_at: Instant = Field(description="When it was proposed.")
    reason: NonEmptyStr | None = Field(None, description="Why; required for supersede and tombstone.")
    confidence: NonEmptyStr | None = Field(None, description="Proposer's confidence, free text (e.g. `medium`).")
    target: NonEmptyStr | None = Field(None, description="Record id a tombstone applies to.")


class ScopeBlock(Strict):
    """``scope`` block of a proposal."""

    kind: ScopeKind = Field(description="Scope kind.")
    id: NonEmptyStr | None = Field(None, description="Scope id, e.g. the project id for `project` scope.")
    paths: list[RelativePath] | None = Field(None, description="Repository-relative paths it applies to.")


class SourceRef(Strict):
    """One entry of ``sources``: at least one of path, url, ref."""

    path: RelativePath | None = Field(None, description="Repository-relative file path.")
    url: NonEmptyStr | None = Field(None, description="URL of the evidence.")
    ref: NonEmptyStr | None = Field(None, description="Other evidence reference (commit, issue, …).")


class Resolution(Strict):
    """``resolution`` block of a resolved packet."""

    outcome: Literal["applied", "rejected"] = Field(description="How the proposal was resolved.")
    resolved_by: NonEmptyStr = Field(description="Who resolved it.")
    resolved_at: Instant = Field(description="When it was resolved.")
    reason: NonEmptyStr | None = Field(None, description="Reason; required when rejected.")
    record_id: NonEmptyStr | None = Field(None, description="Record written when applied (tombstone: the target).")
    target_id: NonEmptyStr | None = Field(None, description="Superseded or tombstoned record.")


class _ProposalFields(Strict):
    id: Identifier = Field(description="Packet id; equals the file name without `.md`.")
    kind: Literal["proposal"] = Field(description="Always `proposal` for a packet.")
    profile: Literal["memzoi"] = Field(description="Format profile; exactly `memzoi`.")
    type: MemoryType = Field(description="Type of the proposed memory.")
    lane: Lane = Field(description="Lane of the proposed memory.")
    title: NonEmptyStr = Field(description="Title of the proposed memory.")
    description: NonEmptyStr = Field(description="Summary line of the proposed memory.")
    proposal: ProposalBlock = Field(description="Requested action and proposer.")
    scope: ScopeBlock = Field(description="Scope of the proposed memory.")
    tags: list[str] | None = Field(None, description="Tags for the new record.")
    timestamp: Timestamp = Field(description="Creation instant of the proposed memory, RFC 3339.")
    created_by: str | None = Field(None, description="Author of the packet.")
    sources: list[SourceRef] | None = Field(None, description="Evidence: paths, URLs or refs.")
    supersedes: list[NonEmptyStr] | None = Field(None, description="Record ids replaced (supersede: exactly one).")
    sensitivity: SensitivityName = Field(description="Only `repo-safe` packets can be applied to the repository.")
    content_class: ContentClass = Field(description="Only `general_repo_knowledge` can be applied.")
    capture: dict[str, Any] | None = Field(None, description="Compact capture provenance.")
    lineage: Lineage | None = Field(None, description="Renewal or session-successor link.")
    retention: RetentionFacts = Field(description="Retention facts of the proposed memory.")
    origin: Origin = Field(description="Origin; proposals use route `repository_proposal`.")


class PendingProposal(_ProposalFields):
    """A packet under ``.memzoi/proposals/pending/``: ``status: proposed`` and no resolution."""

    status: Literal["proposed"] = Field(description="`proposed` while pending.")


class ResolvedProposal(_ProposalFields):
    """A packet under ``.memzoi/proposals/resolved/{applied,rejected}/`` with its resolution."""

    status: Literal["applied", "rejected"] = Field(description="Final status.")
    resolution: Resolution = Field(description="Who resolved it, when, and the outcome.")


Violation = tuple[str, tuple[Any, ...], str]


def proposal_rule_violations(data: dict[str, Any]) -> list[Violation]:
    """Action-shape and resolution rules (``validate_proposal_action_shape``, ``validate_proposal_resolution``).

    ``data`` is the frontmatter as plain Python. Returns ``(code, location, message)`` triples; ``location`` is a
    key path used to anchor the finding.
    """
    return _action_shape(data) + _resolution(data) + _sources(data)


def _action_shape(data: dict[str, Any]) -> list[Violation]:
    """Memzoi's ``validate_proposal_action_shape``: what a create, supersede or tombstone may and must name."""
    out: list[Violation] = []
    raw_block = data.get("proposal")
    block: dict[str, Any] = raw_block if isinstance(raw_block, dict) else {}
    action = block.get("action")
    target = block.get("target")
    reason = block.get("reason")
    supersedes = data.get("supersedes") or []
    supersedes = supersedes if isinstance(supersedes, list) else [supersedes]
    shape = "invalid_proposal_shape"
    if action == "create":
        if target:
            out.append((shape, ("proposal", "target"), "create proposals cannot name a target; remove proposal.target"))
        if supersedes:
            out.append(
                (
                    shape,
                    ("supersedes",),
                    "create proposals cannot supersede a record; use `supersedes: []` "
                    "or change the action to supersede",
                )
            )
    elif action == "supersede":
        if len(supersedes) != 1:
            out.append((shape, ("supersedes",), "supersede proposals must list exactly one record id in supersedes"))
        if target:
            out.append(
                (
                    shape,
                    ("proposal", "target"),
                    "supersede proposals name their target in supersedes, not proposal.target; remove proposal.target",
                )
            )
        if not reason:
            out.append((shape, ("proposal",), "supersede proposals must include proposal.reason"))
    elif action == "tombstone":
        if not target:
            out.append((shape, ("proposal",), "tombstone proposals must name the record in proposal.target"))
        if supersedes:
            out.append((shape, ("supersedes",), "tombstone proposals cannot list supersedes; use `supersedes: []`"))
        if not reason:
            out.append((shape, ("proposal",), "tombstone proposals must include proposal.reason"))
    return out


def _resolution(data: dict[str, Any]) -> list[Violation]:
    """Memzoi's ``validate_proposal_resolution``: a pending packet has no resolution, a resolved one a matching one."""
    status = data.get("status")
    resolution = data.get("resolution")
    bad = "invalid_resolution"
    if status == "proposed" and resolution is not None:
        return [(bad, ("resolution",), "pending packets (status: proposed) cannot include a resolution")]
    if status not in ("applied", "rejected"):
        return []
    if not isinstance(resolution, dict):
        return [(bad, ("status",), "resolved packets must include resolution metadata")]
    out: list[Violation] = []
    outcome = resolution.get("outcome")
    if outcome is not None and outcome != status:
        out.append((bad, ("resolution", "outcome"), f"resolution.outcome `{outcome}` does not match status `{status}`"))
    if status == "applied" and not resolution.get("record_id"):
        out.append((bad, ("resolution",), "applied packets need resolution.record_id"))
    if status == "rejected":
        if not resolution.get("reason"):
            out.append((bad, ("resolution",), "rejected packets need resolution.reason"))
        if resolution.get("record_id"):
            out.append((bad, ("resolution", "record_id"), "rejected packets cannot name a record_id"))
    return out


def _sources(data: dict[str, Any]) -> list[Violation]:
    """Each ``sources`` entry names a non-empty path, url or ref."""
    return [
        ("invalid_value", ("sources", i), "each source needs a non-empty path, url or ref")
        for i, src in enumerate(data.get("sources") or [])
        if isinstance(src, dict) and not any(isinstance(v, str) and v.strip() for v in src.values())
    ]
