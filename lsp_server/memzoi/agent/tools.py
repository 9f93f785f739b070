"""The agent tool table: names, argument models (their JSON Schemas are the tools' input schemas), handlers and
the rules of the channel. Protocol-free: ``memzoi_mcp`` only converts these to MCP and back.

Rules (Zuno: "memory_propose is the only model-visible mutation entry point"; Memzoi: agents read and propose,
humans approve):

* Every tool but the proposal tools only reads. No tool takes a file path to write, and no tool applies,
  rejects, edits or deletes anything.
* Arguments are validated against the tool's model (strict types, unknown keys refused) before any work; a bad
  argument gives an ``invalid_arguments`` error naming the fields, never echoing their values.
* Proposal tools (``mutating``) share one per-process :class:`RateLimit` (``[mcp] proposals_per_minute``); an
  invalid ``[mcp]`` section refuses them (``invalid_config``), and so does a client name a detector flags.
* A :class:`~memzoi.ledger.Refusal` becomes an error result with its code (and, when blocked, the reason codes);
  nothing else a handler raises escapes as a traceback.

The table is explicit: :data:`TOOLS` lists the tools of every tool module (:mod:`.tools_memory`,
:mod:`.tools_resident`, :mod:`.resident_turn`, :mod:`.tools_recall`); a new tool module adds its ``TOOLS`` there
(``tests/mcp/test_tool_schemas.py`` fails on a module whose tools are not in the table). The server lists the table.
"""

from __future__ import annotations

import logging
import math
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ValidationError

from ..base.runtime_errors import RuntimeStateError
from ..base.utf8 import storable, storable_tree
from ..ledger import Refusal
from . import resident_turn, tools_memory, tools_recall, tools_resident
from .arguments import coerce_arguments
from .tooltypes import RateLimit as RateLimit, Session as Session, Tool as Tool, ToolResult as ToolResult

log = logging.getLogger("memzoi.agent")

#: Every agent tool by name, in the order the server lists them: one line per tool module.
TOOLS: dict[str, Tool] = {
    tool.name: tool
    for tool in (
        *tools_memory.TOOLS,
        *tools_resident.TOOLS,
        *resident_turn.TOOLS,
        *tools_recall.TOOLS,
    )
}


class UnknownTool(LookupError):
    """No tool has this name (a protocol error, not a tool result)."""


def call(session: Session, name: str, arguments: dict[str, Any] | None) -> ToolResult:
    """Validate ``arguments`` for tool ``name`` and run it. Raises :class:`UnknownTool`; every other problem is
    an error :class:`ToolResult`. Every string of the result can be sent (:func:`_total`), names no local path
    raw (:func:`shown`) and repeats no secret of the arguments (:func:`unechoed`)."""
    return _total(unechoed(shown(_call(session, name, arguments), session.root), arguments))


def unechoed(result: ToolResult, arguments: Any) -> ToolResult:
    """``result`` with what a secret detector flags in the caller's ``arguments`` ``[redacted]`` wherever the result
    or its error repeats it (a query, a path, an id, a task: :func:`memzoi.safety.redact.scrub_echoes`). The same
    rule as the CLI's and the language server's messages. Unchanged (the same object), the usual case, when no
    argument holds a secret."""
    from ..safety.redact import given_secrets, scrub_echoes  # noqa: PLC0415 lazy: start-up

    secrets = given_secrets(arguments)
    if not secrets:
        return result
    return ToolResult(scrub_echoes(result.data, secrets), scrub_echoes(result.text, secrets), result.is_error)


def shown(result: ToolResult, root: Path) -> ToolResult:
    """``result`` with each place of this machine it names (the project root, its runtime directory, the memzoi
    home, Zuno's folder, and the paths below them: a resident file's, a runtime database's in a failure's message, a
    job's ``project_root``) spelled as :func:`memzoi.judge.pathsafety.shown_local_path` shows it, in its data and
    its text: the one place every tool's result and error leaves the core for the client. Unchanged (the same
    object) when none of those names bears a secret, the usual case."""
    from ..judge.pathsafety import project_spellings, respelled  # noqa: PLC0415 lazy: start-up

    # worked out at the first call (the detectors are loaded with the core: the tools scrub what they echo), then a
    # lookup: cheaper per call than looking for the places in every result first (shown_for_projects)
    spellings = project_spellings(root)
    if not spellings:
        return result
    return ToolResult(respelled(result.data, spellings), respelled(result.text, spellings), result.is_error)


