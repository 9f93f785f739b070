"""``memzoi maintenance plan`` and MCP ``plan_maintenance``: Memzoi's immutable ``memzoi/maintenance-plan``
over the canonical repository records (``maintenance.rs@77169aa8``; Memzoi's lifecycle document, "Immutable
maintenance evidence").

The plan "binds its evaluation and expiry times, selected targets and comparison neighbourhood, record revisions,
detector and policy versions, evidence digests, findings, action candidates, and stale preconditions. Replaying the
same request against the same snapshot, policy, and time produces the same semantics and identities." It is
evidence, not permission: report-only authority, nothing in the project or the runtime is written. The one
optional write is the CLI's ``--output`` file, which "must be outside the Git worktree and all managed runtime
roots" (:func:`write_plan`).

Every identity is Memzoi's domain-separated ``blake3:`` hash of the JCS form (:func:`memzoi.judge.revision.domain_id`)
with Memzoi's domain names. The detectors are :mod:`memzoi.agent.maintenance_detect`. Records are read through the
workspace index (refreshed first); a record that is not admitted, or whose scope, visibility or content class is
not the repository's, fails the plan naming the file (Memzoi fails closed on them too).
"""

from __future__ import annotations

from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from ..base.clock import utc_now
from ..base.runtime import cached_keys
from ..judge.retention import current_assertion, format_instant
from ..judge.revision import REVISION_SCHEMA, domain_id
from ..ledger import Refusal
from ..models.common import parse_rfc3339
from ..read.document import frame
from .maintenance_detect import STALE_AFTER, Loaded, contradictions, exact_duplicates, expiry, normalize_text, staleness
from .maintenance_renewal import renewals
from .recall import Reader

REQUEST_SCHEMA = "memzoi/maintenance-request"
PLAN_SCHEMA = "memzoi/maintenance-plan"
POLICY_VERSION = "maintenance-policy/1"
MAX_RECORDS = 256
MAX_VALIDITY = timedelta(hours=24)
DETECTORS = (
    ("exact_duplicate", "exact-duplicate/1"),
    ("high_confidence_contradiction", "lexical-contradiction/1"),
    ("stale", "age-staleness-180d/1"),
    ("expired", "retention-expiry/1"),
    ("renewal_candidate", "capture-renewal/1"),
)


def policy() -> dict[str, Any]:
    """The ``MaintenancePolicySnapshot`` (24 h validity, 180 days to staleness) with its digest."""
    p = {
        "policy_version": POLICY_VERSION,
        "maximum_validity_seconds": int(MAX_VALIDITY.total_seconds()),
        "stale_after_seconds": int(STALE_AFTER.total_seconds()),
    }
    return {**p, "policy_digest": domain_id("memzoi/maintenance/policy", p)}


def detectors() -> list[dict[str, Any]]:
    """The ``MaintenanceDetectorSnapshot`` list, in Memzoi's order."""
    return [
        {
            "kind": k,
            "version": v,
            "configuration_digest": domain_id("memzoi/maintenance/detector", {"kind": k, "version": v}),
        }
        for k, v in DETECTORS
    ]


def request(record_ids: list[str] | None = None, evaluated_at: str | None = None) -> dict[str, Any]:
    """A validated ``memzoi/maintenance-request``: ``record_ids`` trimmed, sorted, unique, at most 256 (an empty
    one is refused); ``evaluated_at`` RFC 3339 with a timezone. Raises :class:`Refusal` ``invalid_value``."""
    ids = sorted({r.strip() for r in record_ids or []})
    if any(not (r or "").strip() for r in record_ids or []):
        raise Refusal("invalid_value", "maintenance record IDs must not be empty")
    if len(ids) > MAX_RECORDS:
        raise Refusal(
            "invalid_value", f"maintenance request exceeds the admitted-record selector limit ({MAX_RECORDS})"
        )
    out: dict[str, Any] = {"schema": REQUEST_SCHEMA, "record_ids": ids}
    if evaluated_at is not None:
        if parse_rfc3339(evaluated_at.strip()) is None:
            raise Refusal("invalid_value", "maintenance evaluated_at must be an RFC 3339 timestamp with a timezone")
        out["evaluated_at"] = evaluated_at.strip()
    return out


