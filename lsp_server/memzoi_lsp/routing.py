"""Runtime-plane input files in the editor (a session-end ``{task, candidates}`` file, an import manifest): their
diagnostics, the *Plan memory routing…* code action, and the preview and apply commands. Protocol glue only: every
decision comes from :mod:`memzoi.lifecycle.routing` (findings graded by :func:`memzoi.project.verdict.graded`).

Commands (one object argument; refusals are JSON-RPC errors, see :mod:`.refusal`):

* ``memzoi.routing.preview`` ``{"uri"}`` → the outcome per candidate before anything is written
  (:func:`memzoi.lifecycle.routing.routing_preview`: ``kind``, ``blocked``, ``candidates`` with the packet path or
  runtime route each would create or the reason codes that block it, and the ``plan_id`` (import) or
  ``expected_version`` and ``previewed`` (session-end: the fingerprint of the input file's bytes and the plan,
  :mod:`memzoi.ledger.previewed`) apply must be given);
* ``memzoi.routing.apply`` ``{"uri", "plan_id"? , "expected_version"?, "previewed"?}`` → the ``memzoi import
  apply`` / ``memzoi session-end`` JSON outcome, one ledgered change; refused when the state moved since the
  preview (``preview_stale`` when the file or the plan changed; without ``previewed``, an older client, the file
  is routed as it is on disk).

The file must be saved (the preview and apply read what is on disk, as the CLI does).
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .commanding import CommandError, CommandGroup, command, previewed_of, refuse_if_dirty
from .routing_view import APPLY, PREVIEW, target_path

if TYPE_CHECKING:
    from .session import CommandSession


def _text(path: Path) -> str:
    from memzoi.ledger import Refusal  # noqa: PLC0415 lazy: start-up

    try:
        return path.read_bytes().decode("utf-8")
    except (OSError, UnicodeDecodeError) as err:
        raise Refusal("unreadable", f"{path.name}: cannot read it as UTF-8 text ({type(err).__name__})") from None


@command(PREVIEW)
async def preview(ls: CommandSession, arg: dict[str, Any]) -> dict[str, Any]:
    """The routing of the saved input file ``uri`` per candidate, writing nothing."""
    from memzoi.lifecycle import default_actor  # noqa: PLC0415 lazy: start-up
    from memzoi.lifecycle.routing import routing_preview  # noqa: PLC0415 lazy: start-up

    root, path = target_path(ls, arg)
    refuse_if_dirty(ls, path)
    actor = arg.get("actor") or default_actor()
    out = await asyncio.get_running_loop().run_in_executor(
        None, lambda: routing_preview(root, path, _text(path), actor=actor)
    )
    return {**out, "uri": arg["uri"], "actor": actor}


@command(APPLY)
async def apply(ls: CommandSession, arg: dict[str, Any]) -> dict[str, Any]:
    """Apply the routing the preview showed (``plan_id`` for an import, ``expected_version`` and ``previewed`` for
    session-end)."""
    from memzoi.lifecycle import default_actor  # noqa: PLC0415 lazy: start-up
    from memzoi.lifecycle.routing import routing_apply  # noqa: PLC0415 lazy: start-up

    from . import changes  # noqa: PLC0415 lazy: start-up

    root, path = target_path(ls, arg)
    refuse_if_dirty(ls, path, previewed=previewed_of(arg), root=root, operation="session_end")
    version = arg.get("expected_version")
    if version is not None and (isinstance(version, bool) or not isinstance(version, int)):
        raise CommandError("invalid_arguments", "`expected_version` is the integer the preview showed")
    actor, previewed = arg.get("actor") or default_actor(), previewed_of(arg)
    out = await asyncio.get_running_loop().run_in_executor(
        None,
        lambda: routing_apply(
            root,
            path,
            _text(path),
            actor=actor,
            plan_id=arg.get("plan_id"),
            expected_version=version,
            previewed=previewed,
        ),
    )
    written = [root / c["path"] for c in out.get("candidates", []) + out.get("writes", []) if c.get("path")]
    if written:
        changes.after_write(
            ls,
            written,
            change_id=out.get("change_id"),
            operation="routing",
            message=f"routed {len(written)} packet(s)",
            inbox=True,
        )
    return out


HANDLERS = [preview, apply]


#: The routing commands, a feature the server composes (:class:`.commanding.CommandGroup`).
FEATURE = CommandGroup.of("routing", HANDLERS)
