"""The read-only recall and planning tools Memzoi's MCP server has beyond the first table (reference §9):
``precheck_action``, ``precheck_command``, ``inspect_memory_expiry`` and ``plan_maintenance``. Their
:data:`TOOLS` are listed in the table of :mod:`memzoi.agent.tools`.

All of them only read, and only the repository plane: the precheck citations carry ``provenance: git``; the
expiry diagnostic is of a repository record; the maintenance plan is returned, never written (Memzoi: "MCP never
writes an artifact").
"""

from __future__ import annotations

import json
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from ..ledger import Refusal
from .bounds import withheld_line
from .tooltypes import READ_ONLY, OutputModel, Session, Tool, ToolResult


def _strict(*examples: dict[str, Any], populate_by_name: bool = False) -> ConfigDict:
    """Strict types, unknown keys refused, and whole-call ``examples`` in the input schema."""
    return ConfigDict(
        extra="forbid", strict=True, json_schema_extra={"examples": list(examples)}, populate_by_name=populate_by_name
    )


class ActionArgs(BaseModel):
    """Arguments of ``precheck_action``."""

    model_config = _strict(
        {"action": "rotate signing keys", "path": "config/keys.toml"}, {"action": "change invoice rounding"}
    )
    action: str = Field(min_length=1, max_length=8000, description="The planned action, in words.")
    path: str | None = Field(None, min_length=1, max_length=4096, description="Repository-relative path it touches.")


class CommandArgs(BaseModel):
    """Arguments of ``precheck_command``."""

    model_config = _strict({"command": "npm install"}, {"command": "cargo publish", "path": "crates/core"})
    command: str = Field(min_length=1, max_length=8000, description="The planned shell command.")
    path: str | None = Field(None, min_length=1, max_length=4096, description="Repository-relative path it touches.")


class ExpiryArgs(BaseModel):
    """Arguments of ``inspect_memory_expiry``."""

    model_config = _strict({"record_id": "facts/build-tool"})
    record_id: str = Field(min_length=1, max_length=512, description="The repository record's id.")


def _precheck_text(data: dict[str, Any], what: str) -> str:
    rows = [
        f"- [{w['severity']}] {w['message']} (record {w['record_id']}, provenance "
        f"{w['citations'][0]['provenance']}); {w['suggested_next_step']}"
        for w in data["warnings"]
    ]
    rows += withheld_line(data["withheld"])
    return "\n".join(rows) if rows else f"no warnings, risks or failed attempts apply to this {what}"


def _action(s: Session, a: ActionArgs) -> ToolResult:
    from .precheck import precheck  # noqa: PLC0415 lazy: start-up

    data = precheck(s.root, path=a.path, action=a.action)
    return ToolResult(data, _precheck_text(data, "action"))


def _command(s: Session, a: CommandArgs) -> ToolResult:
    from .precheck import precheck  # noqa: PLC0415 lazy: start-up

    data = precheck(s.root, path=a.path, command=a.command)
    return ToolResult(data, _precheck_text(data, "command"))


def _expiry(s: Session, a: ExpiryArgs) -> ToolResult:
    from .expiry import inspect_expiry  # noqa: PLC0415 lazy: start-up

    data = inspect_expiry(s.root, a.record_id)
    state = "excluded from" if data["excluded_from_normal_reads"] else "included in"
    return ToolResult(data, f"record {a.record_id} is {state} normal reads at {data['evaluated_at']}: {data['reason']}")


class MaintenanceArgs(BaseModel):
    """Arguments of ``plan_maintenance``: Memzoi's ``memzoi/maintenance-request``."""

    model_config = _strict(
        {"schema": "memzoi/maintenance-request"},
        {"evaluated_at": "2026-08-01T00:00:00Z", "record_ids": ["facts/build-tool"]},
        populate_by_name=True,
    )
    schema_: str = Field("memzoi/maintenance-request", alias="schema", description="Always memzoi/maintenance-request.")
    evaluated_at: str | None = Field(None, max_length=64, description="Evaluation instant (RFC 3339); default now.")
    record_ids: list[str] = Field(default_factory=list, max_length=256, description="Target record ids (≤256).")


def _maintenance(s: Session, a: MaintenanceArgs) -> ToolResult:
    from .maintenance import REQUEST_SCHEMA, plan_maintenance, request  # noqa: PLC0415 lazy: start-up

    if a.schema_ != REQUEST_SCHEMA:
        raise Refusal("invalid_value", f"maintenance request schema must be {REQUEST_SCHEMA}")
    plan = plan_maintenance(s.root, request(a.record_ids, a.evaluated_at))
    sm = plan["summary"]
    return ToolResult(
        plan,
        f"maintenance plan {plan['plan_id']} (report only, nothing written): {sm['records']} "
        f"record(s), {sm['exact_duplicates']} exact duplicate set(s), {sm['contradictions']} "
        f"contradiction set(s), {sm['stale']} stale, {sm['expired']} expired",
    )


