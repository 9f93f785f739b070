"""The harness's entry point to Zuno's reflection count over MCP: ``record_resident_turn``, the same call as
``memzoi resident turn`` (:func:`memzoi.resident.reflection.record_turn`; reference ``zuno-memory.md`` §6).

It changes no memory: it counts one delivered assistant message of a session (at most once, durably) and says
whether a reflection review is due, so it is not a proposal tool and is not rate-limited like one. The tool is
registered in :data:`memzoi.agent.tools.TOOLS` with the others (arguments: :class:`.arguments.TurnArgs`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from .arguments import TurnArgs


def record(root: Path, a: TurnArgs) -> tuple[dict[str, Any], str]:
    """Count the turn for the project at ``root``; returns the tool's ``(data, text)``: the admission
    (:meth:`memzoi.resident.jobs.Admission.to_json`) with ``disabled`` (why reflection is off, or ``None``)."""
    from ..resident.reflection import record_turn
    from ..resident.reflection_config import reflection_settings

    settings = reflection_settings()
    adm = record_turn(a.session_id, a.message_id, interrupted=a.interrupted, negative=a.negative,
                      recovered_=a.recovered, settings=settings, project_root=root)
    data = {**adm.to_json(), "disabled": settings.disabled}
    if data["due"] and adm.job is not None:
        text = (f"message {adm.ordinal}: review due ({adm.job.trigger}), job {adm.job.id}; run `memzoi resident "
                f"reflect --session {a.session_id} --transcript FILE`")
    else:
        text = f"{adm.state}: message {adm.ordinal}, no review due" + (f" ({settings.disabled})" if settings.disabled else "")
    return data, text
