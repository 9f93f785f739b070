"""Reject a pending proposal with a reason, as one ledgered change (Memzoi ``reject.rs``, reference §2.6).

A repo-safe packet is re-rendered with ``status: rejected`` and its resolution and moved to
``resolved/rejected/<file id>.md``. A packet that fails the write-safety gate for any reason (sensitivity,
content class, any error finding, or not even parseable) is replaced by Memzoi's redacted, create-shaped **hash
receipt**: its content, scope, authorship, target, lineage and identities never reach git or output; only two
BLAKE3 digests and identity tokens do.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import blake3

from ..base.utf8 import utf8_bytes
from ..ledger import ChangePlan, ChangeResult, FileChange, Refusal, file_mode, read_file_state, run_change
from ..ledger.model import rejection_reason
from ..models import PendingProposal
from ..read.render import render_packet
from .apply import resolved_packet
from .common import (
    PENDING,
    REJECTED,
    Loaded,
    errors,
    file_id_of,
    identity_token,
    load_pending_packet,
    packet_rel,
    preflight_ids,
    resolved_at,
    verified,
)

SENSITIVITIES = (
    "repo-safe",
    "local-only",
    "sensitive",
    "secret",
    "raw-transcript",
    "private-personal-data",
    "temporary-state",
    "unknown",
)
RECEIPT_TITLE = "Redacted non-repo-safe proposal"
RECEIPT_DESCRIPTION = "Original proposal content and identity redacted before archival."


def receipt_digests(raw: bytes, raw_file_id: str) -> tuple[str, str, dict[str, str | None]]:
    """``(digest, classification_digest, preflight)`` of a packet (reference §2.6 formulas):

    ``digest = blake3("proposal-id\\0" + (id or "<missing-or-non-string>") + "\\0proposal-file-id\\0" + file_id +
    "\\0proposal-markdown\\0" + markdown)``; ``classification_digest = blake3("memzoi.rejected-proposal-
    classification.v1\\0" + sensitivity + "\\0" + (content_class or "<missing>"))``.
    """
    pre = preflight_ids(raw)
    raw_id = pre.get("id")
    h = blake3.blake3()
    h.update(b"proposal-id\0" + utf8_bytes(raw_id or "<missing-or-non-string>"))
    h.update(b"\0proposal-file-id\0" + utf8_bytes(raw_file_id))
    h.update(b"\0proposal-markdown\0" + raw)
    digest = h.hexdigest()
    sens = (pre.get("sensitivity") or "unknown").replace("_", "-")
    sens = sens if sens in SENSITIVITIES else "unknown"
    cls = blake3.blake3(
        utf8_bytes(f"memzoi.rejected-proposal-classification.v1\0{sens}\0{pre.get('content_class') or '<missing>'}")
    ).hexdigest()
    return digest, cls, pre


def receipt(raw: bytes, raw_file_id: str, *, actor: str, when: str, reason: str) -> tuple[str, dict[str, Any], str]:
    """Memzoi's redacted hash receipt for a non-repo-safe packet: ``(file id token, frontmatter, body)``."""
    digest, cls, pre = receipt_digests(raw, raw_file_id)
    raw_id = pre.get("id")
    data = {
        "id": identity_token(raw_id) if raw_id else identity_token(f"missing-id:{digest}"),
        "kind": "proposal",
        "profile": "memzoi",
        "type": "fact",
        "lane": "semantic",
        "title": RECEIPT_TITLE,
        "description": RECEIPT_DESCRIPTION,
        "status": "rejected",
        "proposal": {"action": "create", "proposed_by": "redacted", "proposed_at": "1970-01-01T00:00:00Z"},
        "scope": {"kind": "repo"},
        "timestamp": "1970-01-01T00:00:00Z",
        "supersedes": [],
        "sensitivity": "repo-safe",
        "content_class": "general_repo_knowledge",
        "retention": {},
        "origin": {"origin_key": f"rejected-proposal:{digest}", "route": "repository_proposal"},
        "resolution": {"outcome": "rejected", "resolved_by": actor, "resolved_at": when, "reason": reason},
    }
    body = (
        f"{RECEIPT_DESCRIPTION}\n\nContent hash (BLAKE3): `{digest}`\n\nOriginal classification hash (BLAKE3): `{cls}`"
    )
    return identity_token(raw_file_id), data, body


def is_repo_safe(loaded: Loaded) -> bool:
    """True when the packet validates as pending, is ``repo-safe`` and ``general_repo_knowledge``, and has no
    error finding (Memzoi: any gate failure means the packet is archived as a receipt)."""
    model = loaded.analysis.model
    return (
        isinstance(model, PendingProposal)
        and model.sensitivity == "repo-safe"
        and model.content_class == "general_repo_knowledge"
        and not errors(loaded.analysis)
    )


def rejection_files(root: Path, rel: str, *, reason: str, actor: str) -> tuple[list[FileChange], dict[str, Any]]:
    """The files of rejecting the pending packet at ``rel`` (resolved packet or receipt, pending removed) and
    details for the ledger (identities only when the packet is repo-safe)."""
    loaded = load_pending_packet(root, rel)
    when = resolved_at()
    raw_file_id = file_id_of(rel, PENDING)
    if is_repo_safe(loaded):
        model = loaded.analysis.model
        assert isinstance(model, PendingProposal)
        target = model.proposal.target or (model.supersedes[0] if model.supersedes else None)
        resolution = {
            "outcome": "rejected",
            "resolved_by": actor,
            "resolved_at": when,
            "reason": reason,
            "target_id": target,
        }
        out = resolved_packet(root, loaded, REJECTED, resolution, "rejected")
        details: dict[str, Any] = {"proposal_id": model.id, "receipt": False}
    else:
        token, data, body = receipt(loaded.raw, raw_file_id, actor=actor, when=when, reason=reason)
        out_rel = f"{REJECTED}/{token}.md"
        if read_file_state(root, out_rel) is not None:
            raise Refusal(
                "duplicate_identity", f"{out_rel} already exists: this proposal was already rejected", out_rel
            )
        text = render_packet(data, body)
        written = verified(root, out_rel, text, data, body)
        out = FileChange(out_rel, None, written, after_mode=file_mode(root, rel))  # the packet's bits
        details = {"proposal_id": data["id"], "receipt": True}
    return [out, FileChange(rel, loaded.raw, None)], details


def reject_proposal(
    project_root: str | os.PathLike[str],
    packet: str | os.PathLike[str],
    *,
    reason: str,
    actor: str,
    source: str = "cli",
) -> ChangeResult:
    """Reject the pending packet ``packet`` (path or file id) with ``reason`` as one ledgered change.

    Raises :class:`~memzoi.ledger.Refusal` (``reason_required``, ``proposal_not_found``, ``external_drift``, …).
    """
    reason = rejection_reason(reason)  # the one rule, shared with resident candidates

    def build(root: Path) -> ChangePlan:
        rel = packet_rel(root, packet)
        files, details = rejection_files(root, rel, reason=reason, actor=actor)
        # A receipt exists so that the packet's content is gone: the ledger keeps only its hash and size too.
        purge = frozenset({rel}) if details["receipt"] else frozenset()
        return ChangePlan(
            "reject",
            files,
            reason=reason,
            summary=f"reject proposal {details['proposal_id']}",
            details=details,
            purge=purge,
        )

    return run_change(project_root, build, actor=actor, source=source)
