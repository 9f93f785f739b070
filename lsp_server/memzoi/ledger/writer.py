"""The change engine: record a change durably, write its files guarded and atomically, record the outcome."""

from __future__ import annotations

import json
import os
import sqlite3
from collections.abc import Callable, Iterator
from contextlib import contextmanager, nullcontext
from pathlib import Path

from ..base.fsutil import ExternalChange, swap_file
from ..base.lock import DEFAULT_TIMEOUT, LockBusy, lifecycle_lock
from ..base.runtime_errors import RuntimeStateError, runtime_error
from .folders import new_folders, record as record_folders, remove_empty, remove_recorded
from .guards import purged_message, refuse_secret_paths, refuse_secret_text, refuse_unwritable
from .history import missing_change, undo_drift
from .model import SOURCES, ChangePlan, ChangeResult, FileChange, Purged, Refusal, in_write_order
from .previewed import check_previewed
from .reconcile import _classify, _cleanup_temps, _reconcile_locked, refuse_unsettled
from .schema import as_stored, stored_state
from .store import (
    Ledger,
    _Drift,
    _new_change_id,
    _root,
    _state_or_error,
    _step,
    cached_runtime_dir,
    file_mode,
    may_hold_changes,
    now_utc,
    read_file_state,
    safe_path,
)

# --- the change engine ---------------------------------------------------------------------------------------


def _write_files(root: Path, files: list[FileChange], *, forward: bool, prefix: str) -> None:
    """Guarded atomic writes of every file from its ``from`` state to its ``to`` state, in :func:`~.model.in_write_order`
    (created and rewritten files first, deletions last); step ``{prefix}:file{i}:…`` is the ``i``-th file written.

    All files are checked first (a cheap refusal before anything is touched); then each one is switched by
    :func:`memzoi.base.fsutil.swap_file`, which compares the displaced bytes with the ``from`` state at the moment of
    the switch and puts them back on a mismatch. A mismatch raises :class:`_Drift` (with how many files of that
    order were already written); an I/O error raises ``OSError`` with the file at its ``from`` or ``to`` bytes.
    """
    pairs = in_write_order(files, forward=forward)
    for f, src, _ in pairs:
        if _state_or_error(root, f.path) != src:
            raise _Drift(f.path, 0)
    _step(f"{prefix}:checked")
    for i, (f, src, dst) in enumerate(pairs):
        if src == dst:
            continue
        if isinstance(dst, Purged):
            raise Refusal("purged_secret", purged_message(f.path), f.path)
        path = safe_path(root, f.path)

        def hook(name: str, i: int = i) -> None:
            _step(f"{prefix}:file{i}:{name}")

        try:
            swap_file(path, src, dst, hook=hook, mode=f.after_mode if forward else f.before_mode)
        except ExternalChange as err:
            raise _Drift(f.path, i, err.kept) from None
        _step(f"{prefix}:file{i}:done")


def _rollback(root: Path, files: list[FileChange], count: int, *, forward: bool) -> bool:
    """Undo the first ``count`` writes of :func:`_write_files` (the same order, guarded); True when every file is
    back. The files coming back to exist are restored first and the ones it created removed last, as a change
    writes them, so a crash during a rollback leaves the content on disk too."""
    written = in_write_order(files, forward=forward)[:count]
    ok = True
    for f, src, dst in sorted(reversed(written), key=lambda p: p[1] is None):
        if src == dst:
            continue
        cur = _state_or_error(root, f.path)
        if cur == src:
            continue
        if cur != dst or isinstance(src, Purged):
            ok = False
            continue
        try:
            swap_file(safe_path(root, f.path), dst, src, mode=f.before_mode if forward else f.after_mode)
        except (OSError, Refusal):
            ok = False
    return ok


@contextmanager
def _locked(project_root: Path, timeout: float) -> Iterator[tuple[Ledger, sqlite3.Connection]]:
    try:
        with lifecycle_lock(project_root, timeout=timeout, runtime_dir=cached_runtime_dir(project_root)) as rdir:
            _step("locked")
            ledger = Ledger.for_project(project_root, rdir)
            with ledger.connect() as conn:
                _reconcile_locked(project_root, ledger, conn)
                yield ledger, conn
            _step("unlocking")
    except LockBusy as err:
        raise Refusal("lock_busy", str(err)) from err
    except (sqlite3.Error, RuntimeStateError) as err:
        raise ledger_refusal(err, Ledger.for_project(project_root, create=False).path) from err


def ledger_refusal(err: sqlite3.Error | RuntimeStateError, db: Path) -> Refusal:
    """The refusal of a change whose ledger ``db`` failed: the runtime error's code (``disk_full``,
    ``read_only_file_system``, ``permission_denied``, ``corrupt_database``, …; ``ledger_unavailable`` when SQLite
    gives no reason), naming the database and what to do, and saying that no file is left half-written."""
    state = runtime_error(err, db, "ledger")
    code = "ledger_unavailable" if state.code == "runtime_unavailable" else state.code
    return Refusal(
        code,
        f"{state.message}. No file is left half-written: every file is at its before or after "
        "bytes, and the next command reconciles an interrupted change from them",
    )


