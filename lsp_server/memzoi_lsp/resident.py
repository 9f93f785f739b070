"""Resident memory's commands: the global ``MEMORY.md`` and the project's ``.zuno/RULES.md`` (their diagnostics,
hover, code lens and code actions: :mod:`.resident_view`) get commands to approve, reject, undo, recover and list.
Protocol glue only: every decision comes from :mod:`memzoi.resident`.

Commands (arguments: one object; results: the CLI's ``--json`` shapes; refusals are JSON-RPC errors, see :mod:`.refusal`):
``memzoi.resident.approve`` ``{"uri", "candidate_id", "previewed"?}`` (the fingerprint of the ``memzoi.preview``
``approve`` answer: refused ``preview_stale``, nothing recorded, when the file or the candidate changed since; without
it, an older client, the file is read as it is), ``memzoi.resident.undo`` ``{"uri", "candidate_id"}``, ``memzoi.resident.reject`` ``{"uri",
"candidate_id", "reason"}``, ``memzoi.resident.recover`` ``{"uri", "candidate_id", "mode", "reason"?}`` (an
uncertain candidate; ``mode`` is ``restore-before``, ``complete-after`` or ``accept``), ``memzoi.resident.review``
``{"uri", "status"?}`` (the candidates of that status, ``pending`` or ``uncertain``; without it those waiting for a
decision, ``pending`` and ``failed``) and ``memzoi.resident.list`` ``{"uri"?}`` (both files with their usage, and
every candidate with ``decidable``: whether approve and reject apply to it now, :func:`memzoi.resident.editor.pending`).
"""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path
from typing import TYPE_CHECKING, Any

from memzoi.base.runtime_errors import RuntimeStateError
from memzoi.base.vocabulary import RECOVERY_MODES

from .commanding import CommandError, CommandGroup, command, previewed_of, project_root, reason_of
from .documents import path_to_uri, uri_to_path
from .notifications import refresh_lenses
from .resident_view import APPROVE, LIST, RECOVER, REJECT, REVIEW, STATUS, UNDO, decide, file_of, where

if TYPE_CHECKING:
    from .session import CommandSession

log = logging.getLogger("memzoi_lsp.resident")


async def reconcile_on_start(ls: CommandSession, root: Path) -> None:
    """Classify the resident candidates a dead process left in flight for the project's two files (never
    replays a write), as Zuno does when a host starts; when one was settled, re-diagnose both files
    (:func:`_rediagnose`): what the editor showed of a file opened meanwhile was judged from the unsettled
    history (an entry an ``applying`` candidate wrote reads as a hand edit); and ask the client for its code
    lenses again (:func:`~.notifications.refresh_lenses`), which count the candidates by status."""
    from memzoi.ledger import Refusal  # noqa: PLC0415 lazy: start-up
    from memzoi.resident import service  # noqa: PLC0415 lazy: start-up

    try:
        done = await asyncio.get_running_loop().run_in_executor(None, service.reconcile, root)
    except (Refusal, RuntimeStateError) as err:  # a damaged candidate database is the machine's state, not a bug
        log.info("resident reconciliation skipped for %s: %s", root, err.message)
        return
    for r in done:
        log.info("resident candidate %s: %s -> %s", r.candidate_id, r.previous, r.status)
    if done:
        _rediagnose(ls, root)
        refresh_lenses(ls)  # the files' lenses count the candidates by status
    from memzoi.resident.projection import reconcile_jobs  # noqa: PLC0415 lazy: start-up - expired reflection jobs: uncertain, never re-sent

    try:
        expired = await asyncio.get_running_loop().run_in_executor(None, reconcile_jobs)
    except RuntimeStateError as err:
        log.info("reflection reconciliation skipped: %s", err.message)
        return
    for job_id in expired:
        log.info("reflection job %s: running -> uncertain (its owner disappeared)", job_id)


def _rediagnose(ls: CommandSession, root: Path) -> None:
    """Diagnose the project's two resident files again, open or not: push clients get the open buffers'
    diagnostics now (a closed resident file shows none: its diagnostics are cleared as it closes), pull clients
    are asked to pull again (``workspace/diagnostic/refresh``, when they support it)."""
    from memzoi.ledger import Refusal  # noqa: PLC0415 lazy: start-up
    from memzoi.resident.scope import resident_files  # noqa: PLC0415 lazy: start-up

    if ls.stopping or ls.projects.get(root) is None:
        return
    try:
        files = resident_files(root)
    except Refusal:  # the configuration became invalid meanwhile: the files are diagnosed when next opened
        return
    for file in files:
        uri = ls.docs.open_uri_for(file.path)
        if uri is not None:
            ls.publish(uri)
    ls.request_refresh()


@command(APPROVE)
async def approve(ls: CommandSession, arg: dict[str, Any]) -> dict[str, Any]:
    """Apply a pending or failed candidate (at most once); refused (``preview_stale``) when the file or the
    candidate changed since the preview ``previewed`` (when given) was shown."""
    from memzoi.resident import service  # noqa: PLC0415 lazy: start-up

    previewed = previewed_of(arg)
    return await decide(
        ls, arg, "approve", lambda root, cid, who: service.apply(root, cid, actor=who, previewed=previewed)
    )


