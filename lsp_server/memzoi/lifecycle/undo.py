"""Undo an applied change (any lifecycle operation) while its files still equal their after snapshots."""

from __future__ import annotations

import os

from ..ledger import ChangeResult, undo_change


def undo(project_root: str | os.PathLike[str], change_id: str, *, actor: str, source: str = "cli") -> ChangeResult:
    """Restore every file of ``change_id`` to its before bytes, at most once (``undoing`` → ``undone``).

    Raises :class:`~memzoi.ledger.Refusal` (``change_not_found``, ``not_undoable``, ``undo_drift``) with nothing
    written.
    """
    return undo_change(project_root, change_id, actor=actor, source=source)