def _freshness(data: dict[str, Any], path: str) -> datetime:
    at = parse_rfc3339(str(data.get("updated") or data.get("timestamp") or ""))
    if at is None:
        raise Refusal(
            "invalid_value",
            f"{path}: `timestamp`/`updated` is not an RFC 3339 timestamp; fix it "
            "(`memzoi check`) before planning maintenance",
        )
    raw = data.get("capture")
    cap = raw if isinstance(raw, dict) else {}
    reviewed = (
        parse_rfc3339(str(cap.get("reviewed_at") or "")) if cap.get("review_outcome") in ("accept", "edit") else None
    )
    return max(at, reviewed) if reviewed else at


def _claim(data: dict[str, Any], body: str, *, with_retention: bool) -> str:
    claim = {
        "memory_type": data.get("type"),
        "lane": data.get("lane"),
        "scope_kind": data.get("scope"),
        "scope_id": data.get("scope_id"),
        "visibility": data.get("visibility"),
        "title": normalize_text(str(data.get("title", ""))),
        "body": body.strip(),
        "tags": sorted(set(data.get("tags") or [])),
        "sensitivity": data.get("sensitivity"),
        "content_class": data.get("content_class"),
        "confidence": data.get("confidence"),
        "applies_to": sorted(set(data.get("applies_to") or [])),
    }
    if with_retention:
        claim["retention"] = data.get("retention") or {}
        return domain_id("memzoi/maintenance/duplicate-claim", claim)
    return domain_id("memzoi/maintenance/renewal-claim", claim)


def _load(root: Path, row: dict[str, Any], at: datetime, selected: set[str]) -> Loaded:
    path = row["path"]
    if not row["admitted"]:
        raise Refusal(
            "not_admitted",
            f"{path}: record {row['id']} is not admitted (see `memzoi check {path}`); "
            "repository maintenance plans only over admitted records",
        )
    try:
        doc = frame((root / path).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError):  # changed or removed since the index was refreshed
        raise Refusal(
            "source_changed", f"{path}: the record could not be read while planning; run the plan again"
        ) from None
    data = dict(doc.data or {})
    if (
        data.get("scope") != "repo"
        or data.get("visibility") != "repo"
        or data.get("content_class") != "general_repo_knowledge"
    ):
        raise Refusal(
            "not_repository",
            f"{path}: repository maintenance refuses a record whose scope, visibility "
            "or content_class is not repo / repo / general_repo_knowledge",
        )
    body = row["body"]
    decision = current_assertion(row["status"] or "", row["lane"] or "", data.get("retention") or {}, at)
    if decision.retention is None:
        raise Refusal("invalid_retention", f"record {row['id']} has invalid retention facts ({path})")
    fresh = _freshness(data, path)
    eligible = fresh <= at
    snap: dict[str, Any] = {
        "record_id": row["id"],
        "version": {
            "kind": "canonical_repository",
            "source_path": path,
            "revision": {"schema": REVISION_SCHEMA, "revision_hash": row["revision"]},
        },
        "content_hash": domain_id("memzoi/maintenance/content", body),
        "claim_digest": _claim(data, body, with_retention=True),
        "applicability_digest": domain_id(
            "memzoi/maintenance/applicability",
            {
                "scope_kind": data.get("scope"),
                "scope_id": data.get("scope_id"),
                "paths": sorted(set(data.get("applies_to") or [])),
            },
        ),
        "temporal_digest": domain_id(
            "memzoi/maintenance/temporal",
            {
                "status": row["status"],
                "retention": data.get("retention") or {},
                "supersedes_id": data.get("supersedes"),
                "lineage": data.get("lineage"),
            },
        ),
        "status": row["status"],
        "current_assertion": decision.is_current and eligible,
        "retention_state": decision.retention.state,
        "retention_reason": decision.retention.reason,
        "retention_boundary": decision.retention.boundary,
        "target": row["id"] in selected,
    }
    if snap["retention_boundary"] is None:
        del snap["retention_boundary"]
    return Loaded(snap, data, body, snap["claim_digest"], _claim(data, body, with_retention=False), fresh, eligible)