@command(REJECT)
async def reject(ls: CommandSession, arg: dict[str, Any]) -> dict[str, Any]:
    """Reject a pending or failed candidate with its required ``reason`` (the same rule as a proposal's rejection:
    :func:`memzoi.ledger.model.rejection_reason`)."""
    from memzoi.resident import service  # noqa: PLC0415 lazy: start-up

    why = arg.get("reason") if isinstance(arg.get("reason"), str) else None  # the core's one rule decides
    return await decide(
        ls, arg, "reject", lambda root, cid, who: service.reject(root, cid, actor=who, reason=why or ""), on_disk=False
    )


@command(UNDO)
async def undo(ls: CommandSession, arg: dict[str, Any]) -> dict[str, Any]:
    """Restore the entries from before an applied candidate."""
    from memzoi.resident import service  # noqa: PLC0415 lazy: start-up

    return await decide(ls, arg, "undo", lambda root, cid, who: service.undo(root, cid, actor=who))


@command(RECOVER)
async def recover(ls: CommandSession, arg: dict[str, Any]) -> dict[str, Any]:
    """Settle an uncertain candidate (``mode``: restore-before, complete-after or accept); returns the recovery
    candidate."""
    from memzoi.resident import service  # noqa: PLC0415 lazy: start-up

    mode = arg.get("mode")
    if mode not in RECOVERY_MODES:
        raise CommandError("invalid_arguments", f"recover needs `mode`: {', '.join(RECOVERY_MODES)}")
    why = reason_of(arg, False)
    return await decide(
        ls, arg, "recover", lambda root, cid, who: service.recover(root, cid, mode, actor=who, reason=why)
    )


@command(REVIEW)
async def review(ls: CommandSession, arg: dict[str, Any]) -> list[dict[str, Any]]:
    """The candidates of the file ``uri`` a code lens names (``status``), or those waiting for a decision."""
    from memzoi.resident import editor  # noqa: PLC0415 lazy: start-up
    from memzoi.resident.views import candidates_for  # noqa: PLC0415 lazy: start-up

    root, file = where(ls, arg)
    status = arg.get("status")
    if status is not None and status not in editor.LENS_STATUSES:
        raise CommandError("invalid_arguments", f"`status` must be one of {', '.join(editor.LENS_STATUSES)}")
    files = [file] if file is not None else None
    history = await asyncio.get_running_loop().run_in_executor(None, lambda: candidates_for(root, files=files))
    chosen = editor.pending(history) if status is None else [c for c in history if c.status == status]
    return [c.to_json() for c in chosen]


@command(LIST)
async def listing(ls: CommandSession, arg: dict[str, Any]) -> dict[str, Any]:
    """Both resident files (path, usage, entries, uri) and every candidate of the project (inbox views); empty
    when the workspace has no project and no ``uri`` is given (the inbox asks on every refresh)."""
    from memzoi.resident import editor  # noqa: PLC0415 lazy: start-up
    from memzoi.resident.views import candidates_for, listed_views  # noqa: PLC0415 lazy: start-up

    if not arg.get("uri") and not ls.projects:
        return {"scopes": [], "candidates": []}
    root, _file = where(ls, arg)

    def collect() -> dict[str, Any]:
        views = [{**v.to_json(), "uri": path_to_uri(v.file.path)} for v in listed_views(root)]
        history = candidates_for(root)
        open_ids = {c.id for c in editor.pending(history)}
        return {"scopes": views, "candidates": [{**c.to_json(), "decidable": c.id in open_ids} for c in history]}

    return await asyncio.get_running_loop().run_in_executor(None, collect)


@command(STATUS)
async def status(ls: CommandSession, arg: dict[str, Any]) -> dict[str, Any]:
    """Cap usage of the resident files of the project of ``uri`` (a resident file or any file of a project; without
    it, the workspace's first project): ``{"files": [{"uri", "scope", "used", "cap", "entries", "line"}]}``, from
    an open buffer's text where the editor has the file open, else from the disk. ``entries`` is a count."""
    from memzoi.resident import editor  # noqa: PLC0415 lazy: start-up
    from memzoi.resident.scope import resident_files  # noqa: PLC0415 lazy: start-up

    uri = arg.get("uri")
    found = file_of(ls, uri_to_path(uri)) if isinstance(uri, str) and uri else None
    root = found[0] if found is not None else project_root(ls, arg)

    def collect() -> list[dict[str, Any]]:
        out = []
        for file in resident_files(root):
            snap = ls.docs.snapshot(path_to_uri(file.path)) if ls.docs.is_open(path_to_uri(file.path)) else None
            try:
                text = snap.text if snap is not None else file.path.read_text(encoding="utf-8", errors="replace")
            except OSError:
                text = ""
            used, cap, count, line = editor.cap_status(text, file)
            out.append(
                {
                    "uri": path_to_uri(file.path),
                    "scope": file.scope,
                    "used": used,
                    "cap": cap,
                    "entries": count,
                    "line": line,
                }
            )
        return out

    return {"files": collect()}  # two small files, read on the loop with the buffers they may have


HANDLERS = [approve, reject, undo, recover, review, listing, status]


#: The resident commands, a feature the server composes (:class:`.commanding.CommandGroup`).
FEATURE = CommandGroup.of("resident", HANDLERS)
