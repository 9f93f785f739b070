"""Findings: the diagnostic codes of SPEC §4, their default severities, and the finding value type.

A :class:`Finding` is what every analyser produces. Its span is a half-open ``[start, end)`` range of
Python string offsets (code points) into the exact text it was computed from; only the language server
converts spans to client positions. Messages never contain the text a detector matched.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field, replace
from typing import Any

from .headlines import headed
from .utf8 import encodable, storable, storable_tree


class Severity(enum.IntEnum):
    """Diagnostic severity; values match LSP's ``DiagnosticSeverity`` so the server can pass them through."""

    ERROR = 1
    WARNING = 2
    INFORMATION = 3
    HINT = 4

    @property
    def label(self) -> str:
        """Lower-case name used by ``memzoi check`` output (``error|warning|information|hint``)."""
        return self.name.lower()


E, W, I = Severity.ERROR, Severity.WARNING, Severity.INFORMATION

#: Every diagnostic code with its default severity and group (SPEC §4). Codes that the current code base
#: does not emit yet are listed too, so settings that override them validate.
CODES: dict[str, tuple[Severity, str]] = {
    # framing and YAML
    "invalid_encoding": (E, "framing"),
    "bom": (W, "framing"),
    "frontmatter_missing": (E, "framing"),
    "frontmatter_unclosed": (E, "framing"),
    "yaml_syntax": (E, "framing"),
    "frontmatter_not_mapping": (E, "framing"),
    "duplicate_key": (E, "framing"),
    "non_string_key": (E, "framing"),
    "yaml_alias": (E, "framing"),
    "yaml_tab_indent": (E, "framing"),
    "file_too_large": (W, "framing"),
    # schema
    "unknown_key": (E, "schema"),
    "missing_key": (E, "schema"),
    "invalid_value": (E, "schema"),
    "invalid_timestamp": (E, "schema"),
    "invalid_identifier": (E, "schema"),
    "id_path_mismatch": (W, "schema"),
    "title_h1_mismatch": (E, "schema"),
    "title_too_long": (E, "schema"),
    "empty_body": (E, "schema"),
    "invalid_retention": (E, "schema"),
    "invalid_origin": (E, "schema"),
    "unsafe_path": (E, "schema"),
    "invalid_proposal_shape": (E, "schema"),
    "invalid_resolution": (E, "schema"),
    "reserved_file": (W, "schema"),
    "legacy_profile": (W, "schema"),
    "yaml_nesting_limit": (E, "schema"),  # SPEC §4 lists it with the schema codes
    "internal_error": (E, "schema"),  # one file's unexpected failure, reported on that file; the run goes on
    "invalid_config": (E, "schema"),  # .memzoi/config.toml: an entry that is not valid is ignored, and fails the check
    "invalid_session_end": (E, "schema"),  # a session-end input file ({task, candidates}) that session-end refuses
    "invalid_import_manifest": (E, "schema"),  # a memzoi/import manifest that import refuses
    # git-plane gate
    "sensitivity_not_repo_safe": (E, "gate"),
    "scope_not_repository": (E, "gate"),
    "scope_project_mismatch": (E, "gate"),
    "visibility_not_repository_safe": (E, "gate"),
    "unknown_content_class": (E, "gate"),
    "raw_transcript": (E, "gate"),
    "private_personal_data": (E, "gate"),
    "activity_history": (E, "gate"),
    "private_endpoint": (E, "gate"),
    "undisclosed_vulnerability": (E, "gate"),
    "private_evidence_unminimized": (E, "gate"),
    "temporary_task_state": (E, "gate"),
    "local_only_state": (E, "gate"),
    "candidate_too_large": (E, "gate"),
    "unsafe_output_path": (E, "gate"),  # beside canonical_path: Memzoi's code for a path reached through a symlink
    "candidate_blocked": (E, "gate"),  # a session-end/import candidate a destination rule blocks (no code of its own)
    "repo_subset_blocked": (E, "gate"),  # an import repo candidate blocked because another one is not repo-safe
    # content detectors
    "credential_token": (E, "detector"),
    "private_key": (E, "detector"),
    "authorization_header": (E, "detector"),
    "credentialed_url": (E, "detector"),
    "connection_string": (E, "detector"),
    "session_token": (E, "detector"),
    "cloud_credential": (E, "detector"),
    "environment_secret": (E, "detector"),
    "high_entropy_value": (E, "detector"),
    "prompt_injection": (E, "detector"),
    "invisible_character": (E, "detector"),
    "pii_detected": (E, "detector"),
    "transcript_detected": (E, "detector"),
    # attestation and admission
    "materialization_metadata": (E, "attestation"),
    "stale_attestation": (E, "attestation"),
    "ignored_untracked": (E, "admission"),
    "review_visibility": (E, "admission"),
    "canonical_path": (E, "admission"),
    # lineage and lifecycle
    "dangling_reference": (W, "lineage"),
    "lifecycle_inconsistent": (W, "lineage"),
    "proposal_target_inactive": (W, "lineage"),
    "proposal_target_stale": (W, "lineage"),
    "proposal_cross_scope": (W, "lineage"),
    "record_exists": (W, "lineage"),
    "duplicate_content": (W, "lineage"),
    "duplicate_identity": (E, "lineage"),  # Memzoi's proposal inventory refuses it (reference §2.1)
    "hand_edit_conflict": (E, "lineage"),
    # retention
    "retention_query_only": (I, "retention"),
    # ledger
    "ledger_uncertain": (W, "ledger"),
    "ledger_drift": (I, "ledger"),
    # resident memory (Zuno)
    "resident_cap_usage": (I, "resident"),
    "resident_over_cap": (E, "resident"),
    "resident_drift": (W, "resident"),
    "resident_hand_edit": (I, "resident"),
    "resident_uncertain": (W, "resident"),
}

