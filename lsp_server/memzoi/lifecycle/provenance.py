"""Where a record or packet stands, as short sentences: whether it is a current assertion, what its retention
says, its attestation, what a packet targets, and the ledger's changes of the file.

These are the facts of the editor's provenance hover; the rules behind them are the core's own
(:mod:`memzoi.judge.retention` for Memzoi's current-assertion and retention rules, reference ``memzoi-format.md`` §5,
and :mod:`memzoi.judge.attestation` for §4.1). A sentence never quotes field values beyond ids, lanes, timestamps and
hashes, so no secret can reach a hover through it. Every function here is total: a failing source gives an
"unknown (…)" sentence instead of an exception, so one odd file never breaks a hover.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from ..base.views import Frontmatter, block
from ..judge.attestation import AttestationState, check_attestation
from ..judge.retention import current_assertion, evaluate_retention
from ..judge.workspace import Role
from ..ledger import ChangeRecord
from ..read.document import Document
from .propose import mcp_provenance


@dataclass(frozen=True)
class RecordStanding:
    """Sentences on one record: ``current`` (``yes`` or ``no: …``), ``retention`` and ``attestation``."""

    current: str
    retention: str
    attestation: str


def _exclusion_reason(ex: Mapping[str, Any]) -> str:
    if ex.get("kind") == "lifecycle_status":
        return f"status is {ex.get('status')}, only active records are current"
    if ex.get("reason") == "invalid_retention":
        return "retention facts are invalid"
    return f"past its retention boundary {ex.get('boundary')} ({ex.get('reason')})"


def current_sentence(data: Mapping[str, Any], now: datetime) -> str:
    """``yes`` when the record is a current assertion at ``now`` (Memzoi: an active record within its lane's
    retention boundary), else ``no: <every reason>``; ``data`` is the record's frontmatter mapping."""
    try:
        fm = Frontmatter(data)
        ca = current_assertion(fm.status or "", fm.lane or "", fm.retention, now)
    except Exception as err:  # malformed facts of a hand-edited file: say so, never fail the hover
        return f"unknown ({type(err).__name__})"
    if ca.is_current:
        return "yes"
    return "no: " + "; ".join(_exclusion_reason(ex) for ex in ca.exclusions)


def retention_sentence(data: Mapping[str, Any], now: datetime) -> str:
    """The lane's retention boundary at ``now`` and the rule that set it (``semantic lane, no age limit
    (no_age_limit)``, ``episodic lane, query-only since <instant> (<reason>)``)."""
    fm = Frontmatter(data)
    lane = fm.lane or ""
    try:
        decision = evaluate_retention(lane, fm.retention, now)
    except Exception:
        return "invalid retention facts"
    if decision.boundary is None:
        return f"{lane or '?'} lane, no age limit ({decision.reason})"
    state = "current until" if decision.is_current else "query-only since"
    return f"{lane} lane, {state} {decision.boundary} ({decision.reason})"


def attestation_sentence(document: Document, record_id: str | None, *, valid: bool) -> str:
    """The record's attestation state (reference §4.1): attested (with the first 12 hex digits of the revision and
    the decision time), stale (edited after review), unattested, or the state's name."""
    try:
        att = check_attestation(document, record_id, valid=valid)
    except Exception as err:
        return f"unknown ({type(err).__name__})"
    short = (att.recorded or "")[:12]
    if att.state is AttestationState.ATTESTED:
        return f"attested, revision {short}, decided {att.decision_at}"
    if att.state is AttestationState.STALE:
        return f"stale: edited after review (attested revision {short}, decided {att.decision_at})"
    if att.state is AttestationState.UNATTESTED:
        return "unattested (no materialization decision recorded)"
    return str(att.state.value)


def record_standing(document: Document, record_id: str | None, *, valid: bool, now: datetime) -> RecordStanding:
    """The three sentences of a record (``valid``: its frontmatter passed the schema)."""
    data = block(document.data)
    return RecordStanding(
        current_sentence(data, now),
        retention_sentence(data, now),
        attestation_sentence(document, record_id, valid=valid),
    )


def packet_targets(data: Mapping[str, Any]) -> list[tuple[str, str]]:
    """``[(label, record id)]`` a packet acts on: each ``supersedes`` entry, then ``proposal.target``."""
    fm = Frontmatter(data)
    out = [("supersedes", target) for i, target in fm.supersedes_list if i is not None]
    if fm.proposal.target:
        out.append(("target", fm.proposal.target))
    return out


def change_line(change: ChangeRecord, undo_available: bool) -> str:
    """One ledgered change as a line: operation, status, actor, source, time, whether undo is available (for an
    applied change) and the first 12 characters of its id."""
    when = change.undone_at or change.applied_at or change.updated_at
    undo = ""
    if change.status == "applied":
        undo = ", undo available" if undo_available else ", undo unavailable (files changed since)"
    return f"{change.operation} {change.status} by {change.actor} ({change.source}) at {when}{undo} [{change.id}]"


def history_lines(
    changes: Sequence[ChangeRecord], undo_available: Callable[[ChangeRecord], bool], limit: int = 5
) -> list[str]:
    """The first ``limit`` of ``changes`` (newest first) as :func:`change_line` lines; ``undo_available`` is asked
    only for applied changes."""
    return [change_line(c, c.status == "applied" and undo_available(c)) for c in changes[:limit]]


def proposed_via(changes: Sequence[ChangeRecord]) -> str | None:
    """``proposed by <client> via MCP at <time>…`` when the change that created the packet (the oldest of
    ``changes``, newest first, that created a file) is an MCP proposal, else ``None``."""
    created = [c for c in changes if c.files and any(f.before is None for f in c.files)]
    return mcp_provenance(created[-1] if created else None)


def superseded_by(graph: Any, record_id: str) -> list[str]:
    """Ids of the records whose ``supersedes`` names ``record_id``, sorted, from the cross-file graph ``graph`` (a
    :class:`memzoi.project.crossfile.Workspace`): only a record in ``records/`` supersedes (a packet's ``supersedes`` is a
    proposal, not yet a fact). A record's ``supersedes`` is one record id (reference ``memzoi-format.md`` §1.4). Reads
    ``graph.referrers``, so the cost is the number of files referring to ``record_id``, not the project's size."""
    out = []
    for key in graph.referrers(record_id):
        facts = graph.facts(key)
        if facts is None or facts.kind != "record" or facts.role != Role.RECORD.value:
            continue
        if any(r.field == "supersedes" and r.target == record_id for r in facts.refs):
            out.append(facts.ident or key)
    return sorted(out)
