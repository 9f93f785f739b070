"""The shapes of the agent tools' successful results: the models whose JSON Schemas are the tools'
``outputSchema`` (MCP 2025-06-18: a successful result's ``structuredContent`` conforms to it). They describe what
the handlers of :mod:`memzoi.agent.tools` return (:mod:`memzoi.agent.search`, :mod:`memzoi.agent.recall`,
:mod:`memzoi.agent.resident_read`, the proposal functions); they are never used to build a result. Objects admit
more keys than they list, so a result may grow without breaking a client; every listed key is required unless
marked optional. An error result (``isError``) is ``{"error": {"code", "message", …}}`` and is not covered
(clients validate successful results only)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

# Built when a schema is first asked for (the server's tools/list), not at import: nothing validates with them.
_OPEN = ConfigDict(extra="allow", defer_build=True)
Str = str | None


class _Out(BaseModel):
    model_config = _OPEN


class SearchHit(_Out):
    """One search result."""

    kind: Literal["record", "local", "proposal"] = Field(
        description="A repository record, a private local record or a pending proposal."
    )
    id: str = Field(description="Its id (get_memory takes it).")
    path: Str = Field(description="Repository-relative file; null for a private local record.")
    title: str = Field(description="Its title, or `[withheld: codes]` when unsafe.")
    type: Str = Field(description="Memzoi memory type.")
    lane: Str = Field(description="Memzoi lane.")
    status: Str = Field(description="Record status (active, superseded, tombstoned …) or proposal status.")
    current: bool = Field(description="Whether it is a current assertion now (active and within retention).")
    admitted: bool = Field(
        True,
        description="Optional: false for a repository record the repository does not admit now (ignored and "
        "untracked, another project's scope, a refused path: see `memzoi check`); not usable memory.",
    )
    excerpt: Str = Field(description="The matching text around the query's words; null when unsafe.")
    unsafe: list[str] = Field(description="Finding codes that make its text unfit for a prompt; empty when safe.")
    reasons: list[str] = Field(
        default_factory=list,
        description="Optional: why it is not usable memory (unsafe codes, or the codes `memzoi check` refuses it "
        "with now); its title and excerpt are then withheld. Empty when usable.",
    )
    tags: list[str] = Field(description="Its tags.")
    provenance: Literal["git", "runtime"] = Field(
        description="`git`: the repository; `runtime`: private local memory (Memzoi's recall provenance)."
    )
    score: float = Field(ge=0, le=1, description="Relevance from 0 to 1, higher is better.")
    superseded_by: list[str] = Field(
        default_factory=list,
        description="Optional, on repository records: the ids "
        "of the records that replaced it (get_memory them); empty when none.",
    )


class SearchOutput(_Out):
    """``search_memory``."""

    query: str = Field(description="The query as searched (anything secret in it redacted).")
    mode: Literal["natural", "all_words", "phrase"] = Field(description="The match mode used.")
    results: list[SearchHit] = Field(description="Best first: active current records, then by score.")


class GetOutput(_Out):
    """``get_memory`` (a record adds ``status``, ``scope``, ``applies_to``, ``admitted``; a proposal ``action`` and
    ``targets``)."""

    kind: Literal["record", "proposal", "local"] = Field(description="Which kind of memory the id named.")
    id: str = Field(description="Its id.")
    title: str = Field(description="Its title, or `[withheld: reasons]` when withheld.")
    body: str = Field(description="Its text (at most 256 KiB of UTF-8), or `[withheld: reasons]` when withheld.")
    unsafe: list[str] = Field(description="Finding codes that make its text unfit for a prompt; empty when safe.")
    reasons: list[str] = Field(
        default_factory=list,
        description="Optional: why it is not usable memory (its unsafe codes, or the codes `memzoi check` refuses "
        "it with now); empty when usable.",
    )
    withheld: bool = Field(
        False, description="Optional: true when the title and text were withheld (it has reasons; not include_unsafe)."
    )
    truncated: bool = Field(False, description="Optional: true when the text was cut at 256 KiB of UTF-8.")
    body_bytes: int | None = Field(None, description="Optional (truncated): the text's full size in UTF-8 bytes.")
    rest: Str = Field(None, description="Optional (truncated): where to read the text whole.")
    provenance: dict[str, Any] = Field(
        default_factory=dict,
        description="Optional: source, proposal, "
        "attestation, retention, current assertion, superseded-by (records); "
        "proposed_at, sensitivity (proposals). Local records carry these at the top.",
    )


class Withheld(_Out):
    """A record left out of a pack or precheck."""

    id: str = Field(description="The record's id.")
    reasons: list[str] = Field(description="The finding or refusal codes that kept it out (never its text).")


class PackEntry(_Out):
    """One record of a context pack."""

    id: str = Field(description="The record's id.")
    title: str = Field(description="Its title.")
    type: Str = Field(description="Memzoi memory type.")
    lane: Str = Field(description="Memzoi lane.")
    path: str = Field(description="Its file, repository-relative.")
    path_score: int = Field(
        ge=0,
        le=5,
        description="Best applies_to match of the task's paths (Memzoi: exact 5, "
        "ancestor 4, descendant 3, /** 2; 0 none).",
    )
    binding: Str = Field(description="The applies_to entry that matched; null when matched by text only.")
    tokens: int = Field(ge=0, description="Estimated tokens of `text`.")
    body: str = Field(description="The record's text.")
    provenance: str = Field(description="One provenance line.")
    text: str = Field(description="The entry as pasted into a prompt (title, text, provenance).")


class PackOutput(_Out):
    """``build_context_pack``."""

    task: str = Field(description="The task as given.")
    paths: list[str] = Field(description="The task's paths, repository-relative.")
    token_budget: int = Field(description="The budget, in estimated tokens.")
    tokens_used: int = Field(description="Estimated tokens of the entries.")
    token_counting: str = Field(description="How tokens are estimated.")
    records: list[PackEntry] = Field(description="The entries, best first.")
    withheld: list[Withheld] = Field(description="Relevant records left out as unsafe or not admitted.")
    omitted: list[str] = Field(description="Ids of relevant records that did not fit the budget.")


class PrecheckWarning(_Out):
    """One warning of a precheck (Memzoi's precheck shape)."""

    id: str = Field(description="`warn_<record id>`.")
    record_id: str = Field(description="The record's id.")
    message: str = Field(description="Title and text of the record.")
    severity: Literal["high", "warning"] = Field(description="`high` for a risk, else `warning`.")
    path_score: int = Field(ge=1, le=5, description="How well its applies_to covers the path.")
    suggested_next_step: str = Field(description="What to do before editing.")
    citations: list[dict[str, Any]] = Field(description="The records cited: record_id, type, path (the binding), file.")


class PrecheckOutput(_Out):
    """``precheck_path``."""

    path: str = Field(description="The path, repository-relative.")
    warnings: list[PrecheckWarning] = Field(description="Best first, at most 25.")
    withheld: list[Withheld] = Field(description="Matching records left out as unsafe or not admitted.")


class PendingProposal(_Out):
    """A pending packet as every listing shows it."""

    id: str = Field(description="The proposal's id.")
    path: str = Field(description="Its file, repository-relative.")
    action: Str = Field(description="create, supersede or tombstone.")
    target: Str = Field(description="The record a supersede or tombstone names.")
    title: Str = Field(description="Its title; null when withheld.")
    can_apply: bool = Field(description="Whether a human can apply it now.")
    blocked_by: list[str] = Field(description="Codes of what blocks applying it.")


class LocalCandidate(_Out):
    """A pending private local-memory candidate."""

    id: str = Field(description="The candidate's id.")
    title: str = Field(description="Its title.")
    confidence: float = Field(description="The proposer's confidence, 0 to 1.")


class ResidentCandidate(_Out):
    """A resident-memory candidate awaiting review."""

    id: str = Field(description="The candidate's id.")
    scope: Literal["global", "project"] = Field(description="Which resident file.")
    action: Literal["add", "replace", "remove"] = Field(description="What it changes.")
    reason: str = Field(description="Why it was proposed.")


class Rejected(_Out):
    """A rejected proposal."""

    id: str = Field(description="The proposal's id.")
    fingerprint: Str = Field(description="BLAKE3 of the trimmed body (Memzoi's content hash); null when redacted.")
    reason: Str = Field(description="The reviewer's reason.")


class PendingOutput(_Out):
    """``list_pending``."""

    proposals: list[PendingProposal] = Field(description="Pending proposal packets.")
    local_candidates: list[LocalCandidate] = Field(description="Pending private local-memory candidates.")
    resident_candidates: list[ResidentCandidate] = Field(description="Pending resident-memory candidates.")
    rejected: list[Rejected] = Field(
        default_factory=list, description="Optional (include_resolved): rejected proposals, newest decision first."
    )
    warnings: list[str] = Field(
        default_factory=list, description="Each part that could not be read (then listed empty) and why."
    )


class ResidentFile(_Out):
    """One resident file."""

    scope: Literal["global", "project"] = Field(
        description="`global`: the user's MEMORY.md; `project`: .zuno/RULES.md."
    )
    path: str = Field(description="The file.")
    cap: int = Field(description="Its cap, in characters (Zuno).")
    used: int = Field(description="Characters used.")
    usage: str = Field(description="Usage as Zuno shows it.")
    entries: list[str] = Field(description="Its entries, in order.")
    error: Str = Field(description="Why the file cannot be read; null when it can.")


class ResidentOutput(_Out):
    """``get_resident_memory``."""

    files: list[ResidentFile] = Field(description="Both resident files, global first.")
    pending: list[ResidentCandidate] = Field(description="Candidates awaiting review.")
    warnings: list[str] = Field(
        default_factory=list, description="What could not be read as configured (the files were read anyway)."
    )


class ProposeOutput(_Out):
    """``propose_memory``: a repository proposal (``proposal_id``, ``path`` and the ledgered change) or a local
    candidate (``candidate``, and ``change`` when the promotion policy applied it)."""

    destination: Literal["repo", "local"] = Field(description="Where the proposal went.")
    proposal_id: str = Field("", description="Optional (repo): the pending proposal's id.")
    path: str = Field("", description="Optional (repo): the packet, repository-relative.")
    change_id: str = Field("", description="Optional (repo): the ledgered change that wrote it.")
    candidate: dict[str, Any] = Field(default_factory=dict, description="Optional (local): the candidate.")
    change: dict[str, Any] | None = Field(None, description="Optional (local): the change that applied it.")


class ProposeResidentOutput(_Out):
    """``propose_resident_memory``: the candidate (every field of Zuno's candidate) and what happened to it."""

    id: str = Field(description="The candidate's id.")
    scope: Literal["global", "project"] = Field(description="Which resident file.")
    action: Literal["add", "replace", "remove"] = Field(description="What it changes.")
    status: str = Field(description="pending, applied, rejected … (Zuno's candidate status).")
    inserted: bool = Field(description="False when the same change was already recorded.")
    promoted: bool = Field(description="Whether the promotion policy applied it.")
    held: Str = Field(description="Why it was held for review, if it was.")


class TurnOutput(_Out):
    """``record_resident_turn``: the admission of the delivered message and whether reflection is off."""

    state: str = Field(
        description="started (a review job was created), not_scheduled, already_recorded or "
        "not_counted (an interrupted turn)."
    )
    ordinal: int | None = Field(description="The message's place in the session's count; null when not counted.")
    count: int = Field(description="The session's delivered messages so far.")
    interval: int = Field(description="The nudge_interval used.")
    job: dict[str, Any] | None = Field(description="The review job started for it (or before), if any.")
    due: bool = Field(description="Whether a review is due (a job is running for it).")
    disabled: str | None = Field(description="Why reflection is off, or null when it is configured.")
