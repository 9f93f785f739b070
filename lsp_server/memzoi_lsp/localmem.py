"""Local candidates in the editor: the private local-memory candidates agents proposed (``memzoi-mcp``,
destination ``local``) listed for the inbox, with approve and reject. Protocol glue only: every decision comes
from :mod:`memzoi.lifecycle.candidates`.

Commands (one object argument; results are the CLI's ``--json`` shapes; refusals are JSON-RPC errors, see :mod:`.refusal`):
``memzoi.local.list`` ``{"root"?}`` → ``{"candidates": [...]}`` (pending ones of every workspace project, each with
its ``root``), ``memzoi.local.approve`` ``{"candidate_id", "root"?}`` → the change, ``memzoi.local.reject``
``{"candidate_id", "reason", "root"?}`` → the candidate.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .lifecycle import CommandError, command, reason_of

if TYPE_CHECKING:
    from .session import Session

LIST = "memzoi.local.list"
APPROVE = "memzoi.local.approve"
REJECT = "memzoi.local.reject"


def _roots(ls: "Session", arg: dict[str, Any]) -> list[Path]:
    root = arg.get("root")
    if isinstance(root, str) and root:
        wanted = Path(root).resolve()
        if wanted not in ls.projects:
            raise CommandError("not_in_project", f"{root}: not a project of this workspace")
        return [wanted]
    return sorted(ls.projects)


def _one_root(ls: "Session", arg: dict[str, Any]) -> Path:
    roots = _roots(ls, arg)
    if not roots:
        raise CommandError("not_in_project", "no project in this workspace")
    if len(roots) > 1 and not arg.get("root"):
        raise CommandError("invalid_arguments", "several projects are open: pass the candidate's `root`")
    return roots[0]


def _candidate_id(arg: dict[str, Any]) -> str:
    cid = arg.get("candidate_id")
    if not isinstance(cid, str) or not cid.strip():
        raise CommandError("invalid_arguments", "this command needs the `candidate_id`")
    return cid.strip()


async def _off_loop(call):
    return await asyncio.get_running_loop().run_in_executor(None, call)


@command(LIST)
async def listing(ls: "Session", arg: dict[str, Any]) -> dict[str, Any]:
    """The pending local candidates of the workspace's projects (empty without a project)."""
    from memzoi.lifecycle.candidates import list_candidates

    roots = _roots(ls, arg)

    def collect() -> list[dict[str, Any]]:
        return [{**c.to_json(), "root": str(r)} for r in roots for c in list_candidates(r)]

    return {"candidates": await _off_loop(collect)}


@command(APPROVE)
async def approve(ls: "Session", arg: dict[str, Any]) -> dict[str, Any]:
    """Apply a pending local candidate as a private local record (one ledgered change; undo reverts it)."""
    from memzoi.lifecycle import default_actor
    from memzoi.lifecycle.candidates import approve_local

    root, cid, who = _one_root(ls, arg), _candidate_id(arg), arg.get("actor") or default_actor()
    result = await _off_loop(lambda: approve_local(root, cid, actor=who, source="editor"))
    return result.to_json()


@command(REJECT)
async def reject(ls: "Session", arg: dict[str, Any]) -> dict[str, Any]:
    """Reject a pending local candidate with a reason."""
    from memzoi.lifecycle import default_actor
    from memzoi.lifecycle.candidates import reject_local

    root, cid, who = _one_root(ls, arg), _candidate_id(arg), arg.get("actor") or default_actor()
    why = reason_of(arg, True)
    cand = await _off_loop(lambda: reject_local(root, cid, reason=why or "", actor=who))
    return cand.to_json()


HANDLERS = [listing, approve, reject]


def register(server: "Session") -> None:
    """Register the local-candidate commands."""
    for handler in HANDLERS:
        server.command(handler.__memzoi_command__)(handler)
