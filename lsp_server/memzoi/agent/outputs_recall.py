"""The shapes of the recall and planning tools' successful results (:mod:`memzoi.agent.tools_recall`): the models
whose JSON Schemas are their ``outputSchema``, as :mod:`memzoi.agent.outputs` does for the first table. Objects
admit more keys than they list; every listed key is required unless marked optional."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from .outputs import Withheld

Str = str | None


class _Out(BaseModel):
    model_config = ConfigDict(extra="allow", defer_build=True)  # built when a schema is asked for (.outputs)


class Citation(_Out):
    """The record a precheck warning cites, with its plane."""

    record_id: str = Field(description="The record's id.")
    type: str = Field(description="Its Memzoi type (risk, warning, failed_attempt).")
    provenance: Literal["git"] = Field(description="The plane it came from: always `git` (repository records).")
    destination: Literal["repo"] = Field(description="Its destination: always `repo`.")
    path: Str = Field(description="The applies_to binding that matched (or its first binding for a text match).")
    file: str = Field(description="Its file, repository-relative.")


class TextWarning(_Out):
    """One warning of an action or command precheck (Memzoi's precheck shape)."""

    id: str = Field(description="`warn_<record id>`.")
    record_id: str = Field(description="The record's id.")
    message: str = Field(description="Title and text of the record.")
    severity: Literal["high", "warning"] = Field(description="`high` for a risk, else `warning`.")
    path_score: int = Field(ge=0, le=5, description="How well its applies_to covers the path; 0 for a text match only.")
    lexical: bool = Field(description="Whether the action or command text matched it.")
    suggested_next_step: str = Field(description="What to do before going on.")
    citations: list[Citation] = Field(description="The record cited.")


class TextPrecheckOutput(_Out):
    """``precheck_action`` and ``precheck_command``."""

    path: Str = Field(description="The path, repository-relative; null when none was given.")
    action: Str = Field(description="The action checked; null for a command precheck.")
    command: Str = Field(description="The command checked; null for an action precheck.")
    warnings: list[TextWarning] = Field(description="Best first, at most 25.")
    withheld: list[Withheld] = Field(description="Matching records left out as unsafe or not admitted.")


class RetentionDecision(_Out):
    """Memzoi's ``RetentionDecision``."""

    state: Literal["current", "query_only"] = Field(description="`query_only` from the boundary on.")
    effective_boundary: Str = Field(description="UTC RFC 3339 boundary; null without an age limit.")
    reason: str = Field(description="Why the boundary is where it is (Memzoi's reason).")


class ExpiryOutput(_Out):
    """``inspect_memory_expiry``: Memzoi's ``ExpiryDiagnostic``."""

    record: dict[str, Any] = Field(description="The record in Memzoi's runtime record keys (provenance git).")
    evaluated_at: str = Field(description="The instant evaluated, UTC RFC 3339.")
    retention: RetentionDecision = Field(description="The retention decision at that instant.")
    current_assertion: bool = Field(description="Whether it is a current assertion.")
    exclusions: list[dict[str, Any]] = Field(description="Current-assertion exclusions, tagged by `kind`.")
    excluded_from_normal_reads: bool = Field(description="Whether search, context and precheck leave it out.")
    reason: str = Field(description="Memzoi's sentence saying why.")


class MaintenanceOutput(_Out):
    """``plan_maintenance``: Memzoi's immutable ``memzoi/maintenance-plan``."""

    schema_: Literal["memzoi/maintenance-plan"] = Field(alias="schema", description="The plan schema.")
    plan_id: str = Field(description="`blake3:` identity of the plan.")
    evaluated_at: str = Field(description="The evaluation instant.")
    not_after: str = Field(description="Until when the plan is valid.")
    records: list[dict[str, Any]] = Field(description="Record snapshots (revision, digests, retention).")
    findings: list[dict[str, Any]] = Field(description="Duplicates, contradictions (full sets), stale, expired.")
    action_groups: list[dict[str, Any]] = Field(description="Action candidates; evidence, not permission.")
    summary: dict[str, Any] = Field(description="Counts per finding kind.")


class CaptureOutput(_Out):
    """``plan_capture``: a repository-safe ``memzoi/capture-plan``."""

    schema_: str = Field(alias="schema", description="The plan schema (`memzoi/capture-plan`).")
    plan_id: str = Field(description="The plan's identity.")
    status: str = Field(description="`ready` or `blocked`.")
    data_class: str = Field(description="`repo_safe` or `blocked` (private plans are denied).")
    candidates: list[dict[str, Any]] = Field(description="The typed sections with evidence and their action.")
