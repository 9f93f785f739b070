"""Reconciliation: classify the changes a dead process left in flight by comparing files with snapshots."""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path

from ..base.fsutil import read_state, temp_pattern
from ..base.lock import DEFAULT_TIMEOUT, LockBusy, held, lifecycle_lock
from ..base.runtime import LEDGER_DB, LOCK_FILE, database_started
from .folders import remove_recorded
from .model import RECONCILED, UNCERTAIN_CHANGE, ChangePlan, ChangeRecord, FileChange, Reconciled, Refusal, unsettled
from .store import Ledger, _root, _state_or_error, cached_runtime_dir, safe_path


def _classify(root: Path, files: list[FileChange], phase: str) -> str:
    states = [_state_or_error(root, f.path) for f in files]
    all_after = all(s == f.after for s, f in zip(states, files))
    all_before = all(s == f.before for s, f in zip(states, files))
    if phase == "apply":
        return "applied" if all_after else "failed" if all_before else "uncertain"
    return "undone" if all_before else "applied" if all_after else "uncertain"


def _cleanup_temps(root: Path, files: list[FileChange]) -> None:
    """Remove temporary files an interrupted write left beside the change's files: only those holding the
    file's before or after bytes (or a prefix of them: an unfinished temporary copy). Anything else
    is an edit that was displaced when the process died and stays on disk."""
    for f in files:
        try:
            path = safe_path(root, f.path)
        except Refusal:
            continue
        parent = path.parent
        if not parent.is_dir() or parent.is_symlink():
            continue
        for entry in parent.glob(temp_pattern(path)):
            try:
                data = read_state(entry)
            except OSError:
                continue
            if data is None:
                continue
            ours = (
                data == f.before
                or data == f.after
                or any(isinstance(side, bytes) and side.startswith(data) for side in (f.before, f.after))
            )
            if ours:
                try:
                    entry.unlink()
                except OSError:
                    pass


def foreseen(root: Path, change: ChangeRecord) -> str:
    """The status reconciliation would give the in-flight (``applying``/``undoing``) ``change`` now (the table of
    :mod:`memzoi.ledger`), found read-only: the files are compared with the snapshots, nothing is written."""
    return _classify(root, change.files, "apply" if change.status == "applying" else "undo")


def writer_alive(root: Path) -> bool:
    """Whether a process holds the lifecycle lock of the project at ``root`` now (a live change, which finishes or
    reconciles its own), by :func:`memzoi.base.lock.held`: the lock is taken and let go at once, without waiting,
    and never created. A lock file that cannot be opened counts as held (nothing is foreseen of a change whose
    writer cannot be ruled out)."""
    return held(cached_runtime_dir(root, create=False) / LOCK_FILE)


def refuse_unsettled(ledger: Ledger, conn: sqlite3.Connection, plan: ChangePlan) -> None:
    """Refuse (``uncertain_change``) ``plan`` when it touches a file of an ``uncertain`` change: run under the lock
    after reconciliation, so a change a dead process left in flight is classified first. A recovery (operation
    ``recover``) is what settles such a change and is never refused here; undo is not planned through here."""
    if plan.operation == "recover":
        return
    paths = {f.path for f in plan.files}
    for change in ledger.by_status(conn, "uncertain"):
        hit = next((f.path for f in change.files if f.path in paths), None)
        if hit is not None:
            raise Refusal(UNCERTAIN_CHANGE, f"{hit}: {unsettled(change)}, and retry; nothing was changed", hit)


