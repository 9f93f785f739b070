"""The short sentence every finding's message starts with (:data:`HEADLINES`), so that a one-line view (Error Lens,
Neovim's virtual text, a terminal's ``path:line:col: code message``) shows what is wrong before the details, the
offending key or value and the fix that follow it. :func:`headed` puts it in front of a message that does not
already start with a short sentence of its own."""

from __future__ import annotations

#: code -> the headline of its findings (one short sentence).
HEADLINES: dict[str, str | None] = {
    # framing and YAML
    "invalid_encoding": "Not valid UTF-8 text.",
    "bom": "Byte order mark at the start.",
    "frontmatter_missing": "No YAML frontmatter.",
    "frontmatter_unclosed": "Frontmatter not closed.",
    "yaml_syntax": "YAML syntax error.",
    "frontmatter_not_mapping": "Frontmatter is not a mapping.",
    "duplicate_key": "Duplicate key.",
    "non_string_key": "Key is not a string.",
    "yaml_alias": "YAML anchor or alias.",
    "yaml_tab_indent": "Tab indentation.",
    "file_too_large": "File too large.",
    # schema
    "unknown_key": "Unknown key.",
    "missing_key": "Missing required key.",
    "invalid_value": "Invalid value.",
    "invalid_timestamp": "Invalid timestamp.",
    "invalid_identifier": "Invalid identifier.",
    "id_path_mismatch": "Id differs from the path.",
    "title_h1_mismatch": "Heading differs from the title.",
    "empty_body": "Empty body.",
    "invalid_retention": "Invalid retention.",
    "invalid_origin": "Invalid origin.",
    "unsafe_path": "Unsafe path.",
    "invalid_proposal_shape": "Invalid proposal shape.",
    "invalid_resolution": "Invalid resolution.",
    "reserved_file": "Reserved file, not a record.",
    "legacy_profile": "Legacy profile.",
    "yaml_nesting_limit": "Nested too deeply.",
    "internal_error": "Internal error.",
    "invalid_config": "Invalid configuration.",
    "invalid_session_end": "Invalid session-end input.",
    "invalid_import_manifest": "Invalid import manifest.",
    # the git-plane gate
    "sensitivity_not_repo_safe": "Sensitivity not repo-safe.",
    "scope_not_repository": "Scope is not the repository.",
    "scope_project_mismatch": "Project scope of another project.",
    "visibility_not_repository_safe": "Visibility narrower than the repository.",
    "unknown_content_class": "Unknown content class.",
    "raw_transcript": "Raw transcript.",
    "private_personal_data": "Private personal data.",
    "activity_history": "Activity history.",
    "private_endpoint": "Private endpoint.",
    "undisclosed_vulnerability": "Undisclosed vulnerability.",
    "private_evidence_unminimized": "Private evidence not minimized.",
    "temporary_task_state": "Temporary task state.",
    "local_only_state": "Local-only state.",
    "candidate_too_large": "Too large for the git plane.",
    "unsafe_output_path": "Unsafe output path.",
    "candidate_blocked": "Candidate blocked.",
    "repo_subset_blocked": "Repo candidates blocked.",
    # content detectors
    "credential_token": "Credential in the text.",
    "private_key": "Private key in the text.",
    "authorization_header": "Authorization header in the text.",
    "credentialed_url": "URL with credentials.",
    "connection_string": "Connection string with credentials.",
    "session_token": "Session token in the text.",
    "cloud_credential": "Cloud credential in the text.",
    "environment_secret": "Secret assignment in the text.",
    "high_entropy_value": "High-entropy value.",
    "prompt_injection": "Instruction-like text.",
    "invisible_character": "Invisible character.",
    "pii_detected": "Personal data.",
    "transcript_detected": "Transcript-like text.",
    # attestation and admission
    "materialization_metadata": "Invalid materialization block.",
    "stale_attestation": "Edited after it was reviewed.",
    "ignored_untracked": "Ignored by git.",
    "review_visibility": "Review not visible in git.",
    "canonical_path": "Not a canonical record path.",
    # lineage and lifecycle
    "dangling_reference": "Reference to a missing record.",
    "lifecycle_inconsistent": "Inconsistent lifecycle.",
    "proposal_target_inactive": "Target is not active.",
    "record_exists": "Its record already exists.",
    "proposal_target_stale": "Target changed since proposed.",
    "proposal_cross_scope": "Target in another scope.",
    "duplicate_content": "Duplicate content.",
    "duplicate_identity": "Proposal id used twice.",
    "hand_edit_conflict": "Hand edit in the way.",
    "title_too_long": "Title too long for a file name.",
    # retention and the ledger
    "retention_query_only": "Past its retention boundary.",
    "ledger_uncertain": "Interrupted change.",
    "ledger_drift": "Edited after the last change.",
    # resident memory
    "resident_cap_usage": None,  # its message is the usage itself (`[80% — 80/100 chars]`), shown as a lens
    "resident_over_cap": "Over the resident cap.",
    "resident_drift": "Resident file drifted.",
    "resident_hand_edit": "Entry edited by hand.",
    "resident_uncertain": "Interrupted resident change.",
}

#: A message whose first sentence is at most this long, and starts with a capital, already has its headline.
_OWN = 100


def headed(code: str, message: str) -> str:
    """``message`` with the headline of ``code`` in front (``"Reference to a missing record. `supersedes` names
    …"``; the message's own first letter capitalised, as it now starts a sentence), unless it already says it:
    it starts with the headline's words (``unknown key `reviewer`: …``), or with a short sentence of its own (a
    capital, a full stop within :data:`_OWN` characters). A code without a headline keeps its message."""
    head = HEADLINES.get(code)
    if not head or not message or message.startswith(head):
        return message
    if message.casefold().startswith(head[:-1].casefold()):
        return message
    stop = message.find(". ")
    if message[0].isupper() and (0 < stop < _OWN or (stop < 0 and len(message) < _OWN and message.endswith("."))):
        return message
    if message[0].islower():
        message = message[0].upper() + message[1:]
    return f"{head} {message}"


def detail(code: str, message: str) -> str:
    """``message`` without the headline :func:`headed` put in front (what a listing that names the code already,
    such as an apply refusal, shows), its first letter as the finding's author wrote it where that can be told."""
    head = HEADLINES.get(code)
    if not head or not message.startswith(head + " "):
        return message
    rest = message[len(head) + 1 :]
    return rest[0].lower() + rest[1:] if len(rest) > 1 and rest[0].isupper() and rest[1].islower() else rest
