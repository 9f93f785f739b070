"""Facts shown in the provenance hover, gathered from the core (retention, attestation, ledger) and from the
project's files. Presentation lives in :mod:`memzoi_lsp.hover`; nothing here decides policy."""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from memzoi.attestation import AttestationState, check_attestation
from memzoi.ledger import ChangeRecord, Ledger, cached_runtime_dir
from memzoi.lifecycle.propose import mcp_provenance
from memzoi.models.common import is_identifier
from memzoi.retention import current_assertion, evaluate_retention, utc_now
from memzoi.runtime import LEDGER_DB
from memzoi.workspace import Role

from . import readiness
from .documents import Snapshot, uri_to_path

if TYPE_CHECKING:
    from .server import MemzoiServer

log = logging.getLogger("memzoi_lsp.provenance")


@dataclass
class Facts:
    """Provenance facts of one record or packet, as short sentences."""

    current: str = ""
    retention: str = ""
    attestation: str = ""
    apply_state: str = ""
    superseded_by: list[str] = field(default_factory=list)
    targets: list[tuple[str, str]] = field(default_factory=list)
    history: list[str] = field(default_factory=list)
    proposed_via: str | None = None


def memzoi_dir(ls: "MemzoiServer", snap: Snapshot) -> Path | None:
    """The ``.memzoi`` directory the snapshot belongs to."""
    if snap.analysis.placement.memzoi_dir is not None:
        return snap.analysis.placement.memzoi_dir
    project = ls.project_for(snap.path)
    return project.memzoi_dir if project else None


def record_path(ls: "MemzoiServer", snap: Snapshot, record_id: str) -> Path | None:
    """Path of the record ``record_id`` in the snapshot's project, when the file exists."""
    base = memzoi_dir(ls, snap)
    if base is None or not is_identifier(record_id.strip()):
        return None  # never build a path from something that is not an id (no `..`, no absolute paths)
    p = base / "records" / f"{record_id.strip()}.md"
    return p if p.is_file() else None


def proposal_path(ls: "MemzoiServer", snap: Snapshot, proposal_id: str) -> Path | None:
    """Path of the packet ``proposal_id`` (resolved first, then pending), when it exists."""
    base = memzoi_dir(ls, snap)
    pid = proposal_id.strip()
    if base is None or not is_identifier(pid):
        return None
    for folder in ("resolved/applied", "resolved/rejected", "pending"):
        p = base / "proposals" / folder / f"{pid}.md"
        if p.is_file():
            return p
    return None


