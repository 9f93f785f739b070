"""Lifecycle operations on the git plane and the local runtime plane, each one ledgered change.

Every function takes the project root, an ``actor`` and a ``source`` (``"editor"``, ``"cli"`` or ``"mcp"``), returns a
:class:`~memzoi.ledger.ChangeResult` and raises :class:`~memzoi.ledger.Refusal` (``code``, ``message``) with
nothing written when a finding, a precondition or external drift blocks it. The language server and the CLI
call these same functions.

Layer 7 of the core (lifecycle): Lifecycle operations on the git plane and the local runtime plane, their offers,
previews and readiness, and where a record or packet stands.

May import: base, read, judge, models, safety, ledger, project, resident, stores, runs, lifecycle.
"""

from __future__ import annotations

from ..ledger import ChangeResult, Refusal, get_change, history, reconcile, recover
from ..ledger.local_records import get_local, list_local, search_local
from .apply import apply_proposal
from .common import default_actor
from .local import add_local, route_local
from .reject import reject_proposal
from .supersede import propose_supersede
from .tombstone import propose_tombstone
from .undo import undo

__all__ = [
    "ChangeResult",
    "Refusal",
    "add_local",
    "apply_proposal",
    "default_actor",
    "get_change",
    "get_local",
    "history",
    "list_local",
    "propose_supersede",
    "propose_tombstone",
    "reconcile",
    "recover",
    "reject_proposal",
    "route_local",
    "search_local",
    "undo",
]
