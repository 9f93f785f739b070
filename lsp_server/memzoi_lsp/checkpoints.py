"""Checkpoints and memory health in the editor: the session checkpoints of the Memory Inbox (open, with continue
and close) and the "Memory health" view of the maintenance plan. Protocol glue only: every decision comes from
:mod:`memzoi.lifecycle.checkpoint_review`.

Commands (one object argument; refusals are JSON-RPC errors, see :mod:`.refusal`):

* ``memzoi.checkpoints.list`` ``{"root"?}`` → ``{"projects": [{"root", "version", "checkpoints": [row + "actions"]}]}``;
* ``memzoi.checkpoints.preview`` ``{"checkpoint_id", "operation": "continue"|"close", "root"?}`` → ``{"operation",
  "checkpoint_id", "expected_version", "changed", "before", "after", "summary"}`` (nothing written);
* ``memzoi.checkpoints.apply`` ``{"checkpoint_id", "operation", "expected_version", "root"?}`` → the command's result
  (refused with ``version_conflict`` when the checkpoint changed since the preview);
* ``memzoi.memoryHealth`` ``{"root"?}`` → ``{"projects": [{"root", …memory_health, each group's "uris"}]}``.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from .commanding import CommandError, CommandGroup, command, off_loop, one_root, roots
from .documents import path_to_uri

if TYPE_CHECKING:
    from .session import CommandSession

LIST = "memzoi.checkpoints.list"
PREVIEW = "memzoi.checkpoints.preview"
APPLY = "memzoi.checkpoints.apply"
HEALTH = "memzoi.memoryHealth"


def _text(arg: dict[str, Any], key: str) -> str:
    value = arg.get(key)
    if not isinstance(value, str) or not value.strip():
        raise CommandError("invalid_arguments", f"this command needs `{key}`")
    return value.strip()


@command(LIST)
async def listing(ls: CommandSession, arg: dict[str, Any]) -> dict[str, Any]:
    """The checkpoints of the workspace's projects, with the actions each accepts now."""
    from memzoi.lifecycle.checkpoint_review import checkpoint_inbox  # noqa: PLC0415 lazy: start-up

    found = roots(ls, arg)
    return {"projects": await off_loop(lambda: [{"root": str(r), **checkpoint_inbox(r)} for r in found])}


@command(PREVIEW)
async def preview(ls: CommandSession, arg: dict[str, Any]) -> dict[str, Any]:
    """The before and after of a continue or close, without writing."""
    from memzoi.lifecycle.checkpoint_review import preview_transition  # noqa: PLC0415 lazy: start-up

    root, cid, op = one_root(ls, arg), _text(arg, "checkpoint_id"), _text(arg, "operation")
    return await off_loop(lambda: preview_transition(root, cid, op))


@command(APPLY)
async def apply(ls: CommandSession, arg: dict[str, Any]) -> dict[str, Any]:
    """Apply a previewed continue or close with the preview's expected version."""
    from memzoi.lifecycle.checkpoint_review import apply_transition  # noqa: PLC0415 lazy: start-up

    root, cid, op = one_root(ls, arg), _text(arg, "checkpoint_id"), _text(arg, "operation")
    version = arg.get("expected_version")
    if not isinstance(version, int) or isinstance(version, bool):
        raise CommandError("invalid_arguments", "apply needs the preview's `expected_version`")
    return await off_loop(lambda: apply_transition(root, cid, op, version))


def _with_uris(root: Path, health: dict[str, Any]) -> dict[str, Any]:
    for key in ("duplicates", "contradictions", "stale", "expired", "expiring"):
        for item in health[key]:
            item["uris"] = {rid: path_to_uri(root / rel) for rid, rel in item["records"].items() if rel}
    return {"root": str(root), **health}


@command(HEALTH)
async def health(ls: CommandSession, arg: dict[str, Any]) -> dict[str, Any]:
    """The Memory health view of each workspace project (duplicates, contradictions, stale, expired, expiring)."""
    from memzoi.agent.maintenance import memory_health  # noqa: PLC0415 lazy: start-up

    found = roots(ls, arg)
    return {"projects": await off_loop(lambda: [_with_uris(r, memory_health(r)) for r in found])}


HANDLERS = [listing, preview, apply, health]


#: The checkpoints commands, a feature the server composes (:class:`.commanding.CommandGroup`).
FEATURE = CommandGroup.of("checkpoints", HANDLERS)
