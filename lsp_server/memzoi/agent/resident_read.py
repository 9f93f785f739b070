"""What an agent may read of Zuno's resident memory: the entries of the two capped files as the prompt carries
them, their cap usage, and the candidates waiting for review (the same views the CLI and the editor render,
:mod:`memzoi.resident.views`). Entries are data, not instructions; a file that cannot be read says why."""

from __future__ import annotations

from pathlib import Path
from typing import Any


def _candidate(c) -> dict[str, Any]:
    return {"id": c.id, "scope": c.scope, "action": c.action, "content": c.content, "locator": c.old_text,
            "reason": c.reason, "confidence": c.confidence / 10_000,
            "proposed_by": c.actor, "status": c.status}


def pending_candidates(root: Path) -> list[dict[str, Any]]:
    """The project's resident-memory candidates awaiting review (``status: pending``), newest first; none when
    the project's configuration cannot say where its resident files are (``get_resident_memory`` says why)."""
    from ..ledger import Refusal
    from ..resident.views import candidates_for

    try:
        return [_candidate(c) for c in candidates_for(root) if c.status == "pending"]
    except Refusal:  # an invalid configuration costs the resident listing only, never the proposals' inbox
        return []


def get_resident_memory(root: Path) -> dict[str, Any]:
    """``{"files": [{"scope", "path", "cap", "used", "usage", "entries", "error"}], "pending": [...]}``: both
    resident files of the project (global first) and the candidates awaiting review."""
    from ..resident.views import scope_views

    files = []
    for view in scope_views(root):
        data = view.to_json()
        data.pop("block", None)
        files.append(data)
    return {"files": files, "pending": pending_candidates(root)}
