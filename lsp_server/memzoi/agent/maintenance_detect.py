"""The detectors of Memzoi's repository maintenance plan (``maintenance.rs@77169aa8``), over loaded records.

Each loaded record is a :class:`Loaded` (its snapshot for the artifact plus the facts the detectors compare).
Detectors only report; none picks a winner (Memzoi: "Exact duplicate candidates remain distinct from
contradictions; unresolved contradictions name the full set and choose no winner. Staleness and expiry are
report-only"):

* ``exact_duplicate`` (``exact-duplicate/1``): current records with the same duplicate-claim digest (type, lane,
  scope, visibility, whitespace-normalised case-folded title, trimmed body, sorted tags, sensitivity,
  content_class, confidence, sorted ``applies_to``, retention); one ``consolidate_exact_duplicates`` action
  candidate per group;
* ``high_confidence_contradiction`` (``lexical-contradiction/1``): current semantic/procedural claim-bearing
  records (fact, preference, decision, procedure, instruction_projection) without conditional or temporal words,
  whose bodies have the same polarity signature with opposite polarity ("X is Y" / "X is not Y", "… is true" /
  "… is false"), with the same type, lane, normalised title and scope, overlapping ``applies_to`` and no
  supersede/lineage link; connected components are reported as one finding naming the full set, with one conflict
  edge per contradicting pair;
* ``stale`` (``age-staleness-180d/1``): current active semantic/procedural records whose freshness (``updated``,
  else ``timestamp``, or a later accepted capture review) is 180 days old or more at the evaluation;
* ``expired`` (``retention-expiry/1``): records with status ``expired``, or active and ``query_only``;
* ``renewal_candidate`` (``capture-renewal/1``, :mod:`.maintenance_renewal`): a semantic/procedural claim-bearing record, active or expired and
  ``query_only`` at a boundary, and a current record with the same claim (without retention), another origin, not
  already its renewal, whose ``capture`` block holds an ``accept``/``edit`` review after that boundary (and no later
  than the evaluation) over other evidence than the predecessor's; one ``create_renewal_successor`` action
  candidate (a renewal never extends the predecessor's retention).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from ..judge.revision import domain_id
from .recall import path_match_score

STALE_AFTER = timedelta(days=180)
#: The claim-bearing record types (contradiction and renewal detectors).
CLAIM_TYPES = frozenset({"fact", "preference", "decision", "procedure", "instruction_projection"})
#: The durable lanes whose records can be stale, contradict or be renewed.
DURABLE_LANES = frozenset({"semantic", "procedural"})
_BLOCKED = frozenset(
    """if when whenever unless provided providing assuming depending where wherever while except