def _call(session: Session, name: str, arguments: dict[str, Any] | None) -> ToolResult:
    tool = TOOLS.get(name)
    if tool is None:
        raise UnknownTool(name)
    args = _validated(tool, arguments)
    if isinstance(args, ToolResult):
        return args
    refused = _proposal_refusal(session) if tool.mutating else None
    if refused is not None:
        return refused
    try:
        return tool.handler(session, args)
    except Refusal as err:
        extra = {"reasons": err.codes} if hasattr(err, "codes") else {}
        extra.update(getattr(err, "extra", None) or {})  # structured facts of the refusal (a duplicate's id …)
        return ToolResult.error(err.code, err.message, **extra)
    except RuntimeStateError as err:  # a full, read-only or damaged runtime directory: named, not a bug
        return ToolResult.error(err.code, err.message)
    except Exception as err:  # a bug must not kill the channel or leak a traceback to the model
        log.exception("tool %s failed", name)
        return ToolResult.error("internal_error", f"{name} failed ({type(err).__name__}); see the server's stderr")


def _validated(tool: Tool, arguments: dict[str, Any] | None) -> BaseModel | ToolResult:
    """``arguments`` as ``tool``'s model, or an ``invalid_arguments`` error naming each field and its problem."""
    try:
        return tool.args.model_validate(coerce_arguments(tool.input_schema(), arguments or {}))
    except ValidationError as err:
        # `msg` and `loc` only: pydantic's `input` would echo the value, which may be a secret.
        problems = [
            {"field": ".".join(str(x) for x in e["loc"]) or "(arguments)", "problem": e["msg"]}
            for e in err.errors(include_url=False, include_input=False)
        ]
        text = "; ".join(f"{p['field']}: {p['problem']}" for p in problems)
        return ToolResult.error("invalid_arguments", f"{tool.name}: {text}", problems=problems)


def _proposal_refusal(session: Session) -> ToolResult | None:
    """Why this session may not propose now (an invalid ``[mcp]`` section, a client name a detector flags, the
    rate limit), as an error result, or ``None``."""
    from ..judge.config import load_section  # noqa: PLC0415 lazy: start-up
    from ..lifecycle.propose import screen_actor  # noqa: PLC0415 lazy: start-up

    _, config_problems = load_section(session.root / ".memzoi", "mcp")
    if config_problems:  # the limits this channel runs under are unknown: refuse rather than guess
        return ToolResult.error(
            "invalid_config",
            f"{'; '.join(config_problems)}; the [mcp] limits cannot be read, so no "
            "proposal is accepted: fix the file (`memzoi check .memzoi/config.toml`)",
        )
    try:  # the client's self-declared name is stored with whatever it proposes
        screen_actor(session.client)
    except Refusal as err:
        return ToolResult.error(err.code, err.message, reasons=getattr(err, "codes", []))
    wait = session.limit.take()
    if wait is not None:
        return ToolResult.error(
            "rate_limited",
            f"this server accepts at most {session.limit.limit} proposals "
            f"per {int(session.limit.window)} s, refused proposals included (each call of a "
            f"proposal tool counts); retry in {math.ceil(wait)} s",
        )
    return None


def _total(result: ToolResult) -> ToolResult:
    """``result`` with every string made :func:`memzoi.base.utf8.storable`: an argument or a record value holding a lone
    surrogate (a JSON or YAML escape) is sent with its escape written out, as the protocol's JSON must be UTF-8."""
    data = storable_tree(result.data)
    text = storable(result.text)
    return result if data is result.data and text is result.text else ToolResult(data, text, result.is_error)


# -- the tools -------------------------------------------------------------------------------------------------
