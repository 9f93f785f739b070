"""Read-side queries of the ledger: history, one change, one file's ledger state and its findings."""

from __future__ import annotations

import os
import sqlite3
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..base.checkout import read_only, set_aside_ledgers
from ..base.findings import Finding, finding
from ..base.runtime_errors import RuntimeStateError, damage, damaged
from .model import ChangeRecord, Purged, Refusal, unsettled
from .reading import read_ledger
from .store import CHANGE_ID_PREFIX, Ledger, _root, _state_or_error


def history(
    project_root: str | os.PathLike[str], path: str | None = None, *, limit: int | None = None
) -> list[ChangeRecord]:
    """Changes newest first, optionally only those touching ``path`` (project-relative); never takes the lock."""
    ledger = Ledger.for_project(_root(project_root), create=False)
    if not ledger.exists:
        return []
    return read_ledger(ledger, lambda conn: ledger.history(conn, path, limit))  # no write access needed


def undo_drift(
    ledger: Ledger, conn: sqlite3.Connection, change: ChangeRecord, path: str, current: bytes | None
) -> Refusal:
    """The ``undo_drift`` refusal of undoing ``change`` while its file ``path`` (project-relative) holds ``current``
    (``None``: absent) instead of what the change wrote. When a later applied change of the ledger wrote exactly
    ``current`` (the newest such), the refusal names it (``changed by <id> (<operation>, <applied at>)``): that
    change must be undone first. Otherwise the file was changed outside Memzoi, and the refusal says so."""
    for later in ledger.history(conn, path):  # newest first
        if later.seq <= change.seq:
            break
        if later.status == "applied" and any(f.path == path and f.after == current for f in later.files):
            return Refusal(
                "undo_drift",
                f"{path}: changed by {later.id} ({later.operation}, {later.applied_at or later.updated_at}) after "
                f"change {change.id} was applied; undo that change first",
                path,
            )
    return Refusal(
        "undo_drift",
        f"{path}: edited after change {change.id} was applied, so undo is unavailable; restore the file or make the "
        "change by hand",
        path,
    )


def missing_change(project_root: str | os.PathLike[str], change_id: str) -> Refusal:
    """The ``change_not_found`` refusal for ``change_id``, which the live ledger lacks: when a ledger set aside for
    another checkout at this path holds it, the refusal says so (that checkout's changes cannot be undone or
    recovered here); else the plain "no change" one."""
    wanted = change_id.strip()
    wanted = wanted if wanted.startswith(CHANGE_ID_PREFIX) else CHANGE_ID_PREFIX + wanted
    for old in reversed(set_aside_ledgers(project_root)):
        try:
            conn = read_only(old.path)
            try:
                hit = conn.execute("SELECT id FROM change WHERE substr(id, 1, ?) = ?", (len(wanted), wanted)).fetchone()
            finally:
                conn.close()
        except sqlite3.Error:
            continue
        if hit is not None:
            return Refusal(
                "change_not_found",
                f"change {hit[0]} belongs to an earlier checkout at this path, not to this one: its ledger was set "
                f"aside at {old.at} as {old.path.name} in the runtime folder (`memzoi doctor` shows where); this "
                "checkout never made that change, so it cannot be undone or recovered here",
            )
    return Refusal("change_not_found", f"no change {change_id} in the ledger; see `memzoi history`")


@dataclass
class HistoryRead:
    """What a reading of the ledger's history got. ``changes``: newest first. ``damage``: ``None``, or the
    ``corrupt_database`` :class:`~memzoi.base.runtime_errors.RuntimeStateError` naming the damaged ledger, whose
    message ends with what to do (run ``memzoi doctor``; keep a copy first). ``read``: False when the damage kept
    the query itself from reading (``changes`` is then empty and says nothing about the history); True when
    ``changes`` is what SQLite read, every page on the query's path having passed its checks, from a ledger that
    is damaged elsewhere (a change may then be missing: the list is shown as possibly incomplete)."""

    changes: list[ChangeRecord] = field(default_factory=list)
    damage: RuntimeStateError | None = None
    read: bool = True

    def problem(self) -> str | None:
        """``None`` for a sound ledger; else the damage's message (naming the ledger's path as it is: a caller
        that prints it shows it through :func:`~memzoi.judge.pathsafety.with_shown_paths`) followed by how far
        ``changes`` can be trusted: nothing could be read, or what was read may be incomplete."""
        if self.damage is None:
            return None
        if not self.read:
            told = "no change could be read from it"
        elif self.changes:
            told = f"the {len(self.changes)} change(s) shown were read from its sound pages, but some may be missing"
        else:
            told = "its sound pages hold no change here, but some may be missing"
        return f"{self.damage.message} ({told})"


def checked_history(
    project_root: str | os.PathLike[str], path: str | None = None, *, limit: int | None = None, check: bool = True
) -> HistoryRead:
    """:func:`history` that never turns a damaged ledger into "no history". A query that meets a damaged page gives
    ``read=False`` and the damage. With ``check``, a query that succeeded is followed by SQLite's ``PRAGMA
    quick_check`` of the whole file (:func:`~memzoi.base.runtime_errors.damage`, read-only; 5 ms of CPU for a
    ledger of 1,000 changes, 31-43 ms for 10,000, about 58 MB), which finds damage off the query's path (an index such as ``change_status``, a table the
    query did not read); a file that cannot be checked now (busy) is taken as read. Without ``check`` (a hover,
    asked at every pointer rest) only the query's own failure tells. Never creates a ledger and never takes the
    lock; raises :class:`~memzoi.base.runtime_errors.RuntimeStateError` for every other failure (busy, permissions,
    a full disk), as :func:`history` does."""
    ledger = Ledger.for_project(_root(project_root), create=False)
    if not ledger.exists:
        return HistoryRead()
    try:
        changes = read_ledger(ledger, lambda conn: ledger.history(conn, path, limit))
    except RuntimeStateError as err:
        if err.code != "corrupt_database":
            raise
        return HistoryRead([], err, read=False)
    if not check:
        return HistoryRead(changes)
    try:
        problem = damage(ledger.path)
    except sqlite3.Error:  # busy or not openable now: what was read stands, and doctor checks it later
        return HistoryRead(changes)
    return HistoryRead(changes, None if problem is None else damaged(ledger.path, problem, "ledger"))


