"""The transitions of a session checkpoint (:mod:`.checkpoints`): **continue** and **close**, each an update of
the row in one ledger database transaction, replayable by operation id and guarded by the checkpoint's version.

Rules (Memzoi's lifecycle document, "Runtime local and session continuity"; retention, reference §6):

* **continue** is accepted only while the checkpoint is open and ``now`` is before its retention boundary
  (:func:`memzoi.judge.retention.retention_boundary`): at the boundary itself it is ``query_only`` and refused
  (``checkpoint_expired``); a closed one is ``checkpoint_closed``;
* **close** is terminal and idempotent: closing a closed checkpoint returns it unchanged;
* each accepted continuation and the close add one to the checkpoint's ``version``; ``--expected-version`` is
  checked against it (``version_conflict``). Operation ids: :mod:`.operations`.
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import Any

from ..base.clock import utc_now
from ..judge.retention import format_instant
from ..ledger import Ledger, Refusal
from ..models.common import parse_rfc3339
from . import operations as ops
from .checkpoints import Checkpoint, visible

#: One transition: change ``cp`` at the instant in ``conn``; whether anything changed.
Step = Callable[[sqlite3.Connection, Checkpoint, datetime], bool]


def _transition(
    project_root: str | os.PathLike[str],
    command: str,
    checkpoint_id: str,
    *,
    operation_id: str | None,
    expected_version: int | None,
    now: datetime | None,
    step: Step,
) -> dict[str, Any]:
    ops.check_operation_id(operation_id)
    at = now or utc_now()
    fp = ops.fingerprint(command, {"checkpoint_id": checkpoint_id, "expected_version": expected_version})
    ledger = Ledger.for_project(Path(project_root).resolve())
    with ledger.connect() as conn, ledger.transaction(conn):
        replay = ops.recorded(conn, operation_id, command, fp)
        if replay is not None:
            return replay
        cp = visible(conn, checkpoint_id)
        if cp is None:
            raise Refusal("checkpoint_not_found", f"no checkpoint `{checkpoint_id}`; see `memzoi checkpoint list`")
        ops.check_version(expected_version, cp.version, f"checkpoint `{checkpoint_id}`")
        changed = step(conn, cp, at)
        cp = visible(conn, checkpoint_id)
        assert cp is not None
        out = {
            "operation": command,
            "operation_id": operation_id,
            "replayed": False,
            "changed": changed,
            "checkpoint": cp.to_json(at),
        }
        ops.record(conn, operation_id, command, fp, out)
        return out


def continue_step(conn: sqlite3.Connection, cp: Checkpoint, at: datetime) -> bool:
    """Record a continuation of ``cp`` at ``at`` in ``conn``; refuses a closed or no longer current one."""
    if cp.status == "closed":
        raise Refusal(
            "checkpoint_closed",
            f"checkpoint `{cp.id}` is closed; closing is terminal. Start a new "
            f"generation with `memzoi checkpoint add --task … --successor-of {cp.id}`",
        )
    if at >= cp.boundary():
        raise Refusal(
            "checkpoint_expired",
            f"checkpoint `{cp.id}` is no longer current (its retention boundary "
            f"{format_instant(cp.boundary())} has been reached); start a new generation with "
            f"`memzoi checkpoint add --task … --successor-of {cp.id}`",
        )
    stamp = format_instant(at)
    conn.execute(
        "UPDATE checkpoint SET last_continued_at = ?, version = version + 1, updated_at = ? WHERE id = ?",
        (stamp, stamp, cp.id),
    )
    return True


def close_step(conn: sqlite3.Connection, cp: Checkpoint, at: datetime) -> bool:
    """Close ``cp`` at ``at`` in ``conn``; ``False`` (nothing changed) when it is closed already."""
    if cp.status == "closed":
        return False
    started = parse_rfc3339(cp.started_at) or at  # a row always holds a valid instant
    stamp = format_instant(max(at, started))  # closed_at >= started_at (reference §6)
    conn.execute(
        "UPDATE checkpoint SET status = 'closed', closed_at = ?, version = version + 1, updated_at = ? WHERE id = ?",
        (stamp, stamp, cp.id),
    )
    return True


def continue_checkpoint(
    project_root: str | os.PathLike[str],
    checkpoint_id: str,
    *,
    operation_id: str | None = None,
    expected_version: int | None = None,
    now: datetime | None = None,
) -> dict[str, Any]:
    """Record a continuation at ``now`` (default: the clock) while the checkpoint is open and current. Returns
    ``{"operation", "operation_id", "replayed", "changed", "checkpoint"}``. Raises :class:`Refusal`
    (``checkpoint_not_found``, ``checkpoint_closed``, ``checkpoint_expired`` at or after the boundary,
    ``version_conflict``, ``operation_id_conflict``)."""
    return _transition(
        project_root,
        "checkpoint_continue",
        checkpoint_id,
        operation_id=operation_id,
        expected_version=expected_version,
        now=now,
        step=continue_step,
    )


def close_checkpoint(
    project_root: str | os.PathLike[str],
    checkpoint_id: str,
    *,
    operation_id: str | None = None,
    expected_version: int | None = None,
    now: datetime | None = None,
) -> dict[str, Any]:
    """Close the checkpoint at ``now``: terminal, and idempotent (a closed one is returned unchanged with
    ``changed: false``). Same result shape and refusals as :func:`continue_checkpoint` (no expiry refusal: an
    expired checkpoint can still be closed)."""
    return _transition(
        project_root,
        "checkpoint_close",
        checkpoint_id,
        operation_id=operation_id,
        expected_version=expected_version,
        now=now,
        step=close_step,
    )