def dry_run(
    project_root: str | os.PathLike[str], build: Callable[[Path], ChangePlan], *, lock_timeout: float = DEFAULT_TIMEOUT
) -> ChangePlan:
    """The :class:`ChangePlan` ``build`` computes, exactly as :func:`run_change` would compute it (under the lock,
    after reconciliation, with the same path checks), writing nothing (without a ledger, no change is to reconcile
    or holds a file: no lock, no runtime folder is made). Raises :class:`Refusal` when the change would be refused."""
    root = _root(project_root)
    with _locked(root, lock_timeout) if may_hold_changes(root) else nullcontext(None) as held:
        plan = build(root)
        if held is not None:
            refuse_unsettled(*held, plan)
        refuse_secret_paths(plan)
        refuse_unwritable(root, plan.files, forward=True)
        return plan


#: Called after every committed change or undo with the project root and the paths it wrote or removed (relative,
#: ``/``-separated); set by :func:`set_commit_hook`. The ledger sits below the stores, so it names no index itself.
_commit_hook: Callable[[Path, list[str]], object] | None = None


def set_commit_hook(hook: Callable[[Path, list[str]], object] | None) -> None:
    """Install the function every committed change calls with ``(project root, touched paths)`` while it still
    holds the lifecycle lock (:mod:`memzoi.lifecycle.index_sync` keeps the project store's index current with
    it); ``None`` removes it. The hook must not raise: the change is already committed when it runs."""
    global _commit_hook
    _commit_hook = hook


def _committed(root: Path, paths: list[str]) -> None:
    if _commit_hook is not None:
        _commit_hook(root, paths)


def run_change(
    project_root: str | os.PathLike[str],
    build: Callable[[Path], ChangePlan],
    *,
    actor: str,
    source: str = "cli",
    lock_timeout: float = DEFAULT_TIMEOUT,
    previewed: str | None = None,
) -> ChangeResult:
    """Run one ledgered change. ``build(project_root)`` is called under the lock, after reconciliation: it reads
    the files (their bytes become the before snapshots), validates, and returns the :class:`ChangePlan`, or
    raises :class:`Refusal`.

    Returns the result (status ``applied``); raises :class:`Refusal` when the build refuses, on external drift
    (``external_drift``: the change is recorded ``failed``, no file changed) or when the write fails
    (``write_failed``: recorded ``failed`` or ``uncertain`` after comparing the files), and when a file of the plan
    is one an ``uncertain`` change touches (``uncertain_change``; a recovery is let through). ``previewed``: the
    fingerprint of the preview the person saw; any file changed since refuses it (:mod:`.previewed`).
    """
    if source not in SOURCES:
        raise ValueError(f"source must be one of {SOURCES}")
    root = _root(project_root)
    with _locked(root, lock_timeout) as (ledger, conn):
        plan = build(root)
        refuse_unsettled(ledger, conn, plan)
        check_previewed(plan, previewed)  # under the lock, against the before bytes the writes are guarded by
        _step("planned")
        paths = [f.path for f in plan.files]
        refuse_secret_paths(plan)
        if len(set(paths)) != len(paths):
            raise ValueError("a change lists the same file twice")
        refuse_unwritable(root, plan.files, forward=True)
        refuse_secret_text(actor=actor, reason=plan.reason, summary=plan.summary)
        # What the ledger keeps (and reports): secret-bearing or purged bytes as digest and size only.
        stored = [
            FileChange(f.path, as_stored(f.before, f.path in plan.purge), as_stored(f.after), *_modes(root, f))
            for f in plan.files
        ]
        change_id = _new_change_id()
        ts = now_utc()
        made = new_folders(root, plan.files, forward=True)  # recorded with the change: its undo removes them
        with ledger.transaction(conn):
            conn.execute(
                "INSERT INTO change (id, operation, actor, source, reason, summary, status, phase, details_json,"
                " created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, 'applying', 'apply', ?, ?, ?)",
                (
                    change_id,
                    plan.operation,
                    actor,
                    source,
                    plan.reason,
                    plan.summary,
                    json.dumps(plan.details, sort_keys=True),
                    ts,
                    ts,
                ),
            )
            conn.executemany(
                "INSERT INTO change_file (change_id, idx, path, before, before_digest, before_size, after, "
                "after_digest, after_size, before_mode, after_mode) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                [
                    (change_id, i, f.path, *stored_state(f.before), *stored_state(f.after), f.before_mode, f.after_mode)
                    for i, f in enumerate(stored)
                ],
            )
            record_folders(conn, root, change_id, made)
            if plan.db_effects:
                plan.db_effects(conn, change_id)
        _step("recorded")
        _perform(root, ledger, conn, change_id, _with_modes(plan.files, stored), phase="apply")
        if plan.restores is not None:  # that change's files are at their before bytes again: so are its folders
            remove_recorded(conn, root, plan.restores)
        _step("committed")
        _committed(root, paths)
        return ChangeResult(change_id, "applied", stored, plan.operation, plan.details)


