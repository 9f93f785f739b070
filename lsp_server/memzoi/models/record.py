"""The canonical record frontmatter (``OkfFrontmatter``, Memzoi current profile, reference §1.4)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

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
    Strict,
    Timestamp,
    Visibility,
)


class RecordFrontmatter(Strict):
    """Frontmatter of ``.memzoi/records/<concept-id>.md``. Unknown keys are errors (``deny_unknown_fields``).

    The record id used everywhere is the path concept id: Memzoi keys the record by its path even when ``id``
    differs (``id_path_mismatch`` warns), and its renderers always write ``id`` from the path. Source: ``okf.rs``
    ``OkfFrontmatter`` at Memzoi commits 164dcd6b / 77169aa8.
    """

    id: Identifier = Field(
        description="Record id; write the path below `.memzoi/records/` without `.md` (Memzoi "
        "keys the record by that path)."
    )
    kind: Literal["memory"] = Field(description="Always `memory` for a record.")
    profile: Literal["memzoi"] = Field(description="Format profile; the current profile is exactly `memzoi`.")
    type: MemoryType = Field(description="What kind of knowledge this is (fact, decision, procedure, …).")
    lane: Lane = Field(description="Memory lane; decides which retention facts apply.")
    title: NonEmptyStr = Field(description="One-line title; a body H1, when present, must equal it.")
    description: str | None = Field(None, description="Summary line; Memzoi writes the first body line here.")
    scope: ScopeKind = Field(description="Scope kind; only `repo` (or `project` with the configured id) is repo-safe.")
    scope_id: NonEmptyStr | None = Field(None, description="Scope identifier, e.g. the project id.")
    visibility: Visibility = Field(description="Who may see it; `repo` or `public` for the git plane.")
    content_class: ContentClass = Field(
        description="Reviewed content class; only `general_repo_knowledge` may be committed."
    )
    status: RecordStatus = Field(description="Lifecycle status; only `active` records are current assertions.")
    confidence: Confidence = Field(description="Confidence, a number from 0 to 1.")
    source: NonEmptyStr | None = Field(
        None, description="Evidence kind: human, cli, issue, commit, test, path, url, ref."
    )
    source_ref: NonEmptyStr | None = Field(None, description="Evidence locator (URL, path, proposal id, …).")
    proposal_id: NonEmptyStr | None = Field(None, description="Review lineage: the proposal this record came from.")
    timestamp: Timestamp = Field(description="Creation instant, RFC 3339 with timezone.")
    updated: Instant | None = Field(None, description="Last update instant; defaults to `timestamp`.")
    applies_to: list[RelativePath] | None = Field(None, description="Repository-relative paths the memory applies to.")
    tags: list[str] | None = Field(None, description="Free-form tags.")
    supersedes: NonEmptyStr | None = Field(None, description="Id of the record this one replaces (a single id).")
    retention: RetentionFacts = Field(description="Retention facts; `{}` for semantic and procedural lanes.")
    origin: Origin = Field(description="Origin key and route.")
    lineage: Lineage | None = Field(None, description="Renewal or session-successor link.")
    capture: dict[str, Any] | None = Field(None, description="Compact capture provenance (evidence and review).")
    materialization: dict[str, Any] | None = Field(
        None, description="Attestation of a reviewed materialization decision (revision of the semantic content)."
    )
