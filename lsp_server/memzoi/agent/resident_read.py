"""What an agent may read of Zuno's resident memory: the WorkStateProjection
(:func:`memzoi.resident.projection.work_state`, the one view the CLI and the editor render too): the entries of
the two capped files as the prompt carries them, their cap usage, the candidates and the reflection jobs, plus
the candidates waiting for review. Entries are data, not instructions; a file that cannot be read says why."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # the row types only: the resident store loads when a listing is asked for
    from ..judge.config_model import MemzoiConfig
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


def pending_candidates(root: Path, config: MemzoiConfig | None = None, *, strict: bool = False) -> list[dict[str, Any]]:
    """The project's resident-memory candidates awaiting review (``status: pending``), newest first. ``config`` is
    the read's (:func:`memzoi.resident.scope.read_config`); without it, none when the project's configuration
    cannot say where its resident files are. A database that cannot be read gives none too, unless ``strict``:
    then its :class:`Refusal` or :class:`~memzoi.base.runtime_errors.RuntimeStateError` is raised, for the caller
    to say so (:func:`memzoi.agent.pending_read.list_pending`)."""
    from ..base.runtime_errors import RuntimeStateError  # noqa: PLC0415 lazy: start-up
    from ..ledger import Refusal  # noqa: PLC0415 lazy: start-up
    from ..resident.views import candidates_for  # noqa: PLC0415 lazy: start-up

    try:
        return [_candidate(c) for c in candidates_for(root, config) if c.status == "pending"]
    except (Refusal, RuntimeStateError):  # an invalid configuration costs the resident listing only
        if strict:
            raise
        return []


def get_resident_memory(root: Path) -> dict[str, Any]:
    """The WorkStateProjection (``memory_entries``, ``files`` ``[{"scope", "path", "cap", "used", "usage",
    "entries", "error"}]``, ``memory_candidates``, ``reflection_jobs``), ``pending``: the candidates awaiting
    review in the short form of ``list_pending``, and ``warnings`` (sentences). A read: a broken project
    configuration does not refuse it; the files are read where the defaults put them and ``warnings`` names the
    error (:func:`memzoi.resident.scope.read_config`; newuser5 D7)."""
    from ..resident.projection import work_state  # noqa: PLC0415 lazy: start-up
    from ..resident.scope import read_config  # noqa: PLC0415 lazy: start-up

    config, warning = read_config(root)
    return {
        **work_state(root, config),
        "pending": pending_candidates(root, config),
        "warnings": [warning] if warning else [],
    }