def file_history(
    project_root: str | os.PathLike[str], path: str | os.PathLike[str], *, limit: int | None = None
) -> HistoryRead:
    """The changes touching the file ``path`` (absolute, or relative to ``project_root``), newest first, at most
    ``limit``: what a hover shows. Never creates a ledger or its runtime directory, never takes the lock, never
    runs the whole file's check (:func:`checked_history` without ``check``) and never raises: a file outside the
    project, a missing ledger or one that cannot be read now (busy, a read-only or full runtime directory) has no
    history to show, an empty read; a damaged one is ``damage`` with ``read=False``, so that the hover says the
    history is unavailable and why instead of showing none."""
    root = _root(project_root)
    try:
        rel = Path(path).resolve().relative_to(root).as_posix() if Path(path).is_absolute() else Path(path).as_posix()
        return checked_history(root, rel, limit=limit, check=False)
    except (ValueError, OSError, RuntimeStateError, sqlite3.Error):
        return HistoryRead()


def get_change(project_root: str | os.PathLike[str], change_id: str) -> ChangeRecord | None:
    """One change by id (or unique prefix, with or without ``chg_``), or ``None``. Raises
    :class:`~memzoi.ledger.Refusal` (``ambiguous_change_id``) for a prefix several changes share."""
    ledger = Ledger.for_project(_root(project_root), create=False)
    if not ledger.exists:
        return None
    return read_ledger(ledger, lambda conn: ledger.get(conn, change_id))


def undo_available(project_root: str | os.PathLike[str], change: ChangeRecord) -> bool:
    """Whether :func:`~memzoi.ledger.undo_change` would undo ``change`` now: it is ``applied``, kept every before
    snapshot (none purged) and every file still equals its after snapshot. The editors' history views show this,
    so that they never offer an undo the ledger refuses."""
    if change.status != "applied" or any(isinstance(f.before, Purged) for f in change.files):
        return False
    root = _root(project_root)
    return all(_state_or_error(root, f.path) == f.after for f in change.files)


def file_ledger_state(project_root: str | os.PathLike[str], rel_path: str, current: bytes | None) -> dict[str, Any]:
    """What the ledger knows about one file, for the ``ledger_uncertain``/``ledger_drift`` diagnostics and hover.

    Returns ``{"uncertain": [change ids], "last": ChangeRecord | None, "undo_available": bool, "drift": bool}``:
    ``drift`` is True when the last applied change's after bytes differ from ``current``; ``undo_available`` is
    False for a change that purged bytes.
    """
    root = _root(project_root)
    out: dict[str, Any] = {"uncertain": [], "last": None, "undo_available": False, "drift": False}
    for change in history(root, rel_path):
        if change.status == "uncertain":
            out["uncertain"].append(change.id)
        if out["last"] is None and change.status == "applied":
            out["last"] = change
            after = next(f.after for f in change.files if f.path == rel_path)
            out["drift"] = after != current
            # Undo needs every file of the change at its after bytes, not only this one.
            # A change that purged bytes on purpose cannot be undone (see :class:`~memzoi.ledger.model.Purged`).
            out["undo_available"] = (
                not out["drift"]
                and not any(f.purged for f in change.files)
                and all(_state_or_error(root, f.path) == f.after for f in change.files if f.path != rel_path)
            )
    return out


def ledger_findings(
    uncertain: list[ChangeRecord], last: ChangeRecord | None, rel_path: str, current: bytes | None, text: str
) -> list[Finding]:
    """``ledger_uncertain`` for each uncertain change touching a file (or one in flight that reconciliation would
    make uncertain: :class:`~memzoi.ledger.view.LedgerView`; the message is :func:`~memzoi.ledger.model.unsettled`), and ``ledger_drift`` when the file's bytes
    (``current``, ``None`` = absent) differ from what its ``last`` applied change wrote (SPEC §4, §6).

    ``rel_path`` is the file's project-relative ``/`` path; findings are anchored on the first line of ``text``
    (the analysed text) and carry ``change_id`` in their data.
    """
    end = len(text.split("\n", 1)[0].rstrip("\r"))
    out: list[Finding] = []
    for change in uncertain:
        out.append(
            finding(
                "ledger_uncertain",
                unsettled(change),
                0,
                end,
                change_id=change.id,
            )
        )
    if last is not None:
        after = next((f.after for f in last.files if f.path == rel_path), None)
        if after != current:
            out.append(
                finding(
                    "ledger_drift",
                    f"this file was edited after change {last.id} ({last.operation}) wrote it, so that change "
                    f"can no longer be undone; {_drift_advice(rel_path)}",
                    0,
                    end,
                    change_id=last.id,
                )
            )
    return out


def _drift_advice(rel_path: str) -> str:
    """What to do about a hand edit, by the kind of file: only a record can be re-attested."""
    if rel_path.startswith(".memzoi/records/"):
        return "re-attest the record if the edit is intended (`memzoi reattest`)"
    if rel_path.startswith(".memzoi/proposals/pending/"):
        return "review the packet as it now reads: applying it writes the edited text"
    return f"keep the edit if it is intended, or put back what the change wrote (`memzoi history {rel_path}`)"
