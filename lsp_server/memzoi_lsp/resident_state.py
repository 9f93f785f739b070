"""Resident memory's WorkStateProjection, reflection jobs, edit-and-approve and one-step removal in the editor
(issue 34). Protocol glue only: :mod:`memzoi.resident.projection` and :mod:`memzoi.resident.decisions` decide.

Commands (one object argument; refusals are JSON-RPC errors, see :mod:`.refusal`):

- ``memzoi.resident.state`` ``{"uri"?}``: the WorkStateProjection of the project (the same object as ``memzoi
  resident state --json`` and MCP's ``get_resident_memory``): entries, files with cap usage, candidates (each
  reflection candidate with its ``job``) and reflection jobs with their outcomes; the inbox's resident section
  and the Neovim and Emacs resident views render it;
- ``memzoi.resident.job`` ``{"job_id"}``: one job's request (exactly as sent) and outcome, secrets screened,
  with ``text``, a readable rendering the clients open in a read-only buffer;
- ``memzoi.resident.edit`` ``{"uri"?, "candidate_id", "content", "previewed"?}``: approve a candidate with edited
  content (both versions kept); preview it first with ``memzoi.preview`` ``{"operation": "approve", "candidateId",
  "content"}``;
- ``memzoi.resident.remove`` ``{"uri"?, "scope"?, "locator", "reason"?, "previewed"?}``: remove one entry as one
  audited step; preview it with ``memzoi.preview`` ``{"operation": "remove_entry", "scope", "locator"}``.

``previewed`` is the preview answer's fingerprint: the write is refused (``preview_stale``, nothing recorded) when
the file or what is written changed since that preview; without it (an older client) the file is read as it is.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any

from .commanding import CommandError, CommandGroup, command, previewed_of

if TYPE_CHECKING:
    from .session import CommandSession

STATE = "memzoi.resident.state"
JOB = "memzoi.resident.job"
EDIT = "memzoi.resident.edit"
REMOVE = "memzoi.resident.remove"


def _text(arg: dict[str, Any], key: str) -> str:
    value = arg.get(key)
    if not isinstance(value, str) or not value.strip():
        raise CommandError("invalid_arguments", f"this command needs `{key}`")
    return value


@command(STATE)
async def state(ls: CommandSession, arg: dict[str, Any]) -> dict[str, Any]:
    """The WorkStateProjection (:func:`memzoi.resident.projection.work_state`); empty lists without a project."""
    from memzoi.resident.projection import reconcile_jobs_before_read, work_state  # noqa: PLC0415 lazy: start-up

    from .resident_view import where  # noqa: PLC0415 lazy: start-up

    if not arg.get("uri") and not ls.projects:
        return {"memory_entries": [], "files": [], "memory_candidates": [], "reflection_jobs": []}
    root, _file = where(ls, arg)

    def collect() -> dict[str, Any]:
        reconcile_jobs_before_read()
        return work_state(root)

    return await asyncio.get_running_loop().run_in_executor(None, collect)


@command(JOB)
async def job(ls: CommandSession, arg: dict[str, Any]) -> dict[str, Any]:
    """One reflection job's records (:func:`memzoi.resident.projection.job_detail`) and their ``text``."""
    from memzoi.resident.projection import job_detail, job_text  # noqa: PLC0415 lazy: start-up

    job_id = _text(arg, "job_id").strip()
    detail = await asyncio.get_running_loop().run_in_executor(None, job_detail, job_id)
    return {**detail, "text": job_text(detail)}


@command(EDIT)
async def edit(ls: CommandSession, arg: dict[str, Any]) -> dict[str, Any]:
    """Approve a pending or failed add/replace candidate with edited ``content``."""
    from memzoi.resident.decisions import edit_and_apply  # noqa: PLC0415 lazy: start-up

    from .resident_view import decide  # noqa: PLC0415 lazy: start-up

    content, previewed = _text(arg, "content"), previewed_of(arg)
    return await decide(
        ls, arg, "edit", lambda root, cid, who: edit_and_apply(root, cid, content, actor=who, previewed=previewed)
    )


@command(REMOVE)
async def remove(ls: CommandSession, arg: dict[str, Any]) -> dict[str, Any]:
    """Remove the entry ``locator`` selects in ``scope`` (default: the file ``uri``'s, else project)."""
    from memzoi.lifecycle import default_actor  # noqa: PLC0415 lazy: start-up
    from memzoi.resident.decisions import remove_entry  # noqa: PLC0415 lazy: start-up

    from .resident_view import refuse_dirty, run, where  # noqa: PLC0415 lazy: start-up

    root, file = where(ls, arg)
    locator = _text(arg, "locator")
    scope = arg.get("scope") or (file.scope if file is not None else "project")
    if file is not None and file.scope == scope:
        refuse_dirty(ls, file)
    reason, who, previewed = arg.get("reason"), arg.get("actor") or default_actor(), previewed_of(arg)
    why = reason if isinstance(reason, str) else None
    return await run(
        ls,
        root,
        file if file is not None and file.scope == scope else None,
        lambda: remove_entry(root, scope, locator, actor=who, reason=why, previewed=previewed),
    )


HANDLERS = [state, job, edit, remove]


#: The resident state commands, a feature the server composes (:class:`.commanding.CommandGroup`).
FEATURE = CommandGroup.of("resident state", HANDLERS)