def _not_after(loaded: list[Loaded], at: datetime) -> datetime:
    bound = at + MAX_VALIDITY
    for r in loaded:
        if not r.eligible:
            continue
        edges = [parse_rfc3339(r.snapshot["retention_boundary"])] if r.snapshot.get("retention_boundary") else []
        if (
            r.snapshot["current_assertion"]
            and r.data.get("status") == "active"
            and r.data.get("lane") in ("semantic", "procedural")
        ):
            edges.append(r.freshness + STALE_AFTER)
        for e in edges:
            if e is not None and at < e < bound:
                bound = e
    return bound


def plan_maintenance(root: Path, req: dict[str, Any], now: datetime | None = None) -> dict[str, Any]:
    """The ``memzoi/maintenance-plan`` of request ``req`` (:func:`request`) over the project at ``root``, at
    ``req["evaluated_at"]`` or else ``now`` (default: the clock). Deterministic for a fixed snapshot and time.
    Reads only. Raises :class:`Refusal`: an unknown target (``not_found``), a record that cannot be planned over
    (``not_admitted``, ``not_repository``, ``invalid_retention``, ``invalid_value``), more than 256 records
    (``too_many_records``), an unusable index."""
    with Reader(root) as r:
        at = parse_rfc3339(req["evaluated_at"]) if req.get("evaluated_at") else (now or r.now)
        rows = [dict(x) for x in r.db.execute("SELECT * FROM records WHERE id IS NOT NULL ORDER BY id, path")]
    if at is None:  # request() validates it; a hand-built request is refused, not crashed on
        raise Refusal(
            "invalid_value",
            f"maintenance request: `evaluated_at` {req['evaluated_at']!r} is not an "
            "RFC 3339 timestamp; pass one such as 2026-01-01T00:00:00Z",
        )
    req = {**req, "evaluated_at": format_instant(at)}
    known = {row["id"] for row in rows}
    missing = [t for t in req["record_ids"] if t not in known]
    if missing:
        raise Refusal("not_found", f"maintenance target record {missing[0]} does not exist")
    if len(rows) > MAX_RECORDS:
        raise Refusal(
            "too_many_records",
            f"canonical repository memory exceeds the maintenance admitted-record "
            f"limit ({MAX_RECORDS}); select targets with --record-id",
        )
    selected = set(req["record_ids"]) or known
    loaded = sorted((_load(root, row, at, selected) for row in rows), key=lambda x: x.id)
    records = [x.snapshot for x in loaded]
    digest = domain_id(
        "memzoi/maintenance/comparison-set",
        [
            [s["record_id"], s["version"], s["claim_digest"], s["applicability_digest"], s["temporal_digest"]]
            for s in records
        ],
    )
    dup_findings, actions = exact_duplicates(loaded, selected, digest)
    renewal_findings, renewal_actions = renewals(loaded, selected, at, digest, format_instant)
    actions += renewal_actions
    findings = (
        dup_findings
        + contradictions(loaded, selected)
        + staleness(loaded, selected, at, format_instant)
        + expiry(loaded, selected)
        + renewal_findings
    )
    findings.sort(key=lambda f: f["finding_id"])
    actions.sort(key=lambda a: a["action_id"])
    for f in findings:
        f["proposed_action_ids"] = [a["action_id"] for a in actions if a["finding_id"] == f["finding_id"]]
    pol, dets = policy(), detectors()
    grant = domain_id("memzoi/maintenance/grant", "report-only")
    repo_fp = domain_id("memzoi/maintenance/repository", cached_keys(root).repository_key)
    not_after = format_instant(_not_after(loaded, at))
    future = sum(1 for x in loaded if not x.eligible)
    diagnostics = [{"code": "repository_snapshot_evaluated", "count": len(records), "digest": digest}]
    if future:
        diagnostics.append(
            {
                "code": "records_after_evaluation_excluded",
                "count": future,
                "digest": domain_id("memzoi/maintenance/future-record-count", future),
            }
        )
    groups = [
        {"kind": "repository_materialization", "actions": actions},
        {"kind": "private_derived_state", "actions": []},
        {"kind": "owner_authorized_private_mutation", "actions": []},
    ]
    count = {k: sum(1 for f in findings if f["kind"] == k) for k, _ in DETECTORS}
    plan = {
        "schema": PLAN_SCHEMA,
        "plan_id": "",
        "request": req,
        "evaluated_at": req["evaluated_at"],
        "not_after": not_after,
        "scope": {
            "kind": "repository",
            "repository_fingerprint": repo_fp,
            "target_record_ids": [s["record_id"] for s in records if s["target"]],
        },
        "policy": pol,
        "detectors": dets,
        "authority": {"mode": "report_only", "grant_fingerprint": grant},
        "records": records,
        "comparison_set_digest": digest,
        "findings": findings,
        "action_groups": groups,
        "preconditions": {
            "scope": {"kind": "repository", "repository_fingerprint": repo_fp},
            "target_versions": {s["record_id"]: s["version"] for s in records if s["target"]},
            "comparison_set_digest": digest,
            "detector_digest": domain_id("memzoi/maintenance/detectors", dets),
            "policy_digest": pol["policy_digest"],
            "grant_fingerprint": grant,
            "not_after": not_after,
        },
        "summary": {
            "records": len(records),
            "exact_duplicates": count["exact_duplicate"],
            "contradictions": count["high_confidence_contradiction"],
            "stale": count["stale"],
            "expired": count["expired"],
            "renewal_candidates": count["renewal_candidate"],
            "action_candidates": len(actions),
        },
        "diagnostics": diagnostics,
    }
    plan["plan_id"] = domain_id("memzoi/maintenance/plan", {k: v for k, v in plan.items() if k != "plan_id"})
    return plan