otherwise until before after since once now today tomorrow yesterday formerly current currently previously
temporarily during""".split()
)


@dataclass
class Loaded:
    """One record as the plan sees it: ``snapshot`` (the artifact's ``MaintenanceRecordSnapshot``) and the facts
    the detectors compare (``data`` is the frontmatter; ``freshness`` a timezone-aware instant)."""

    snapshot: dict[str, Any]
    data: dict[str, Any]
    body: str
    duplicate_claim: str
    renewal_claim: str
    freshness: datetime
    eligible: bool
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def id(self) -> str:
        """The record id."""
        return str(self.snapshot["record_id"])


def tokens(value: str) -> list[str]:
    """Memzoi's ``normalized_tokens``: lowercase, split on every character that is neither alphanumeric nor ``_``."""
    return [t for t in re.split(r"\W+", value.lower()) if t]


def normalize_text(value: str) -> str:
    """Memzoi's ``normalize_text``: whitespace runs collapsed to one space, lowercase."""
    return " ".join(value.split()).lower()


def polarity_signature(body: str) -> tuple[str, bool] | None:
    """Memzoi's ``polarity_signature``: ``(signature, negative)`` of a simple claim, or ``None``. One terminal
    ``true``/``false`` after ``is``/``are``/``must be``/``should be`` gives ``<boolean>``; else one ``not`` right
    after ``is``/``are``/``must``/``should`` is removed and marks the negative; else a claim with one of those verbs
    is positive."""
    toks = tokens(body)
    if not toks or (len(toks) == 1 and toks[0] == "not"):
        return None
    bools = [i for i, t in enumerate(toks) if t in ("true", "false")]
    if len(bools) == 1:
        i = bools[0]
        terminal = (
            i + 1 == len(toks)
            and i > 0
            and (toks[i - 1] in ("is", "are") or (toks[i - 1] == "be" and i > 1 and toks[i - 2] in ("must", "should")))
        )
        if not terminal:
            return None
        negative = toks[i] == "false"
        toks[i] = "<boolean>"
        return " ".join(toks), negative
    if bools:
        return None
    nots = [i for i, t in enumerate(toks) if t == "not"]
    if len(nots) > 1:
        return None
    if nots:
        i = nots[0]
        if i == 0 or toks[i - 1] not in ("is", "are", "must", "should"):
            return None
        del toks[i]
        return " ".join(toks), True
    return (" ".join(toks), False) if any(t in ("is", "are", "must", "should") for t in toks) else None


def conditional_or_temporal(body: str) -> bool:
    """Memzoi's ``contains_conditional_or_temporal_language``: a blocked word, a four-digit year or "as of"."""
    toks = tokens(body)
    return any(t in _BLOCKED or (len(t) == 4 and t.isdigit()) for t in toks) or any(
        a == "as" and b == "of" for a, b in zip(toks, toks[1:])
    )


def path_matches(stored: str, requested: str) -> bool:
    """Whether a stored binding applies to a requested path (exact, ancestor, descendant, trailing ``/**``)."""
    return path_match_score(stored, requested) > 0


def paths_overlap(left: list[str], right: list[str]) -> bool:
    """Memzoi's ``paths_overlap``: an empty set is global; otherwise some pair matches either way."""
    return not left or not right or any(path_matches(a, b) or path_matches(b, a) for a in left for b in right)


def _related(a: Loaded, b: Loaded) -> bool:
    def pred(x: Loaded) -> Any:
        return (x.data.get("lineage") or {}).get("predecessor_id") if isinstance(x.data.get("lineage"), dict) else None

    return a.data.get("supersedes") == b.id or b.data.get("supersedes") == a.id or pred(a) == b.id or pred(b) == a.id


def _same_context(a: Loaded, b: Loaded) -> bool:
    keys = ("type", "lane", "scope", "scope_id")
    return all(a.data.get(k) == b.data.get(k) for k in keys) and normalize_text(
        str(a.data.get("title", ""))
    ) == normalize_text(str(b.data.get("title", "")))


def finding_comparison_digest(group: list[Loaded]) -> str:
    """``memzoi/maintenance/finding-comparison-set`` over the members' ``(id, version)``, sorted by id."""
    return domain_id(
        "memzoi/maintenance/finding-comparison-set",
        sorted([[r.id, r.snapshot["version"]] for r in group], key=lambda v: v[0]),
    )


def new_finding(
    kind: str,
    record_ids: list[str],
    digest: str,
    evidence: list[dict[str, Any]],
    confidence: str,
    edges: list[dict[str, Any]] | None = None,
) -> dict[str, Any]:
    """A ``MaintenanceFinding``; its id is ``memzoi/maintenance/finding`` over its content (edges included)."""
    ids = sorted(set(record_ids))
    body = {
        "kind": kind,
        "record_ids": ids,
        "comparison_set_digest": digest,
        "evidence": evidence,
        "confidence": confidence,
        "conflict_edges": edges or [],
    }
    return {"finding_id": domain_id("memzoi/maintenance/finding", body), **body, "proposed_action_ids": []}


def new_action(
    kind: str,
    finding_id: str,
    record_ids: list[str],
    comparison_set_digest: str,
    group: list[Loaded],
    **roles: str | None,
) -> dict[str, Any]:
    """A repository ``MaintenanceAction`` candidate (``roles``: ``keeper_record_id``, ``predecessor_record_id``,
    ``evidence_record_id``; ``None`` ones are left out), id ``memzoi/maintenance/action`` over its content."""
    pre = {
        "comparison_set_digest": comparison_set_digest,
        "record_versions": {r.id: r.snapshot["version"] for r in sorted(group, key=lambda r: r.id)},
    }
    ids = sorted(set(record_ids))
    full = {
        "class": kind,
        "finding_id": finding_id,
        "record_ids": ids,
        "keeper_record_id": None,
        "predecessor_record_id": None,
        "evidence_record_id": None,
        **roles,
        "preconditions": pre,
    }
    action = {"action_id": domain_id("memzoi/maintenance/action", full), **full}
    return {k: v for k, v in action.items() if v is not None}


def exact_duplicates(
    loaded: list[Loaded], selected: set[str], digest: str
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Exact-duplicate findings and their ``consolidate_exact_duplicates`` action candidates."""
    groups: dict[str, list[Loaded]] = {}
    for r in loaded:
        if r.snapshot["current_assertion"]:
            groups.setdefault(r.duplicate_claim, []).append(r)
    findings, actions = [], []
    for claim, group in sorted(groups.items()):
        ids = [r.id for r in group]
        if len(group) < 2 or not selected.intersection(ids):
            continue
        f = new_finding(
            "exact_duplicate",
            ids,
            finding_comparison_digest(group),
            [{"code": "exact_claim_projection", "digest": claim}],
            "exact",
        )
        a = new_action(
            "consolidate_exact_duplicates", f["finding_id"], ids, digest, group, keeper_record_id=sorted(ids)[0]
        )
        f["proposed_action_ids"].append(a["action_id"])
        findings.append(f)
        actions.append(a)
    return findings, actions


def contradictions(loaded: list[Loaded], selected: set[str]) -> list[dict[str, Any]]:
    """Contradiction findings: each connected set of mutually contradicting records, with its edges."""
    cands = [
        (r, sig)
        for r in loaded
        if r.snapshot["current_assertion"]
        and r.data.get("lane") in DURABLE_LANES
        and r.data.get("type") in CLAIM_TYPES
        and not conditional_or_temporal(r.body)
        for sig in [polarity_signature(r.body)]
        if sig is not None
    ]
    adj: list[set[int]] = [set() for _ in cands]
    for i, (a, (sa, na)) in enumerate(cands):
        for j in range(i + 1, len(cands)):
            b, (sb, nb) = cands[j]
            if (
                sa == sb
                and na != nb
                and _same_context(a, b)
                and not _related(a, b)
                and paths_overlap(list(a.data.get("applies_to") or []), list(b.data.get("applies_to") or []))
            ):
                adj[i].add(j)
                adj[j].add(i)
    seen, out = [False] * len(cands), []
    for start in range(len(cands)):
        if seen[start] or not adj[start]:
            continue
        comp, todo = [], [start]
        while todo:
            k = todo.pop()
            if not seen[k]:
                seen[k] = True
                comp.append(k)
                todo.extend(sorted(adj[k] - set(comp), reverse=True))
        comp.sort()
        group = [cands[k][0] for k in comp]
        if not selected.intersection(r.id for r in group):
            continue
        edges = sorted(
            (
                {
                    "record_ids": sorted([cands[x][0].id, cands[y][0].id]),
                    "evidence_digest": domain_id(
                        "memzoi/maintenance/contradiction-edge", sorted([cands[x][0].id, cands[y][0].id])
                    ),
                    "reason_code": "high_confidence_unresolved_contradiction",
                }
                for x in comp
                for y in sorted(adj[x])
                if y > x
            ),
            key=lambda e: tuple(e["record_ids"]),
        )
        evidence = [
            {
                "code": "allowlisted_symmetric_polarity",
                "digest": domain_id("memzoi/maintenance/contradiction-signature", cands[start][1][0]),
            }
        ]
        out.append(
            new_finding(
                "high_confidence_contradiction",
                [r.id for r in group],
                finding_comparison_digest(group),
                evidence,
                "high",
                edges,
            )
        )
    return out


def staleness(
    loaded: list[Loaded], selected: set[str], at: datetime, fmt: Callable[[datetime], str]
) -> list[dict[str, Any]]:
    """Stale findings (report only)."""
    out = []
    for r in loaded:
        if not (
            r.snapshot["current_assertion"]
            and r.data.get("status") == "active"
            and r.data.get("lane") in DURABLE_LANES
            and r.id in selected
        ):
            continue
        stale_at = r.freshness + STALE_AFTER
        if at >= stale_at:
            out.append(
                new_finding(
                    "stale",
                    [r.id],
                    finding_comparison_digest([r]),
                    [
                        {
                            "code": "freshness_age_threshold",
                            "digest": domain_id("memzoi/maintenance/freshness", fmt(r.freshness)),
                            "boundary": fmt(stale_at),
                        }
                    ],
                    "report_only",
                )
            )
    return out


def expiry(loaded: list[Loaded], selected: set[str]) -> list[dict[str, Any]]:
    """Expired findings: lifecycle ``expired`` and/or retention ``query_only`` (evidence code as Memzoi spells
    it: ``retention_`` plus the reason's variant name in lower case, e.g. ``retention_episodicordinarywindow``)."""
    out = []
    for r in loaded:
        s = r.snapshot
        query_only = s["retention_state"] == "query_only"
        if not (
            r.eligible and r.id in selected and (s["status"] == "expired" or (s["status"] == "active" and query_only))
        ):
            continue
        evidence = []
        if s["status"] == "expired":
            evidence.append({"code": "lifecycle_expired", "digest": s["temporal_digest"]})
        if query_only:
            e = {"code": "retention_" + s["retention_reason"].replace("_", ""), "digest": s["temporal_digest"]}
            if s.get("retention_boundary"):
                e["boundary"] = s["retention_boundary"]
            evidence.append(e)
        out.append(new_finding("expired", [r.id], finding_comparison_digest([r]), evidence, "exact"))
    return out
