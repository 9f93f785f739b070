"""Local candidates in the editor: the private local-memory candidates agents proposed (``memzoi-mcp``,
destination ``local``) listed for the inbox, with approve and reject. Protocol glue only: every decision comes
from :mod:`memzoi.lifecycle.candidates`.

Commands (one object argument; results are the CLI's ``--json`` shapes; refusals are JSON-RPC errors, see :mod:`.refusal`):
``memzoi.local.list`` ``{"root"?}`` → ``{"candidates": [...]}`` (pending ones of every workspace project, each with
its ``root``), ``memzoi.local.approve`` ``{"candidate_id", "root"?}`` → the change, ``memzoi.local.reject``
``{"candidate_id", "reason", "root"?}`` → the candidate.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .commanding import CommandError, CommandGroup, command, off_loop, one_root, reason_of, roots

if TYPE_CHECKING:
    from .session import CommandSession

LIST = "memzoi.local.list"
APPROVE = "memzoi.local.approve"
REJECT = "memzoi.local.reject"


def _candidate_id(arg: dict[str, Any]) -> str:
    cid = arg.get("candidate_id")
    if not isinstance(cid, str) or not cid.strip():
        raise CommandError("invalid_arguments", "this command needs the `candidate_id`")
    return cid.strip()


@command(LIST)
async def listing(ls: CommandSession, arg: dict[str, Any]) -> dict[str, Any]:
    """The pending local candidates of the workspace's projects (empty without a project)."""
    from memzoi.lifecycle.candidates import list_candidates  # noqa: PLC0415 lazy: start-up

    found = roots(ls, arg)

    def collect() -> list[dict[str, Any]]:
        return [{**c.to_json(), "root": str(r)} for r in found for c in list_candidates(r)]

    return {"candidates": await off_loop(collect)}


@command(APPROVE)
async def approve(ls: CommandSession, arg: dict[str, Any]) -> dict[str, Any]:
    """Apply a pending local candidate as a private local record (one ledgered change; undo reverts it)."""
    from memzoi.lifecycle import default_actor  # noqa: PLC0415 lazy: start-up
    from memzoi.lifecycle.candidates import approve_local  # noqa: PLC0415 lazy: start-up

    root, cid, who = one_root(ls, arg), _candidate_id(arg), arg.get("actor") or default_actor()
    result = await off_loop(lambda: approve_local(root, cid, actor=who, source="editor"))
    return result.to_json()


@command(REJECT)
async def reject(ls: CommandSession, arg: dict[str, Any]) -> dict[str, Any]:
    """Reject a pending local candidate with a reason."""
    from memzoi.lifecycle import default_actor  # noqa: PLC0415 lazy: start-up
    from memzoi.lifecycle.candidates import reject_local  # noqa: PLC0415 lazy: start-up

    root, cid, who = one_root(ls, arg), _candidate_id(arg), arg.get("actor") or default_actor()
    why = reason_of(arg, True)
    cand = await off_loop(lambda: reject_local(root, cid, reason=why or "", actor=who))
    return cand.to_json()


HANDLERS = [listing, approve, reject]


#: The local memory commands, a feature the server composes (:class:`.commanding.CommandGroup`).
FEATURE = CommandGroup.of("local memory", HANDLERS)