def unsettled_report(project_root: str | os.PathLike[str]) -> list[tuple[str, str]]:
    """``(message, what to run)`` of every change of the project's ledger that a process left in flight
    (``applying``/``undoing``) and of every ``uncertain`` one, oldest first, as ``memzoi doctor`` reports them. An
    in-flight change whose process is gone says what reconciliation will make of it (:func:`foreseen`). Read-only:
    nothing is reconciled, and the lock is only looked at (:func:`writer_alive`); ``[]`` without a ledger."""
    root = _root(project_root)
    ledger = Ledger.for_project(root, create=False)
    if not ledger.exists:
        return []
    with ledger.connect() as conn:
        changes = ledger.by_status(conn, "applying", "undoing", "uncertain")
    alive: bool | None = None
    out = []
    for change in changes:
        where = f"of {len(change.files)} file(s)"
        settle = (
            f"settle change {change.id}: `memzoi reconcile --recover {change.id} restore-before|complete-after|accept`"
        )
        if change.status == "uncertain":
            out.append((unsettled(change, where), f"{settle} (`memzoi history` shows its files)"))
            continue
        alive = writer_alive(root) if alive is None else alive
        head = f"change {change.id} ({change.operation})"
        if alive:
            out.append(
                (f"{head} is {change.status} in a live memzoi process", "run `memzoi doctor` again when it is done")
            )
            continue
        status = foreseen(root, change)
        if status == "uncertain":
            out.append((unsettled(change, where), f"run `memzoi reconcile`, then {settle}"))
            continue
        side = "after" if status == "applied" else "before"
        out.append(
            (
                f"{head} was left {change.status} by a process that ended; its files are all at their {side} bytes, "
                f"so reconciliation records it {status} (nothing is replayed)",
                "run `memzoi reconcile`",
            )
        )
    return out


def _reconcile_locked(root: Path, ledger: Ledger, conn: sqlite3.Connection) -> list[Reconciled]:
    out = []
    for change in ledger.by_status(conn, "applying", "undoing"):
        phase = "apply" if change.status == "applying" else "undo"
        _cleanup_temps(root, change.files)
        status = _classify(root, change.files, phase)
        diagnostic = RECONCILED
        if status == "uncertain":
            diagnostic = (
                f"{RECONCILED}: the files match neither the before nor the after snapshot; choose a recovery "
                f"(`memzoi reconcile --recover {change.id} restore-before|complete-after|accept`)"
            )
        ledger.set_status(conn, change.id, status, diagnostic=diagnostic, phase=phase)
        if status in ("failed", "undone"):  # every file at its before bytes: the folders it made go, while empty
            remove_recorded(conn, root, change.id)
        out.append(Reconciled(change.id, change.status, status))
    return out


def reconcile(project_root: str | os.PathLike[str], *, lock_timeout: float = DEFAULT_TIMEOUT) -> list[Reconciled]:
    """Classify every in-flight change left by a dead process (table in the module docstring); never writes a
    git-plane file (only removes temporary files of interrupted atomic writes)."""
    root = _root(project_root)
    try:
        with lifecycle_lock(root, timeout=lock_timeout, runtime_dir=cached_runtime_dir(root)) as rdir:
            ledger = Ledger.for_project(root, rdir)
            with ledger.connect() as conn:
                return _reconcile_locked(root, ledger, conn)
    except LockBusy as err:
        raise Refusal("lock_busy", str(err)) from err


#: How long a starting process waits for the lifecycle lock before leaving the ledger to its holder (seconds): a
#: live writer finishes its own change, and the next command reconciles whatever is left.
START_LOCK_TIMEOUT = 0.5


def reconcile_at_start(project_root: str | os.PathLike[str]) -> list[Reconciled] | None:
    """What a process starting on ``project_root`` does (SPEC §6: on start, every ``applying``/``undoing`` change
    is reconciled; never replayed): :func:`reconcile`, when the project has a ledger. Returns the reconciled
    changes (usually none), or ``None`` when nothing was looked at: no ledger (nothing is created for a project
    that never changed a file) or the lifecycle lock held by another process for :data:`START_LOCK_TIMEOUT`.
    Raises :class:`~memzoi.base.runtime_errors.RuntimeStateError` when the ledger cannot be read (``corrupt_database``
    for a damaged one), as :func:`reconcile` does."""
    root = _root(project_root)
    try:
        if not database_started(cached_runtime_dir(root, create=False) / LEDGER_DB):
            return None
    except OSError:  # no git, odd paths: no ledger to look at
        return None
    try:
        return reconcile(root, lock_timeout=START_LOCK_TIMEOUT)
    except Refusal as err:
        if err.code == "lock_busy":
            return None
        raise
