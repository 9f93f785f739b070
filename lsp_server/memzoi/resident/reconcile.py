"""Classifying candidates left in flight by a dead process (reference ``zuno-memory.md`` §3 "Startup
reconciliation"); nothing is ever replayed.

=============  ======================  =============
in flight      current entries equal   new status
=============  ======================  =============
``applying``   after                   ``applied``
``applying``   before                  ``failed``
``undoing``    before                  ``undone``
``undoing``    after                   ``applied``
either         neither (or unreadable) ``uncertain``
=============  ======================  =============

``after`` is tested first for ``applying`` and ``before`` first for ``undoing``, so a no-op add reconciles to
``applied``. A row without a snapshot is ``uncertain``. An ``uncertain`` candidate is settled only by an explicit
recovery (:func:`memzoi.resident.service.recover`). The same comparison classifies a write that failed.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass
from pathlib import Path

from ..ledger import FileChange, Refusal
from ..ledger.reconcile import _cleanup_temps
from . import candidates as db
from .encoding import Layout, decode
from .format import parse, serialize
from .store import read_file, read_raw

RECONCILED = "reconciled after process restart without replay"


@dataclass(frozen=True)
class Reconciled:
    """One in-flight candidate classified: its id, the status it had and the one it has now."""

    candidate_id: str
    previous: str
    status: str


def current_entries(path: Path) -> list[str] | None:
    """The entries of resident file ``path`` now, or ``None`` when it cannot be read."""
    try:
        _, text, _ = read_file(path)
    except Refusal:
        return None
    return parse(text or "")


def classify(phase: str, current: list[str] | None, before: list[str], after: list[str]) -> str:
    """The status of an interrupted or failed ``apply``/``undo`` from the current entries (table above)."""
    if current is None:
        return "uncertain"
    if phase == "apply":
        return "applied" if current == after else "failed" if current == before else "uncertain"
    return "undone" if current == before else "applied" if current == after else "uncertain"


def uncertain_reason(cand: db.Candidate) -> str:
    """Why the ``uncertain`` candidate ``cand`` is uncertain, in words that match what happened: an interrupted
    write classified on restart (its diagnostic is :data:`RECONCILED`), a recovery of it undone, or a write or undo
    refused because the file changed outside review (nothing written; :func:`memzoi.resident.service.undo`)."""
    note = cand.error or ""
    if RECONCILED in note:
        return "was interrupted (the process stopped mid-write) and on restart could not be classified"
    if note.startswith("recovery candidate"):
        return "had its recovery undone"
    if cand.undone_by is not None:
        return "had its undo refused because the file changed outside review since it was applied (nothing was written)"
    return "had its write refused because the file changed outside review (nothing was written)"


def recovery_hint(candidate_id: str) -> str:
    """What to run to settle an uncertain candidate."""
    return (
        f"the file matches neither snapshot: its content is kept; choose a recovery with `memzoi resident "
        f"reconcile --recover {candidate_id} restore-before|complete-after|accept`"
    )


def remove_temps(path: Path, before: list[str], after: list[str], recorded: Layout | None = None) -> None:
    """Remove temporary files an interrupted atomic write of ``before`` or ``after`` left beside ``path`` (the
    ledger's cleanup, given the snapshots encoded in the file's layout, completed from the candidate's ``recorded``
    one as the write did, so it recognises its own temporary copies)."""
    try:
        _, data, _ = read_raw(path)
        layout = decode(data, path)[1] if data is not None else Layout()
    except Refusal:
        layout = Layout()
    layout = layout.fill(recorded)
    snaps = [layout.encode(serialize(before)), layout.encode(serialize(after))]
    _cleanup_temps(path.parent, [FileChange(path.name, snaps[0], snaps[1])])


def reconcile_locked(conn: sqlite3.Connection, path: Path) -> list[Reconciled]:
    """Classify every ``applying``/``undoing`` candidate of resident file ``path`` (the caller holds its lock)."""
    out = []
    for cand in db.inflight(conn, [str(path)]):
        phase = "apply" if cand.status == "applying" else "undo"
        if cand.before is None or cand.after is None:
            missing = "before" if cand.before is None else "after"
            status, note = "uncertain", f"{cand.status} candidate has no {missing} snapshot; {RECONCILED}"
        else:
            remove_temps(path, cand.before, cand.after, Layout.from_json(cand.layout))
            status = classify(phase, current_entries(path), cand.before, cand.after)
            note = RECONCILED if status != "uncertain" else f"{RECONCILED}: {recovery_hint(cand.id)}"
        db.set_status(conn, cand.id, status, note)
        out.append(Reconciled(cand.id, cand.status, status))
    return out