#: A record whose retention boundary falls within this window is listed as expiring soon (:func:`memory_health`).
EXPIRING_WITHIN = timedelta(days=7)


def memory_health(root: Path, now: datetime | None = None) -> dict[str, Any]:
    """The "Memory health" view of the repository maintenance plan at ``now``: ``{"plan_id", "evaluated_at",
    "summary", "duplicates": [{"record_ids", "records"}], "contradictions": [{"record_ids", "records", "edges"}],
    "stale": [...], "expired": [...], "expiring": [...]}``; ``records`` maps each id to its file (relative to
    ``root``), ``expiring`` lists current records whose boundary is within :data:`EXPIRING_WITHIN`. Reads only;
    raises :class:`Refusal` as :func:`memzoi.agent.maintenance.plan_maintenance`."""
    at = now or utc_now()
    plan = plan_maintenance(root, request(evaluated_at=format_instant(at)))
    files = {s["record_id"]: s["version"]["source_path"] for s in plan["records"]}

    def group(kind: str) -> list[dict[str, Any]]:
        return [
            {
                "finding_id": f["finding_id"],
                "record_ids": f["record_ids"],
                "records": {r: files.get(r) for r in f["record_ids"]},
                "edges": [e["record_ids"] for e in f["conflict_edges"]],
                "evidence": [e["code"] for e in f["evidence"]],
            }
            for f in plan["findings"]
            if f["kind"] == kind
        ]

    soon = at + EXPIRING_WITHIN
    expiring = [
        {
            "record_ids": [s["record_id"]],
            "records": {s["record_id"]: files[s["record_id"]]},
            "boundary": s["retention_boundary"],
            "reason": s["retention_reason"],
        }
        for s in plan["records"]
        if s["current_assertion"]
        and s.get("retention_boundary")
        and (parse_rfc3339(s["retention_boundary"]) or soon) < soon
    ]
    return {
        "plan_id": plan["plan_id"],
        "evaluated_at": plan["evaluated_at"],
        "summary": plan["summary"],
        "duplicates": group("exact_duplicate"),
        "contradictions": group("high_confidence_contradiction"),
        "stale": group("stale"),
        "expired": group("expired"),
        "expiring": expiring,
    }