#: Memzoi's write-safety reason codes (reference §3.3): the floor of ``memzoi check``. Whatever Memzoi's rules refuse
#: is an error under one of these codes, whatever the configuration says.
WRITE_SAFETY: frozenset[str] = frozenset(
    {
        "credential_token",
        "private_key",
        "authorization_header",
        "credentialed_url",
        "connection_string",
        "session_token",
        "cloud_credential",
        "environment_secret",
        "high_entropy_value",
    }
)
#: Memzoi's full reason-code list of its repository write-safety report (reference §3.3, ``diagnostics.rs@164dcd6b``),
#: verbatim: whatever Memzoi's write-safety rules refuse, they refuse under one of these.
MEMZOI_REASON_CODES: frozenset[str] = frozenset(
    """destination_not_repo sensitivity_not_repo_safe scope_not_repository scope_project_mismatch
    visibility_not_repository_safe authorization_missing provenance_missing evidence_invalid stale_safety_decision
    credential_token private_key authorization_header credentialed_url connection_string session_token
    cloud_credential environment_secret high_entropy_value raw_transcript private_personal_data activity_history
    private_endpoint undisclosed_vulnerability private_evidence_unminimized temporary_task_state local_only_state
    unknown_content_class invalid_encoding candidate_too_large unsafe_output_path""".split()
)
#: Our codes that stand for one of Memzoi's admission refusals (reference §4.3, ``admission.rs@164dcd6b``) → that
#: refusal. ``typed-record`` (the file does not parse) and ``safety-scan[…]`` are not listed: they gather many codes
#: (:func:`memzoi.project.refusals.refusals`).
ADMISSION_REFUSALS: dict[str, str] = {
    "canonical_path": "canonical-path",
    "unsafe_output_path": "canonical-path",
    "scope_not_repository": "scope-not-repository",
    "scope_project_mismatch": "scope-not-repository",
    "visibility_not_repository_safe": "visibility-not-repository",
    "materialization_metadata": "materialization-metadata",
    "stale_attestation": "materialization-revision",
    "ignored_untracked": "ignored-untracked",
    "review_visibility": "review-visibility",
}
#: Our framing and schema codes that are errors by default, but for ``invalid_config`` (said of the configuration
#: file, no record): found at error severity, any of them means Memzoi cannot type the record, and its admission
#: refuses it as ``typed-record`` (reference §4.3, fail-closed: one such file fails Memzoi's whole read), so no
#: setting may grade it below error. Default-warning codes (``bom``, ``legacy_profile``, ``id_path_mismatch`` …)
#: are not in it.
UNTYPED: frozenset[str] = frozenset(
    c for c, (sev, group) in CODES.items() if group in ("framing", "schema") and sev is E and c != "invalid_config"
)
#: Our codes for what Memzoi refuses: the one source of truth of what no configuration may hide (promise 1: the
#: gate is at least as strict as Memzoi's). A code of ours named as one of Memzoi's reason codes, standing for
#: one of its admission refusals, or meaning the record cannot be typed (:data:`UNTYPED`). Our refinements
#: (``prompt_injection``, ``invisible_character``, ``pii_detected``, lineage warnings …) are not in it.
MEMZOI_REFUSED: frozenset[str] = frozenset((MEMZOI_REASON_CODES & CODES.keys()) | ADMISSION_REFUSALS.keys() | UNTYPED)
#: Codes that can never be disabled, downgraded or ignored by configuration (SPEC §4, widened to everything Memzoi
#: refuses so that no setting hides it): :data:`MEMZOI_REFUSED` (with the secret codes), the whole git-plane gate group
#: (also our runtime-plane blocks), and the configuration's own ``invalid_config``.
UNSUPPRESSIBLE: frozenset[str] = (
    MEMZOI_REFUSED
    | frozenset(c for c, (_, g) in CODES.items() if g == "gate")
    | {
        # the configuration's own errors: a setting that silenced them could hide that a setting is ignored
        "invalid_config"
    }
)


