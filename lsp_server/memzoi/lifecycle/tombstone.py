"""Create a pending tombstone proposal packet for a record, as one ledgered change (see :mod:`.supersede`)."""

from __future__ import annotations

import os

from ..ledger import ChangeResult, run_change
from .supersede import plan_packet


def propose_tombstone(project_root: str | os.PathLike[str], record: str, *, reason: str, actor: str,
                      source: str = "cli") -> ChangeResult:
    """Create a pending packet proposing to tombstone ``record`` (id or path) for ``reason``.

    Raises :class:`~memzoi.ledger.Refusal` when the record is missing, inactive or invalid, or the reason is empty.
    """
    return run_change(
        project_root,
        lambda root: plan_packet(root, record, action="tombstone", title=None, body=None, reason=reason, actor=actor),
        actor=actor,
        source=source,
    )
