"""Create a pending supersede (or tombstone) proposal packet for an existing record, as one ledgered change.

Nothing reaches the record itself: the packet lands in ``.memzoi/proposals/pending/`` for review, and applying it
later is a separate explicit decision (Memzoi: approval is not application). The packet takes the target's type,
lane, scope, tags, paths and retention, is ``repo-safe`` / ``general_repo_knowledge``, and gets a fresh id
(``supersede-<record>``, ``-2``, ``-3`` … never reusing a pending or resolved id).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from ..ledger import ChangePlan, ChangeResult, FileChange, Refusal, now_utc, run_change
from ..read.render import description_of, render_packet
from .common import PENDING, Loaded, record_ref, reserve_packet_id, verified
from .proposal_target import check_record_free, load_proposal_target
from .propose import check_title_fits


def _packet(root: Path, target: Loaded, *, action: str, title: str, body: str, reason: str, actor: str) -> FileChange:
    t = target.data
    record_id = target.rel[len(".memzoi/records/") : -3]
    packet_id = reserve_packet_id(root, f"{action}-{record_id.replace('/', '-')}")
    now = now_utc(precise=False)
    proposal: dict[str, Any] = {"action": action, "proposed_by": actor, "proposed_at": now, "reason": reason}
    if action == "tombstone":
        proposal["target"] = record_id
    scope: dict[str, Any] = {"kind": t["scope"]}
    if t.get("scope_id"):
        scope["id"] = t["scope_id"]
    if t.get("applies_to"):
        scope["paths"] = t["applies_to"]
    data = {
        "id": packet_id,
        "kind": "proposal",
        "profile": "memzoi",
        "type": t["type"],
        "lane": t["lane"],
        "title": title,
        "description": description_of(body),
        "status": "proposed",
        "proposal": proposal,
        "scope": scope,
        "tags": t.get("tags"),
        "timestamp": now,
        "created_by": actor,
        "supersedes": [record_id] if action == "supersede" else [],
        "sensitivity": "repo-safe",
        "content_class": "general_repo_knowledge",
        "retention": t["retention"],
        "origin": {"origin_key": f"repository-proposal:{packet_id}", "route": "repository_proposal"},
    }
    rel = f"{PENDING}/{packet_id}.md"
    return FileChange(rel, None, verified(root, rel, render_packet(data, body), data, body))


def plan_packet(
    root: Path, record: str, *, action: str, title: str | None, body: str | None, reason: str, actor: str
) -> ChangePlan:
    """Validate the target and compute the new pending packet (``action`` is ``supersede`` or ``tombstone``)."""
    reason = (reason or "").strip()
    if not reason:
        raise Refusal("reason_required", f"a {action} proposal needs a non-empty reason (--reason)")
    if "\n" in reason:
        raise Refusal("invalid_value", "the reason must be a single line")
    record_id = record_ref(root, record)
    target = load_proposal_target(root, record_id)
    t = target.data
    if action == "supersede":
        if not (title and title.strip()) or not (body and body.strip()):
            raise Refusal("invalid_value", "a supersede proposal needs the replacement's --title and body")
        check_title_fits(title)
        check_record_free(root, title, target_id=record_id)
    else:
        title = f"Tombstone {t['title']}"
        body = f"Tombstone `{record_id}`: {reason}"
    change = _packet(root, target, action=action, title=title.strip(), body=body, reason=reason, actor=actor)
    return ChangePlan(
        action,
        [change],
        reason=reason,
        summary=f"propose {action} of {record_id}",
        details={"record_id": record_id, "proposal_path": change.path},
        reads={target.rel: target.raw},  # the record the packet copies: a preview's fingerprint covers it
    )


def propose_supersede(
    project_root: str | os.PathLike[str],
    record: str,
    *,
    title: str,
    body: str,
    reason: str,
    actor: str,
    source: str = "cli",
    previewed: str | None = None,
) -> ChangeResult:
    """Create a pending packet proposing that a new record (``title``, ``body``) supersedes ``record`` (id or
    path). Raises :class:`~memzoi.ledger.Refusal` when the record is missing, inactive or invalid, or changed
    since the preview ``previewed`` was shown (``preview_stale``)."""
    return run_change(
        project_root,
        lambda root: plan_packet(root, record, action="supersede", title=title, body=body, reason=reason, actor=actor),
        actor=actor,
        source=source,
        previewed=previewed,
    )