def _modes(root: Path, f: FileChange) -> tuple[int | None, int | None]:
    """The ``(before_mode, after_mode)`` the ledger records for ``f``: a present file's permission bits now, and
    the mode its after state has: a rewrite keeps the file's mode, a created file gets the plan's ``after_mode``
    (``None``: the umask's), a removed file has none."""
    before = file_mode(root, f.path) if f.before is not None else None
    if f.after is None:
        return before, None
    return before, before if f.before is not None else f.after_mode


def _with_modes(files: list[FileChange], stored: list[FileChange]) -> list[FileChange]:
    """``files`` (the plan's exact bytes, which the writes use even where the ledger keeps a digest) with the
    modes recorded in ``stored``, so what is written and what undo restores agree."""
    return [
        FileChange(f.path, f.before, f.after, s.before_mode, s.after_mode) for f, s in zip(files, stored, strict=True)
    ]


def _perform(
    root: Path, ledger: Ledger, conn: sqlite3.Connection, change_id: str, files: list[FileChange], *, phase: str
) -> None:
    forward = phase == "apply"
    done, undone_back = ("applied", "failed") if forward else ("undone", "applied")
    folders = new_folders(root, files, forward=forward)
    try:
        _write_files(root, files, forward=forward, prefix=phase)
    except _Drift as drift:
        clean = _rollback(root, files, drift.written, forward=forward)
        remove_empty(folders)
        what = "applying" if forward else "undoing"
        message = (
            f"{drift.path}: the file changed after memzoi read it, so {what} change {change_id} was refused and "
            "nothing was written; review the file and retry"
        )
        if drift.kept is not None:
            message += (
                f"; a second edit made meanwhile could not go back in place and was kept as "
                f"{drift.kept.name} beside the file: merge it by hand"
            )
        status = undone_back if clean else "uncertain"
        ledger.set_status(conn, change_id, status, diagnostic=message, phase=phase)
        raise Refusal("external_drift", message, drift.path) from None
    except (OSError, Refusal) as err:
        # A full disk or an I/O error: a change left half-written is rolled back (guarded, like drift) so the
        # files end at their before bytes where the disk allows it; a change already complete stays done.
        status = _classify(root, files, phase)
        if status != done:
            _rollback(root, files, len(files), forward=forward)
        _cleanup_temps(root, files)
        status = _classify(root, files, phase)
        if status != done:
            remove_empty(folders)
        reason = err.message if isinstance(err, Refusal) else (err.strerror or str(err))
        message = f"writing change {change_id} failed: {reason}"
        ledger.set_status(conn, change_id, status, diagnostic=message, phase=phase)
        if status == done:
            return
        raise Refusal("write_failed", message + f"; the change is now {status}") from err
    _step(f"{phase}:written")
    ledger.set_status(conn, change_id, done, phase=phase)


def undo_change(
    project_root: str | os.PathLike[str],
    change_id: str,
    *,
    actor: str,
    source: str = "cli",
    lock_timeout: float = DEFAULT_TIMEOUT,
) -> ChangeResult:
    """Undo an ``applied`` change: restore every file's before bytes, at most once (``undoing`` → ``undone``).

    Refuses (``change_not_found``, ``not_undoable``, ``undo_drift``) unless the change is applied and every file
    still equals its after snapshot. The folders the change created are removed once empty again
    (:mod:`memzoi.ledger.folders`); one holding anything else stays. The result's files describe the undo itself
    (``before`` = the change's after, ``after`` = its before), so a created record reads "present → absent".
    """
    root = _root(project_root)
    with _locked(root, lock_timeout) as (ledger, conn):
        change = ledger.get(conn, change_id)
        if change is None:
            raise missing_change(root, change_id)
        if change.status != "applied":
            raise Refusal(
                "not_undoable",
                f"change {change.id} is {change.status}; only an applied change can be undone"
                + (
                    f"; recover it first with `memzoi reconcile --recover {change.id} "
                    "restore-before|complete-after|accept`"
                    if change.status == "uncertain"
                    else ""
                ),
            )
        for f in change.files:
            if isinstance(f.before, Purged):
                raise Refusal("purged_secret", f"change {change.id}: " + purged_message(f.path), f.path)
        for f in change.files:
            current = read_file_state(root, f.path)
            if current != f.after:
                raise undo_drift(ledger, conn, change, f.path, current)
        refuse_unwritable(root, change.files, forward=False)
        refuse_secret_text(actor=actor)
        _step("planned")
        ts = now_utc()
        with ledger.transaction(conn):
            conn.execute(
                "UPDATE change SET status = 'undoing', phase = 'undo', updated_at = ?, undo_actor = ?, "
                "undo_source = ? WHERE id = ? AND status = 'applied'",
                (ts, actor, source, change.id),
            )
        _step("recorded")
        _perform(root, ledger, conn, change.id, change.files, phase="undo")
        remove_recorded(conn, root, change.id)  # the folders the change created, while empty
        _step("committed")
        _committed(root, [f.path for f in change.files])
        # The result states what the undo did: each file goes from the change's after back to its before.
        undid = [FileChange(f.path, f.after, f.before) for f in change.files]
        return ChangeResult(change.id, "undone", undid, change.operation, change.details)
