"""The harness's entry point to Zuno's reflection count over MCP: ``record_resident_turn``, the same call as
``memzoi resident turn`` (:func:`memzoi.resident.reflection.record_turn`; reference ``zuno-memory.md`` §6).

It changes no memory: it counts one delivered assistant message of a session (at most once, durably) and says
whether a reflection review is due, so it is not a proposal tool and is not rate-limited like one. Its
:data:`TOOLS` is listed in the table of :mod:`memzoi.agent.tools`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from .tooltypes import OutputModel, Session, Tool, ToolResult


class TurnArgs(BaseModel):
    """Arguments of ``record_resident_turn`` (those of ``memzoi resident turn``; :mod:`.resident_turn`)."""

    model_config = ConfigDict(
        extra="forbid",
        strict=True,
        json_schema_extra={
            "examples": [
                {"session_id": "sess-42", "message_id": "msg-7"},
                {"session_id": "sess-42", "message_id": "msg-8", "recovered": True},
            ]
        },
    )
    session_id: str = Field(min_length=1, max_length=200, description="The session id.")
    message_id: str = Field(min_length=1, max_length=200, description="The delivered assistant message's id.")
    interrupted: bool = Field(False, description="The turn was interrupted: it is not counted.")
    negative: bool = Field(False, description="A negative-learning turn: counted, never reviewed.")
    recovered: bool = Field(False, description="A verified recovery: a review is due at once.")


TURN_DESCRIPTION = (
    "For agent harnesses: record that an assistant message of a session was delivered, once per message, and learn "
    "whether a reflection review of resident memory is due (every nudge_interval messages, or at once after a "
    "verified recovery). Interrupted turns are not counted; negative-learning turns are counted but never "
    "reviewed. Changes no memory."
)


def record(root: Path, a: TurnArgs) -> tuple[dict[str, Any], str]:
    """Count the turn for the project at ``root``; returns the tool's ``(data, text)``: the admission
    (:meth:`memzoi.resident.jobs.Admission.to_json`) with ``disabled`` (why reflection is off, or ``None``)."""
    from ..resident.reflection import record_turn  # noqa: PLC0415 lazy: start-up
    from ..resident.reflection_config import reflection_settings  # noqa: PLC0415 lazy: start-up

    settings = reflection_settings()
    adm = record_turn(
        a.session_id,
        a.message_id,
        interrupted=a.interrupted,
        negative=a.negative,
        recovered_=a.recovered,
        settings=settings,
        project_root=root,
    )
    data = {**adm.to_json(), "disabled": settings.disabled}
    if data["due"] and adm.job is not None:
        text = (
            f"message {adm.ordinal}: review due ({adm.job.trigger}), job {adm.job.id}; run `memzoi resident "
            f"reflect --session {a.session_id} --transcript FILE`"
        )
    else:
        text = f"{adm.state}: message {adm.ordinal}, no review due" + (
            f" ({settings.disabled})" if settings.disabled else ""
        )
    return data, text


def _turn(s: Session, a: TurnArgs) -> ToolResult:
    return ToolResult(*record(s.root, a))


#: The reflection-count tool, in the order they are listed.
TOOLS: tuple[Tool, ...] = (
    Tool(
        "record_resident_turn",
        "Record a delivered turn (reflection count)",
        TURN_DESCRIPTION,
        TurnArgs,
        _turn,
        output=OutputModel("outputs", "TurnOutput"),
        annotations={"readOnlyHint": False, "destructiveHint": False, "idempotentHint": True, "openWorldHint": False},
    ),
)
