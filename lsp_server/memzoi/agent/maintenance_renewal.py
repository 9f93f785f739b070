"""The capture-renewal detector of Memzoi's repository maintenance plan (``renewal_candidate``, ``capture-renewal/1``,
``maintenance.rs@77169aa8``): a claim-bearing record at its retention boundary and a current record with the same
claim whose accepted capture review after that boundary is fresh evidence. It proposes a renewal successor and never
extends the predecessor's retention. The other detectors: :mod:`.maintenance_detect`.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import Any

from ..judge.revision import domain_id
from ..models.common import parse_rfc3339
from .maintenance_detect import CLAIM_TYPES, DURABLE_LANES, Loaded, finding_comparison_digest, new_action, new_finding


def _capture(r: Loaded) -> dict[str, Any] | None:
    c = r.data.get("capture")
    return c if isinstance(c, dict) else None


def _renewable(r: Loaded) -> bool:
    return r.eligible and r.data.get("lane") in DURABLE_LANES and r.data.get("type") in CLAIM_TYPES


def _renews(evidence: Loaded, predecessor: Loaded) -> bool:
    raw = evidence.data.get("lineage")
    lineage = raw if isinstance(raw, dict) else {}
    return lineage.get("kind") == "renewal" and lineage.get("predecessor_id") == predecessor.id


def renewals(
    loaded: list[Loaded], selected: set[str], at: datetime, digest: str, fmt: Callable[[datetime], str]
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Renewal-candidate findings and their ``create_renewal_successor`` action candidates."""
    findings, actions = [], []
    for p in loaded:
        s = p.snapshot
        if not (
            _renewable(p)
            and s["status"] in ("active", "expired")
            and s["retention_state"] == "query_only"
            and s.get("retention_boundary")
        ):
            continue
        boundary = parse_rfc3339(s["retention_boundary"])
        prior = _capture(p)
        for e in loaded:
            if not (
                _renewable(e)
                and e.snapshot["current_assertion"]
                and e.renewal_claim == p.renewal_claim
                and e.id != p.id
            ) or (p.id not in selected and e.id not in selected):
                continue
            cap = _capture(e)
            if (
                e.data.get("origin") == p.data.get("origin")
                or _renews(e, p)
                or not cap
                or cap.get("review_outcome") not in ("accept", "edit")
            ):
                continue
            reviewed = parse_rfc3339(str(cap.get("reviewed_at") or ""))
            if reviewed is None or boundary is None or reviewed <= boundary or reviewed > at:
                continue
            ev = domain_id("memzoi/maintenance/capture-evidence", cap.get("evidence"))
            if prior is not None and domain_id("memzoi/maintenance/capture-evidence", prior.get("evidence")) == ev:
                continue
            ids = sorted([p.id, e.id])
            f = new_finding(
                "renewal_candidate",
                ids,
                finding_comparison_digest([p, e]),
                [{"code": "fresh_accepted_capture_evidence", "digest": ev, "boundary": fmt(boundary)}],
                "high",
            )
            a = new_action(
                "create_renewal_successor",
                f["finding_id"],
                ids,
                digest,
                [p, e],
                predecessor_record_id=p.id,
                evidence_record_id=e.id,
            )
            f["proposed_action_ids"].append(a["action_id"])
            findings.append(f)
            actions.append(a)
    return findings, actions
