"""Explicit recovery of an uncertain change, itself a ledgered change."""

from __future__ import annotations

import os
from pathlib import Path

from .guards import purged_message
from .history import missing_change
from .model import RECOVERY_MODES, ChangePlan, ChangeResult, FileChange, Purged, Refusal
from .store import Ledger, read_file_state
from .writer import run_change


def recover(
    project_root: str | os.PathLike[str],
    change_id: str,
    mode: str,
    *,
    actor: str,
    source: str = "cli",
    reason: str | None = None,
) -> ChangeResult:
    """Settle an ``uncertain`` change explicitly, as a new ledgered change (operation ``recover``).

    ``mode``: ``restore-before`` writes every file's before bytes (the change becomes ``failed``, or ``undone``
    when an undo was in flight), ``complete-after`` writes the after bytes (``applied``), ``accept`` keeps the files
    as they are (``failed``; only the decision is recorded). Raises :class:`Refusal` for another status.
    """
    if mode not in RECOVERY_MODES:
        raise Refusal("invalid_recovery", f"recovery mode must be one of {', '.join(RECOVERY_MODES)}")

    def build(root: Path) -> ChangePlan:
        ledger = Ledger.for_project(root)
        with ledger.connect() as conn:
            change = ledger.get(conn, change_id)
        if change is None:
            raise missing_change(root, change_id)
        if change.status != "uncertain":
            raise Refusal(
                "not_uncertain", f"change {change.id} is {change.status}; only uncertain changes need recovery"
            )
        files = []
        for f in change.files:
            cur = read_file_state(root, f.path)
            target = {"restore-before": f.before, "complete-after": f.after, "accept": cur}[mode]
            # A file the recovery re-creates gets the mode its state had (None in older ledgers: the umask's).
            target_mode = {"restore-before": f.before_mode, "complete-after": f.after_mode}.get(mode)
            if isinstance(target, Purged):
                if cur != target:
                    raise Refusal(
                        "purged_secret",
                        f"cannot {mode} change {change.id}: "
                        + purged_message(f.path)
                        + "; `accept` keeps the files as they are",
                        f.path,
                    )
                target = cur
            files.append(FileChange(f.path, cur, target, after_mode=target_mode))
        if mode == "complete-after":
            settles = "applied"
        elif mode == "restore-before":
            settles = "undone" if change.phase == "undo" else "failed"
        else:
            settles = "failed"
        return ChangePlan(
            "recover",
            files,
            reason=reason or f"{mode} for uncertain change {change.id}",
            summary=f"recover {change.id}: {mode}",
            details={"recovers": change.id, "mode": mode, "settles_to": settles},
            # What the recovered change purged stays purged: the recovery does not keep those bytes either.
            purge=frozenset(f.path for f in change.files if f.purged),
            restores=change.id if mode == "restore-before" else None,
        )

    return run_change(project_root, build, actor=actor, source=source)
