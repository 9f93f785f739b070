"""Facts shown in the provenance hover, gathered from the core (:mod:`memzoi.lifecycle.provenance` says where a record or
packet stands; the ledger and the cross-file graph say what touched it) for the project the file belongs to.
Presentation lives in :mod:`memzoi_lsp.hover`; nothing here decides policy."""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from memzoi.base.views import Frontmatter
from memzoi.judge.workspace import Role, packet_file, record_file

from . import readiness
from .documents import Snapshot

if TYPE_CHECKING:
    from memzoi.ledger import ChangeRecord

    from .session import ReadSession

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
    #: Why the ledger's history cannot be shown (a damaged ledger: what it is and to run `memzoi doctor`), or None.
    history_unavailable: str | None = None
    proposed_via: str | None = None


def memzoi_dir(ls: ReadSession, snap: Snapshot) -> Path | None:
    """The ``.memzoi`` directory the snapshot belongs to."""
    if snap.analysis.placement.memzoi_dir is not None:
        return snap.analysis.placement.memzoi_dir
    project = ls.project_for(snap.path)
    return project.memzoi_dir if project else None


def record_path(ls: ReadSession, snap: Snapshot, record_id: str) -> Path | None:
    """Path of the record ``record_id`` in the snapshot's project, when the file exists
    (:func:`memzoi.judge.workspace.record_file`)."""
    base = memzoi_dir(ls, snap)
    return record_file(base, record_id) if base is not None else None


def proposal_path(ls: ReadSession, snap: Snapshot, proposal_id: str) -> Path | None:
    """Path of the packet ``proposal_id`` (resolved first, then pending), when it exists
    (:func:`memzoi.judge.workspace.packet_file`)."""
    base = memzoi_dir(ls, snap)
    return packet_file(base, proposal_id) if base is not None else None


def collect(ls: ReadSession, snap: Snapshot) -> Facts:
    """Gather the facts for ``snap`` from the core (never raises: a failing source gives an "unknown" sentence)."""
    from memzoi.judge.retention import utc_now  # noqa: PLC0415 lazy: start-up
    from memzoi.lifecycle.provenance import packet_targets, proposed_via, record_standing  # noqa: PLC0415 lazy: start-up

    facts = Facts()
    analysis = snap.analysis
    data = analysis.document.data or {}
    fm = Frontmatter(data)
    if analysis.kind == "proposal" or analysis.placement.role.is_proposal:
        facts.targets = packet_targets(data)
        verdict = readiness.of(ls, snap)
        if analysis.placement.role in (Role.APPLIED, Role.REJECTED) or fm.status in ("applied", "rejected"):
            facts.apply_state = "no: already resolved"
        elif verdict is not None:
            facts.apply_state = verdict.statement()
        changes = ledger_changes(ls, snap, facts)
        facts.proposed_via = proposed_via(changes)
    else:
        rid = analysis.placement.identity or fm.id
        standing = record_standing(analysis.document, rid, valid=analysis.model is not None, now=utc_now())
        facts.current, facts.retention, facts.attestation = standing.current, standing.retention, standing.attestation
        if rid:
            facts.superseded_by = superseded_by(ls, snap, str(rid))
        changes = ledger_changes(ls, snap, facts)
    facts.history = history(ls, snap, changes)
    return facts


def superseded_by(ls: ReadSession, snap: Snapshot, record_id: str) -> list[str]:
    """Ids of records in the project whose ``supersedes`` names ``record_id`` (:func:`memzoi.lifecycle.provenance.superseded_by`
    over the project's cross-file graph)."""
    from memzoi.lifecycle.provenance import superseded_by as superseding  # noqa: PLC0415 lazy: start-up

    project = ls.project_for(snap.path)
    return superseding(project.crossfile, record_id) if project is not None else []


def ledger_changes(ls: ReadSession, snap: Snapshot, facts: Facts, limit: int = 20) -> list[ChangeRecord]:
    """The ledger's changes touching this file, newest first, as the project's ledger view sees them
    (:meth:`memzoi.ledger.LedgerView.file_history`: never creates a ledger, ``[]`` when there is none or it cannot
    be read; a change a dead process left in flight with the status its diagnostics and actions see). A damaged
    ledger sets ``facts.history_unavailable`` (its path shown as :func:`~memzoi.judge.pathsafety.with_shown_paths`
    shows it), so that the hover never shows it as a file without history."""
    project = ls.project_for(snap.path)
    if project is None or snap.path is None:
        return []
    try:
        found = project.ledger.file_history(snap.path, limit=limit)
    except Exception as err:  # the barrier: an unexpected failure of the ledger must not break hover
        log.info("ledger history unavailable: %s", type(err).__name__)
        return []
    problem = found.problem()
    if problem is not None and found.damage is not None:
        from memzoi.judge.pathsafety import with_shown_paths  # noqa: PLC0415 lazy: start-up

        facts.history_unavailable = with_shown_paths(problem, found.damage.path)
    return found.changes


def history(ls: ReadSession, snap: Snapshot, changes: list[ChangeRecord], limit: int = 5) -> list[str]:
    """``changes`` (newest first) as one line each, at most ``limit`` (:func:`memzoi.lifecycle.provenance.history_lines`)."""
    from memzoi.lifecycle.provenance import history_lines  # noqa: PLC0415 lazy: start-up

    project = ls.project_for(snap.path)
    if project is None or snap.path is None:
        return []
    path = snap.path
    return history_lines(changes, lambda c: project.ledger.undo_available(path, c), limit)
