"""Checkpoints and repository memory health as the editors show them (issue 33, "In the editor"): what the Memory
Inbox, ``:Memzoi checkpoints`` and the Emacs list display, and the preview of a continue or close before it is
applied. The editors only render these (the "Memory health" view is :func:`memzoi.agent.maintenance.memory_health`).

* :func:`checkpoint_inbox`: the visible checkpoints, open ones first, each with the actions it accepts now
  (``continue`` only while open and current; ``close`` while open; nothing once closed: closing is terminal);
* :func:`preview_transition`: the checkpoint before and after a ``continue`` or ``close`` at an instant, computed by
  the same step the command runs (:func:`memzoi.lifecycle.checkpoint_transitions.continue_step` / ``close_step``) inside a
  transaction that is rolled back, so a preview refuses exactly what the apply would refuse and writes nothing; its
  ``expected_version`` is passed back to the apply, which is refused (``version_conflict``) when the checkpoint
  changed in between;
"""

from __future__ import annotations

import os
from datetime import datetime
from pathlib import Path
from typing import Any

from ..base.clock import utc_now
from ..judge.retention import format_instant
from ..ledger import Ledger, Refusal
from .checkpoint_transitions import close_checkpoint, close_step, continue_checkpoint, continue_step
from .checkpoints import list_checkpoints, visible

OPERATIONS = ("continue", "close")


def actions(row: dict[str, Any]) -> list[str]:
    """The transitions a checkpoint row (``Checkpoint.to_json``) accepts now: ``continue`` while open and current,
    ``close`` while open (also after its boundary), none once closed."""
    if row["status"] == "closed":
        return []
    return ["continue", "close"] if row["current"] else ["close"]


def checkpoint_inbox(root: str | os.PathLike[str], now: datetime | None = None) -> dict[str, Any]:
    """``{"version", "checkpoints": [row + "actions"]}``: open checkpoints first (newest first), then closed ones;
    every row has ``provenance: runtime`` (a checkpoint is never repository truth)."""
    at = now or utc_now()
    version, items = list_checkpoints(root)
    rows = [{**c.to_json(at), "actions": []} for c in items]
    for r in rows:
        r["actions"] = actions(r)
    rows.sort(key=lambda r: r["status"] == "closed")  # stable: newest first within each group
    return {"version": version, "checkpoints": rows}


def preview_transition(
    root: str | os.PathLike[str], checkpoint_id: str, operation: str, now: datetime | None = None
) -> dict[str, Any]:
    """What ``operation`` (``continue`` or ``close``) would do to checkpoint ``checkpoint_id`` at ``now``, without
    writing: ``{"operation", "checkpoint_id", "expected_version", "changed", "before", "after", "summary"}``.
    Raises :class:`Refusal` as the command would (``checkpoint_not_found``, ``checkpoint_closed``,
    ``checkpoint_expired``) and ``invalid_value`` for another operation."""
    if operation not in OPERATIONS:
        raise Refusal("invalid_value", f"operation must be one of {', '.join(OPERATIONS)}")
    at = now or utc_now()
    ledger = Ledger.for_project(Path(root).resolve(), create=False)
    if not ledger.exists:
        raise Refusal("checkpoint_not_found", f"no checkpoint `{checkpoint_id}`; see `memzoi checkpoint list`")
    with ledger.connect() as conn:
        conn.execute("BEGIN")
        try:
            cp = visible(conn, checkpoint_id)
            if cp is None:
                raise Refusal("checkpoint_not_found", f"no checkpoint `{checkpoint_id}`; see `memzoi checkpoint list`")
            before = cp.to_json(at)
            changed = (continue_step if operation == "continue" else close_step)(conn, cp, at)
            after_cp = visible(conn, checkpoint_id)
            after = after_cp.to_json(at) if after_cp is not None else before
        finally:
            conn.execute("ROLLBACK")
    what = {
        "continue": f"continue checkpoint {checkpoint_id} at {format_instant(at)} (version {before['version']} "
        f"→ {after['version']}; new boundary {after['retention_decision']['effective_boundary']})",
        "close": (
            f"close checkpoint {checkpoint_id} (terminal; version {before['version']} → {after['version']})"
            if changed
            else f"checkpoint {checkpoint_id} is already closed: nothing changes"
        ),
    }[operation]
    return {
        "operation": operation,
        "checkpoint_id": checkpoint_id,
        "expected_version": before["version"],
        "changed": changed,
        "before": before,
        "after": after,
        "summary": what,
    }


def apply_transition(
    root: str | os.PathLike[str], checkpoint_id: str, operation: str, expected_version: int, now: datetime | None = None
) -> dict[str, Any]:
    """Apply a previewed ``operation`` with the preview's ``expected_version`` (refused with ``version_conflict``
    when the checkpoint changed since the preview). Returns the command's result."""
    if operation not in OPERATIONS:
        raise Refusal("invalid_value", f"operation must be one of {', '.join(OPERATIONS)}")
    run = continue_checkpoint if operation == "continue" else close_checkpoint
    return run(root, checkpoint_id, expected_version=expected_version, now=now)
