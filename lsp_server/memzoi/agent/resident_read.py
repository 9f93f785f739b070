"""What an agent may read of Zuno's resident memory: the WorkStateProjection
(:func:`memzoi.resident.projection.work_state`, the one view the CLI and the editor render too): the entries of
the two capped files as the prompt carries them, their cap usage, the candidates and the reflection jobs, plus
the candidates waiting for review. Entries are data, not instructions; a file that cannot be read says why."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # the row type only: the resident store loads when a listing is asked for
    from ..resident.candidates import Candidate


def _candidate(c: Candidate) -> dict[str, Any]:
    return {
        "id": c.id,
        "scope": c.scope,
        "action": c.action,
        "content": c.content,
        "locator": c.old_text,
        "reason": c.reason,
        "confidence": c.confidence / 10_000,
        "proposed_by": c.actor,
        "status": c.status,
    }


def pending_candidates(root: Path) -> list[dict[str, Any]]:
    """The project's resident-memory candidates awaiting review (``status: pending``), newest first; none when
    the project's configuration cannot say where its resident files are (``get_resident_memory`` says why)."""
    from ..ledger import Refusal  # noqa: PLC0415 lazy: start-up
    from ..resident.views import candidates_for  # noqa: PLC0415 lazy: start-up

    try:
        return [_candidate(c) for c in candidates_for(root) if c.status == "pending"]
    except Refusal:  # an invalid configuration costs the resident listing only, never the proposals' inbox
        return []


def get_resident_memory(root: Path) -> dict[str, Any]:
    """The WorkStateProjection (``memory_entries``, ``files`` ``[{"scope", "path", "cap", "used", "usage",
    "entries", "error"}]``, ``memory_candidates``, ``reflection_jobs``) and ``pending``: the candidates
    awaiting review in the short form of ``list_pending``."""
    from ..resident.projection import work_state  # noqa: PLC0415 lazy: start-up

    return {**work_state(root), "pending": pending_candidates(root)}
