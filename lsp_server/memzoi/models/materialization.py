"""Materialization artifacts: candidate, plan and decision JSON (Memzoi ``materialization.rs@164dcd6b``,
reference §5). All are ``deny_unknown_fields``; identities are ``blake3:`` + 64 lower-case hex digits computed
with domain-separated BLAKE3 over RFC 8785 JSON (:mod:`memzoi.lifecycle.materialize`)."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import Field

from ..judge.attestation_block import Blake3Id, RevisionRef
from .common import (
    Confidence,
    ContentClass,
    Identifier,
    Instant,
    Lane,
    Lineage,
    MemoryType,
    NonEmptyStr,
    Origin,
    RecordStatus,
    RelativePath,
    RetentionFacts,
    ScopeKind,
    SensitivityName,
    Strict,
    Timestamp,
    Visibility,
)

Action = Literal["create", "update", "supersede", "tombstone"]


class PriorAbsent(Strict):
    """The output file must not exist yet."""

    kind: Literal["absent"] = Field(description="`absent`: no prior record.")


class PriorRevision(Strict):
    """The output file must hold a record with this canonical revision."""

    kind: Literal["revision"] = Field(description="`revision`: the prior record's revision.")
    revision: RevisionRef = Field(description="Expected canonical revision of the prior record.")


ExpectedPrior = Annotated[PriorAbsent | PriorRevision, Field(discriminator="kind")]


class Target(Strict):
    """Counterpart of a supersede or tombstone."""

    record_id: NonEmptyStr = Field(description="Id of the superseded or tombstoned record.")
    expected_revision: RevisionRef = Field(description="Its revision when the candidate was made.")


class Draft(Strict):
    """The record content under review."""

    memory_type: MemoryType = Field(description="Record type.")
    lane: Lane = Field(description="Memory lane.")
    scope_kind: ScopeKind = Field(description="Scope kind; `repo` for the git plane.")
    scope_id: NonEmptyStr | None = Field(None, description="Scope id; none for repository scope.")
    visibility: Visibility = Field(description="`repo` for the git plane.")
    title: NonEmptyStr = Field(description="Title, trimmed.")
    body: NonEmptyStr = Field(description="Body, non-empty.")
    tags: list[NonEmptyStr] = Field(description="Tags.")
    source_kind: NonEmptyStr | None = Field(None, description="Evidence kind.")
    source_ref: NonEmptyStr | None = Field(None, description="Evidence locator.")
    sensitivity: SensitivityName = Field(description="`repo-safe` for the git plane.")
    content_class: ContentClass = Field(description="`general_repo_knowledge` for the git plane.")
    confidence: Confidence = Field(description="Confidence, 0 to 1.")


class CandidateRecord(Strict):
    """The record a candidate materializes."""

    concept_id: Identifier = Field(description="Record id = path below `.memzoi/records/` without `.md`.")
    draft: Draft = Field(description="Record content.")
    status: RecordStatus = Field(description="`active` (create/update/supersede) or `tombstoned`.")
    applies_to: list[RelativePath] = Field(description="Repository-relative paths.")
    created: Timestamp = Field(description="Creation instant (the record's `timestamp`).")
    updated: Instant | None = Field(None, description="Update instant.")
    supersedes_id: NonEmptyStr | None = Field(None, description="Superseded record (supersede only).")
    retention: RetentionFacts = Field(description="Retention facts.")
    origin: Origin = Field(description="Origin key and route.")
    lineage: Lineage | None = Field(None, description="Renewal or session-successor link.")
    proposal_id: NonEmptyStr | None = Field(None, description="Review lineage.")
    capture: dict[str, Any] | None = Field(None, description="Capture provenance.")


class MaterializationCandidate(Strict):
    """``memzoi/repository-materialization-candidate``."""

    schema_: Literal["memzoi/repository-materialization-candidate"] = Field(alias="schema", description="Schema.")
    candidate_id: Blake3Id = Field(description="Domain-separated identity of everything else in the candidate.")
    destination: Literal["repo"] = Field(description="Always `repo`.")
    action: Action = Field(description="Materialized action.")
    output_path: str = Field(description="`.memzoi/records/<concept_id>.md`.")
    expected_prior_revision: ExpectedPrior = Field(description="What the output file must hold before.")
    target: Target | None = Field(description="Counterpart (supersede/tombstone), else null.")
    reason: str | None = Field(description="Why (supersede/tombstone), else null.")
    record: CandidateRecord = Field(description="The record.")


class PlanOutput(Strict):
    """One output of a plan."""

    path: NonEmptyStr = Field(description="Output path relative to the project root.")
    record_id: NonEmptyStr = Field(description="Record id written there.")
    action: Action = Field(description="Action.")
    expected_prior_revision: ExpectedPrior = Field(description="What the file must hold before.")
    intended_semantic_revision: RevisionRef = Field(description="Revision the written record will have.")
    role: Literal["canonical_record", "lifecycle_counterpart"] = Field(description="Role of the output.")


class MaterializationPlan(Strict):
    """``memzoi/repository-materialization-plan``."""

    schema_: Literal["memzoi/repository-materialization-plan"] = Field(alias="schema", description="Schema.")
    plan_id: Blake3Id = Field(description="Identity of the candidate id and outputs.")
    candidate_id: Blake3Id = Field(description="Candidate this plan derives from.")
    outputs: list[PlanOutput] = Field(min_length=1, description="Outputs (a direct candidate has exactly one).")


class DecisionPolicy(Strict):
    """The write-safety policy a decision was made under."""

    policy_id: Literal["memzoi/repository-write-safety-v1"] = Field(description="Policy id.")
    safety_contract: Literal["memzoi/repository-write-safety-v1"] = Field(description="Safety contract.")


class MaterializationDecision(Strict):
    """``memzoi/repository-materialization-decision``: the explicit human decision to write a plan."""

    schema_: Literal["memzoi/repository-materialization-decision"] = Field(alias="schema", description="Schema.")
    decision_id: Blake3Id = Field(description="Identity of the decision (rendered bytes are not part of it).")
    plan_id: Blake3Id = Field(description="Decided plan.")
    candidate_id: Blake3Id = Field(description="Candidate of the plan.")
    decision_at: Instant = Field(description="Decision time, RFC 3339.")
    policy: DecisionPolicy = Field(description="Policy and safety contract.")
    authorization_capability: Literal["explicit_cli"] = Field(description="How the decision was authorized.")
    outputs: list[PlanOutput] = Field(min_length=1, description="Equals the plan outputs.")