class CaptureArgs(BaseModel):
    """Arguments of ``plan_capture``: Memzoi's ``memzoi/capture-request`` (one project-relative Markdown source,
    profile ``markdown-deterministic``); checked strictly by the capture planner."""

    model_config = _strict(
        {
            "schema": "memzoi/capture-request",
            "extractor": {"profile": "markdown-deterministic"},
            "sources": [
                {
                    "source_id": "notes",
                    "media_type": "text/markdown",
                    "locator": {"kind": "project_path", "path": "docs/notes.md"},
                }
            ],
        },
        populate_by_name=True,
    )
    schema_: str = Field("memzoi/capture-request", alias="schema", description="Always memzoi/capture-request.")
    sources: list[dict[str, Any]] = Field(
        max_length=1, description="[{source_id, locator: {kind: project_path, path}, media_type: text/markdown}]"
    )
    extractor: dict[str, Any] = Field(description="{profile: markdown-deterministic}")


def _capture(s: Session, a: CaptureArgs) -> ToolResult:
    try:  # capture planning is the lifecycle's (memzoi capture plan); this tool only returns its plan
        from ..lifecycle.capture_plan import plan_capture  # noqa: PLC0415 lazy: start-up
    except ImportError:
        raise Refusal("unavailable", "capture planning is not part of this memzoi-lsp build") from None
    request = {"schema": a.schema_, "sources": a.sources, "extractor": a.extractor}
    plan = plan_capture(s.root, request_text=json.dumps(request), request_where="plan_capture request")
    if plan.get("data_class") == "private":  # Memzoi: MCP is repository-only; private plans are denied
        raise Refusal(
            "private_plan_denied",
            "this source plans private (local, session or unresolved) candidates; "
            "MCP returns repository-safe plans only: run `memzoi capture plan` locally",
        )
    return ToolResult(
        plan,
        f"capture plan {plan['plan_id']} ({plan['status']}, {len(plan.get('candidates', []))} "
        "candidate(s)); nothing written: a human reviews and applies it with `memzoi capture`",
    )


#: The recall and planning tools, in the order they are listed.
TOOLS: tuple[Tool, ...] = (
    Tool(
        "precheck_action",
        "Precheck an action",
        "Check a planned action against the repository's risks, warnings and failed attempts: text match on "
        "the action, restricted to records bound to `path` when given (scored as Memzoi does: exact 5, "
        "trailing /** 4, ancestor folder 3, descendant 2). Citations carry provenance git.",
        ActionArgs,
        _action,
        annotations=READ_ONLY,
        output=OutputModel("outputs_recall", "TextPrecheckOutput"),
    ),
    Tool(
        "precheck_command",
        "Precheck a command",
        "Check a planned shell command against the repository's risks, warnings and failed attempts (text "
        "match on the command, restricted to `path` when given). Call it before running something risky.",
        CommandArgs,
        _command,
        annotations=READ_ONLY,
        output=OutputModel("outputs_recall", "TextPrecheckOutput"),
    ),
    Tool(
        "inspect_memory_expiry",
        "Inspect a record's expiry",
        "Explain a repository record's normal-read eligibility now: its retention decision (state, "
        "boundary, reason), current-assertion exclusions and whether ordinary reads include it.",
        ExpiryArgs,
        _expiry,
        annotations=READ_ONLY,
        output=OutputModel("outputs_recall", "ExpiryOutput"),
    ),
    Tool(
        "plan_maintenance",
        "Plan repository maintenance",
        "The immutable memzoi/maintenance-plan over the repository's canonical records: exact duplicates, "
        "unresolved contradictions (the full set, no winner), staleness and expiry, with evidence digests and "
        "action candidates. Report only: nothing is written, no artifact is stored.",
        MaintenanceArgs,
        _maintenance,
        annotations=READ_ONLY,
        output=OutputModel("outputs_recall", "MaintenanceOutput"),
    ),
    Tool(
        "plan_capture",
        "Plan a capture",
        "A deterministic, read-only capture plan of one project-relative Markdown file (memzoi/capture-request, "
        "profile markdown-deterministic): its typed sections as candidates with evidence, duplicates and "
        "conflicts. Plans with private (local or session) candidates are denied. Nothing is written.",
        CaptureArgs,
        _capture,
        annotations=READ_ONLY,
        output=OutputModel("outputs_recall", "CaptureOutput"),
    ),
)