def collect(ls: "MemzoiServer", snap: Snapshot) -> Facts:
    """Gather the facts for ``snap`` (never raises: a failing source gives an "unknown" sentence)."""
    facts = Facts()
    data = snap.analysis.document.data or {}
    is_proposal = snap.analysis.kind == "proposal" or snap.analysis.placement.role.is_proposal
    now = utc_now()
    lane = str(data.get("lane") or "")
    retention = data.get("retention") if isinstance(data.get("retention"), dict) else {}
    if not is_proposal:
        try:
            ca = current_assertion(str(data.get("status") or ""), lane, retention, now)
            if ca.is_current:
                facts.current = "yes"
            else:
                why = []
                for ex in ca.exclusions:
                    if ex.get("kind") == "lifecycle_status":
                        why.append(f"status is {ex.get('status')}, only active records are current")
                    elif ex.get("reason") == "invalid_retention":
                        why.append("retention facts are invalid")
                    else:
                        why.append(f"past its retention boundary {ex.get('boundary')} ({ex.get('reason')})")
                facts.current = "no: " + "; ".join(why)
        except Exception as err:
            facts.current = f"unknown ({type(err).__name__})"
        try:
            decision = evaluate_retention(lane, retention, now)
            if decision.boundary is None:
                facts.retention = f"{lane or '?'} lane, no age limit ({decision.reason})"
            else:
                state = "current until" if decision.is_current else "query-only since"
                facts.retention = f"{lane} lane, {state} {decision.boundary} ({decision.reason})"
        except Exception:
            facts.retention = "invalid retention facts"
        try:
            att = check_attestation(
                snap.analysis.document,
                snap.analysis.placement.identity or data.get("id"),
                valid=snap.analysis.model is not None,
            )
            short = (att.recorded or "")[:12]
            if att.state is AttestationState.ATTESTED:
                facts.attestation = f"attested, revision {short}, decided {att.decision_at}"
            elif att.state is AttestationState.STALE:
                facts.attestation = (
                    f"stale: edited after review (attested revision {short}, decided {att.decision_at})"
                )
            elif att.state is AttestationState.UNATTESTED:
                facts.attestation = "unattested (no materialization decision recorded)"
            else:
                facts.attestation = f"{att.state.value}"
        except Exception as err:
            facts.attestation = f"unknown ({type(err).__name__})"
        rid = snap.analysis.placement.identity or data.get("id")
        if rid:
            facts.superseded_by = superseded_by(ls, snap, str(rid))
    else:
        block = data.get("proposal") if isinstance(data.get("proposal"), dict) else {}
        for target in data.get("supersedes") or [] if isinstance(data.get("supersedes"), list) else []:
            facts.targets.append(("supersedes", str(target)))
        if block.get("target"):
            facts.targets.append(("target", str(block["target"])))
        verdict = readiness.of(ls, snap)
        if snap.analysis.placement.role in (Role.APPLIED, Role.REJECTED) or data.get("status") in ("applied", "rejected"):
            facts.apply_state = "no: already resolved"
        elif verdict is not None:
            facts.apply_state = verdict.statement()
    changes = ledger_changes(ls, snap)
    facts.history = history(ls, snap, changes)
    if is_proposal:
        # The change that created the packet is the oldest one touching it.
        created = [c for c in changes if c.files and any(f.before is None for f in c.files)]
        facts.proposed_via = mcp_provenance(created[-1] if created else None)
    return facts


def superseded_by(ls: "MemzoiServer", snap: Snapshot, record_id: str) -> list[str]:
    """Ids of records in the project whose ``supersedes`` names ``record_id`` (from the scan's analyses)."""
    project = ls.project_for(snap.path)
    if project is None:
        return []
    out = []
    for key in project.crossfile.referrers(record_id):  # O(referrers), not O(workspace)
        facts = project.crossfile.facts(key)
        if facts is None or facts.kind != "record" or facts.role != Role.RECORD.value:
            continue
        if any(r.field == "supersedes" and r.target == record_id for r in facts.refs):
            out.append(facts.ident or key)
    return sorted(out)


def ledger_changes(ls: "MemzoiServer", snap: Snapshot, limit: int = 20) -> list[ChangeRecord]:
    """The ledger's changes touching this file, newest first (never creates a ledger; ``[]`` on any error)."""
    project = ls.project_for(snap.path)
    if project is None or snap.path is None:
        return []
    try:
        rdir = cached_runtime_dir(project.root, create=False)
        if not (rdir / LEDGER_DB).is_file():
            return []
        rel = snap.path.resolve().relative_to(project.root).as_posix()
        ledger = Ledger(rdir / LEDGER_DB)
        with ledger.connect() as conn:
            return ledger.history(conn, rel, limit)
    except Exception as err:  # an unreadable ledger must not break hover
        log.info("ledger history unavailable: %s", err)
        return []


def history(ls: "MemzoiServer", snap: Snapshot, changes: list[ChangeRecord], limit: int = 5) -> list[str]:
    """``changes`` (newest first) as one line each, at most ``limit``."""
    project = ls.project_for(snap.path)
    if project is None:
        return []
    out = []
    for c in changes[:limit]:
        when = c.undone_at or c.applied_at or c.updated_at
        undo = ""
        if c.status == "applied":
            can = project.ledger.undo_available(snap.path, c)
            undo = ", undo available" if can else ", undo unavailable (files changed since)"
        out.append(f"{c.operation} {c.status} by {c.actor} ({c.source}) at {when}{undo} [{c.id[:12]}]")
    return out
