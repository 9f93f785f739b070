"""``memzoi.preview``: the planned before/after of every file of a lifecycle change, without writing
(:func:`memzoi.lifecycle.preview.preview`). Editors show it as a diff (VS Code's diff editor, a Neovim diff split).

Argument: ``{"uri", "operation": "apply"|"supersede"|"tombstone"|"materialize"|"reattest"|"approve"|"remove_entry",
"reason"?, "title"?, "body"?, "candidateId"?, "content"?, "scope"?, "locator"?}`` (``approve``: the resident
candidate ``candidateId`` of the resident file ``uri``, with ``content`` when it is approved edited;
``remove_entry``: removing the entry ``locator`` selects in ``scope``; ``reattest``: the diff is the hand edit
since the attested revision).
Result: ``{"operation", "summary", "reason", "files": [{"path", "uri", "before", "after", "change"}], "target"?: {"path",
"title"}}`` (text or ``null``; ``target`` names the file acted on, for the confirmation).
``memzoi.changeFiles`` ``{"change_id"}`` gives the same for a change of the ledger (a history's *Open Diff*).
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from .commandids import PREVIEW
from .commanding import CommandError, CommandGroup, command, project_root, reason_of, replacement, target_path
from .documents import path_to_uri, uri_to_path

# A real import (not TYPE_CHECKING): pygls resolves command handlers' annotations at call time.
from .session import CommandSession

CHANGE_FILES = "memzoi.changeFiles"


def _materialize_target(ls: CommandSession, arg: dict[str, Any]) -> tuple[Path, tuple[Any, ...]]:
    """The project root and the loaded (candidate, plan, decision) artifacts of a materialize preview."""
    from memzoi.judge.workspace import find_project_root  # noqa: PLC0415 lazy: start-up
    from memzoi.lifecycle.artifacts import artifact_set  # noqa: PLC0415 lazy: start-up
    from memzoi.lifecycle.materialize import load_artifact  # noqa: PLC0415 lazy: start-up

    src = uri_to_path(str(arg.get("uri") or ""))
    if src is None:
        raise CommandError("invalid_arguments", "this command needs the artifact's `uri`")
    files = artifact_set(src)
    artifacts = tuple(load_artifact(files[k]) for k in ("candidate", "plan", "decision"))
    return (sorted(ls.projects)[0] if len(ls.projects) == 1 else find_project_root(src)), artifacts


@command(PREVIEW)
async def preview(ls: CommandSession, arg: dict[str, Any]) -> dict[str, Any]:
    """The planned files of ``operation`` on the file ``uri`` (see the module docstring); refused as the change
    itself would be."""
    from memzoi.lifecycle import default_actor  # noqa: PLC0415 lazy: start-up
    from memzoi.lifecycle.preview import preview as core_preview  # noqa: PLC0415 lazy: start-up

    operation = arg.get("operation")
    path, artifacts = None, None
    if operation in ("approve", "remove_entry"):
        return await _approve_preview(ls, arg)
    if operation == "materialize":
        root, artifacts = _materialize_target(ls, arg)
    elif operation in ("apply", "supersede", "tombstone", "reattest"):
        root, path = target_path(ls, arg)
    else:
        raise CommandError(
            "invalid_arguments",
            "`operation` is one of apply, supersede, tombstone, materialize, reattest, approve, remove_entry",
        )
    reason = reason_of(arg, operation in ("supersede", "tombstone"))
    title, body = (
        replacement(ls, path, arg)
        if operation == "supersede" and path is not None
        else (arg.get("title"), arg.get("body"))
    )
    actor = arg.get("actor") or default_actor()
    result = await asyncio.get_running_loop().run_in_executor(
        None,
        lambda: core_preview(
            root, operation, path, actor=actor, reason=reason, title=title, body=body, artifacts=artifacts
        ),
    )
    for f in result["files"]:
        f["uri"] = path_to_uri(root / f["path"])
    return result


async def _approve_preview(ls: CommandSession, arg: dict[str, Any]) -> dict[str, Any]:
    """The preview of approving a resident candidate (:func:`memzoi.resident.service.preview_apply`), with edited
    ``content`` (:func:`memzoi.resident.decisions.preview_edit`), or of removing the entry ``locator`` selects
    (``remove_entry``: :func:`memzoi.resident.decisions.preview_remove`)."""
    from memzoi.resident import decisions, service  # noqa: PLC0415 lazy: start-up

    from .resident_view import where  # noqa: PLC0415 lazy: start-up

    root, file = where(ls, arg)
    cid = arg.get("candidateId") or arg.get("candidate_id")
    content, locator = arg.get("content"), arg.get("locator")
    if arg.get("operation") == "remove_entry":
        if not isinstance(locator, str) or not locator.strip():
            raise CommandError("invalid_arguments", "a remove_entry preview needs the `locator`")
        scope = arg.get("scope") or (file.scope if file is not None else "project")
        call = lambda: decisions.preview_remove(root, scope, locator)  # noqa: E731
    elif not isinstance(cid, str) or not cid.strip():
        raise CommandError("invalid_arguments", "an approve preview needs the `candidateId`")
    elif isinstance(content, str):
        call = lambda: decisions.preview_edit(root, cid.strip(), content)  # noqa: E731
    else:
        call = lambda: service.preview_apply(root, cid.strip())  # noqa: E731
    result = await asyncio.get_running_loop().run_in_executor(None, call)
    for f in result["files"]:
        f["uri"] = path_to_uri(f["path"])
    return result


@command(CHANGE_FILES)
async def change_files(ls: CommandSession, arg: dict[str, Any]) -> dict[str, Any]:
    """The before/after text of every file of the change ``change_id`` (a history entry's *Open Diff*), each with
    its ``uri``: :func:`memzoi.lifecycle.preview.change_texts`."""
    from memzoi.lifecycle.preview import change_texts  # noqa: PLC0415 lazy: start-up

    change_id = arg.get("change_id")
    if not isinstance(change_id, str) or not change_id.strip():
        raise CommandError("invalid_arguments", "this command needs the `change_id` (see the history)")
    root = project_root(ls, arg)
    result = await asyncio.get_running_loop().run_in_executor(None, change_texts, root, change_id.strip())
    for f in result["files"]:
        f["uri"] = path_to_uri(root / f["path"])
    return result


#: ``memzoi.preview`` and ``memzoi.changeFiles``, a feature the server composes (:class:`.commanding.CommandGroup`).
FEATURE = CommandGroup("preview", {PREVIEW: preview, CHANGE_FILES: change_files})
