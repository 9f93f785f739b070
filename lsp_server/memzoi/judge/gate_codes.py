"""What each value the git-plane gate (:mod:`memzoi.judge.policy`) refuses means: Memzoi's reason code and
explanation per ``content_class`` (``repository_write_safety/policy.rs::evaluate``, reference ``memzoi-format.md``
§3.1), the guidance per ``sensitivity`` (Memzoi's ``repo_apply_sensitivity_guidance``), whether routing the memory
to local memory fits, and the severity of a gate finding on a pending proposal packet.
"""

from __future__ import annotations

from ..base.findings import Severity

#: content_class → (code, why it cannot be repository memory, route to local memory fits)
CONTENT_CLASS_CODES: dict[str, tuple[str, str, bool]] = {
    "raw_transcript": ("raw_transcript", "raw conversation transcripts never become repository memory", True),
    "private_personal_data": ("private_personal_data", "private personal data never becomes repository memory", True),
    "screen_or_activity_history": (
        "activity_history",
        "screen or activity history never becomes repository memory",
        True,
    ),
    "private_endpoint": (
        "private_endpoint",
        "private endpoints (internal hosts, URLs, addresses) stay out of repository memory",
        True,
    ),
    "undisclosed_vulnerability": (
        "undisclosed_vulnerability",
        "undisclosed vulnerabilities belong in a private security channel until they are disclosed",
        False,
    ),
    "unminimized_private_evidence": (
        "private_evidence_unminimized",
        "private evidence must be minimised to the durable fact before it can be shared",
        True,
    ),
    "temporary_task_state": (
        "temporary_task_state",
        "temporary task state is local working memory, not durable repository knowledge",
        True,
    ),
    "local_only_state": ("local_only_state", "local-only state stays on this machine", True),
    "unknown": ("unknown_content_class", "content that has not been classified cannot reach the repository", False),
}

#: sensitivity → (guidance, route to local memory fits); after Memzoi's ``repo_apply_sensitivity_guidance``.
SENSITIVITY_GUIDANCE: dict[str, tuple[str, bool]] = {
    "local-only": ("local-only proposals belong in local memory", True),
    "sensitive": ("sensitive proposals must not become repo-shared memory", True),
    "secret": ("secret proposals must not become repo-shared memory; remove the secret and rotate it", False),
    "raw-transcript": ("raw transcripts must not become repo-shared memory; keep only the durable fact", True),
    "private-personal-data": ("private personal data must not become repo-shared memory", True),
    "temporary-state": ("temporary state belongs in local working memory", True),
    "unknown": ("the sensitivity has not been reviewed; classify it (only `repo-safe` can be applied)", False),
}

#: Gate codes that stay errors on a pending packet (see the module docstring).
PENDING_ERRORS: frozenset[str] = frozenset({"sensitivity_not_repo_safe"})


def pending_severity(code: str) -> Severity:
    """Severity of gate finding ``code`` on a pending proposal packet: an error for :data:`PENDING_ERRORS`
    (what the committed packet already exposes), else a warning (it only cannot be applied yet)."""
    return Severity.ERROR if code in PENDING_ERRORS else Severity.WARNING