@dataclass(frozen=True, slots=True)
class TextEdit:
    """Replace ``text[start:end]`` with ``new_text`` (code-point offsets of the analysed text)."""

    start: int
    end: int
    new_text: str


@dataclass(frozen=True, slots=True)
class Fix:
    """A quick fix: a title and the text edits that implement it, all against the analysed text."""

    title: str
    edits: tuple[TextEdit, ...]


@dataclass(frozen=True, slots=True)
class Finding:
    """One diagnostic.

    ``start``/``end`` are code-point offsets into the analysed text (``0 <= start <= end <= len(text)``).
    ``severity`` defaults to the code's default from :data:`CODES`. ``fixes`` are quick fixes expressed as
    text edits. ``data`` carries small structured facts for features built on the finding (never secret text).
    """

    code: str
    message: str
    start: int
    end: int
    severity: Severity = Severity.ERROR
    fixes: tuple[Fix, ...] = ()
    data: dict[str, Any] = field(default_factory=dict, compare=False, hash=False)


def finding(code: str, message: str, start: int, end: int, *, fixes: tuple[Fix, ...] = (), **data: Any) -> Finding:
    """Build a :class:`Finding` with the code's default severity.

    The message gets its code's headline in front (:func:`memzoi.base.headlines.headed`: one short sentence, then the
    details). Raises ``KeyError`` for a code not listed in :data:`CODES` (a programming error, caught by tests). A message,
    fix title or data string quoting a value that cannot be encoded as UTF-8 (a lone surrogate from a YAML escape)
    gets the escape written out (:func:`memzoi.base.utf8.storable`), so every surface can print, store and send it.
    """
    severity = CODES[code][0]
    message = headed(code, message)
    if end < start:
        start, end = end, start
    if not encodable(message):
        message = storable(message)
    if fixes and not all(encodable(f.title) and all(encodable(e.new_text) for e in f.edits) for f in fixes):
        fixes = tuple(
            replace(f, title=storable(f.title), edits=tuple(replace(e, new_text=storable(e.new_text)) for e in f.edits))
            for f in fixes
        )
    if data:
        data = storable_tree(data)
    return Finding(code, message, start, end, severity, fixes, data)
