"""Lifecycle commands (``workspace/executeCommand``): apply, reject, route to local memory, supersede,
tombstone, re-attest, undo, recover, history and reconcile (materialization: :mod:`.materialization`).

Each is one call into :mod:`memzoi.lifecycle` (a ledgered disk transaction in the core, never a client-side
edit), run through the shared command plumbing (:mod:`.commanding`: arguments, the unsaved-buffer refusal, the
re-index and ``window/showDocument`` after the change). Results are the CLI's ``--json`` shapes (a change
``{"change_id", "status", "files": [...]}``); a refusal is a JSON-RPC error response (:mod:`.refusal`).
"""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path
from typing import TYPE_CHECKING, Any

from lsprotocol import types

from . import refusal
from .commandids import APPLY, HISTORY, REATTEST, RECONCILE, RECOVER, REJECT, ROUTE_LOCAL, SUPERSEDE, TOMBSTONE, UNDO
from .commanding import (
    CommandError,
    CommandGroup,
    command,
    previewed_of,
    project_root,
    reason_of,
    refuse_if_dirty,
    replacement,
    run_change,
    target_path,
)
from .documents import path_to_uri
from .notifications import notify, refresh_lenses

# A real import (not TYPE_CHECKING): pygls resolves command handlers' annotations at call time.
from .session import CommandSession

if TYPE_CHECKING:
    from memzoi.ledger import ChangeResult

log = logging.getLogger("memzoi_lsp.lifecycle")


def _moved_packet(result: ChangeResult, root: Path) -> list[Path]:
    return [root / f.path for f in result.files if f.before is None and f.after is not None and "/resolved/" in f.path]


@command(APPLY)
async def apply(ls: CommandSession, arg: dict[str, Any]) -> dict[str, Any]:
    """Apply a pending proposal packet (``uri``): writes the record, moves the packet to ``resolved/applied``;
    refused when a file changed since the preview ``previewed`` (when given) was shown."""
    from memzoi import lifecycle as core  # noqa: PLC0415 lazy: start-up

    root, path = target_path(ls, arg)
    previewed = previewed_of(arg)
    refuse_if_dirty(ls, path, previewed=previewed, root=root, operation="apply")
    actor = arg.get("actor") or core.default_actor()
    return await run_change(
        ls,
        root,
        lambda: core.apply_proposal(root, path, actor=actor, source="editor", previewed=previewed),
        show=(lambda r: _moved_packet(r, root)) if ls.docs.is_open(path_to_uri(path)) else None,
    )


@command(REJECT)
async def reject(ls: CommandSession, arg: dict[str, Any]) -> dict[str, Any]:
    """Reject a pending proposal packet (``uri``) with a required ``reason``."""
    from memzoi import lifecycle as core  # noqa: PLC0415 lazy: start-up

    root, path = target_path(ls, arg)
    reason = reason_of(arg, False) or ""  # required: the core's one rule (memzoi.ledger.model.rejection_reason)
    refuse_if_dirty(ls, path)
    actor = arg.get("actor") or core.default_actor()
    return await run_change(
        ls,
        root,
        lambda: core.reject_proposal(root, path, reason=reason, actor=actor, source="editor"),
        show=(lambda r: _moved_packet(r, root)) if ls.docs.is_open(path_to_uri(path)) else None,
    )


@command(ROUTE_LOCAL)
async def route_local(ls: CommandSession, arg: dict[str, Any]) -> dict[str, Any]:
    """Route a pending packet the git-plane gate blocks to local (private) memory."""
    from memzoi import lifecycle as core  # noqa: PLC0415 lazy: start-up

    root, path = target_path(ls, arg)
    refuse_if_dirty(ls, path)
    actor = arg.get("actor") or core.default_actor()
    return await run_change(ls, root, lambda: core.route_local(root, path, actor=actor, source="editor"))


@command(SUPERSEDE)
async def supersede(ls: CommandSession, arg: dict[str, Any]) -> dict[str, Any]:
    """Create a pending packet proposing a replacement of the record (``uri``); ``title``/``body`` default to the
    record's own, to be edited in the packet, which is opened."""
    from memzoi import lifecycle as core  # noqa: PLC0415 lazy: start-up

    root, path = target_path(ls, arg)
    reason = reason_of(arg, True) or ""  # required: reason_of refuses a missing one
    previewed = previewed_of(arg)
    refuse_if_dirty(ls, path, previewed=previewed, root=root, operation="supersede")
    title, body = replacement(ls, path, arg)
    actor = arg.get("actor") or core.default_actor()
    return await run_change(
        ls,
        root,
        lambda: core.propose_supersede(
            root, str(path), title=title, body=body, reason=reason, actor=actor, source="editor", previewed=previewed
        ),
        show_created=True,
    )


@command(TOMBSTONE)
async def tombstone(ls: CommandSession, arg: dict[str, Any]) -> dict[str, Any]:
    """Create a pending packet proposing to tombstone the record (``uri``) for ``reason``; opens it."""
    from memzoi import lifecycle as core  # noqa: PLC0415 lazy: start-up

    root, path = target_path(ls, arg)
    reason = reason_of(arg, True) or ""  # required: reason_of refuses a missing one
    previewed = previewed_of(arg)
    refuse_if_dirty(ls, path, previewed=previewed, root=root, operation="tombstone")
    actor = arg.get("actor") or core.default_actor()
    return await run_change(
        ls,
        root,
        lambda: core.propose_tombstone(
            root, str(path), reason=reason, actor=actor, source="editor", previewed=previewed
        ),
        show_created=True,
    )


@command(UNDO)
async def undo(ls: CommandSession, arg: dict[str, Any]) -> dict[str, Any]:
    """Undo the change ``change_id`` (allowed while its files are exactly as it left them)."""
    from memzoi import lifecycle as core  # noqa: PLC0415 lazy: start-up

    change_id = arg.get("change_id")
    if not isinstance(change_id, str) or not change_id.strip():
        raise CommandError("invalid_arguments", "undo needs the `change_id` (see the history)")
    root = project_root(ls, arg)
    record = core.get_change(root, change_id.strip())
    if record is not None:
        refuse_if_dirty(ls, *(root / f.path for f in record.files))
    actor = arg.get("actor") or core.default_actor()
    return await run_change(ls, root, lambda: core.undo(root, change_id.strip(), actor=actor, source="editor"))


@command(RECOVER)
async def recover(ls: CommandSession, arg: dict[str, Any]) -> dict[str, Any]:
    """Settle an uncertain change: ``mode`` is ``restore-before``, ``complete-after`` or ``accept``."""
    from memzoi import lifecycle as core  # noqa: PLC0415 lazy: start-up

    change_id = arg.get("change_id")
    mode = arg.get("mode")
    if not isinstance(change_id, str) or not change_id.strip():
        raise CommandError("invalid_arguments", "recover needs the `change_id` of the uncertain change")
    if mode not in ("restore-before", "complete-after", "accept"):
        raise CommandError("invalid_arguments", "recover needs `mode`: restore-before, complete-after or accept")
    root = project_root(ls, arg)
    record = core.get_change(root, change_id.strip())
    if record is not None:
        refuse_if_dirty(ls, *(root / f.path for f in record.files))
    actor = arg.get("actor") or core.default_actor()
    reason = reason_of(arg, False)
    return await run_change(
        ls, root, lambda: core.recover(root, change_id.strip(), mode, actor=actor, source="editor", reason=reason)
    )


@command(HISTORY)
async def history(ls: CommandSession, arg: dict[str, Any]) -> Any:
    """Changes newest first (of the file ``uri`` when given), as ``memzoi history --json``, each with
    ``undo_available``: whether the ledger would undo it now (:func:`memzoi.ledger.undo_available`), and each file
    with ``change`` (:meth:`memzoi.ledger.FileChange.to_json`: the word ``memzoi history`` prints). A damaged
    ledger refuses with ``corrupt_database`` (what it is, how far it could be read, to run ``memzoi doctor``:
    :func:`memzoi.ledger.checked_history`), never an empty or partial list shown as the whole history."""
    from memzoi.base.runtime_errors import RuntimeStateError  # noqa: PLC0415 lazy: start-up
    from memzoi.ledger import checked_history, undo_available  # noqa: PLC0415 lazy: start-up

    root = project_root(ls, arg)
    rel = None
    if arg.get("uri"):
        _root, path = target_path(ls, arg)
        rel = path.resolve().relative_to(root).as_posix()
    limit = arg.get("limit") if isinstance(arg.get("limit"), int) else None

    def listing() -> list[dict[str, Any]]:
        found = checked_history(root, rel, limit=limit)
        problem = found.problem()
        if problem is not None:
            raise RuntimeStateError("corrupt_database", problem, found.damage.path if found.damage else None)
        return [{**c.to_json(), "undo_available": undo_available(root, c)} for c in found.changes]

    return await asyncio.get_running_loop().run_in_executor(None, listing)


@command(RECONCILE)
async def reconcile(ls: CommandSession, arg: dict[str, Any]) -> Any:
    """Classify changes left in flight by a dead process (never replays); re-diagnoses touched files."""
    from memzoi import lifecycle as core  # noqa: PLC0415 lazy: start-up

    root = project_root(ls, arg)
    loop = asyncio.get_running_loop()
    settled = await loop.run_in_executor(None, lambda: core.reconcile(root))
    ls.process_disk([root / ".memzoi"])
    return [{"change_id": r.change_id, "previous": r.previous, "status": r.status} for r in settled]


@command(REATTEST)
async def reattest(ls: CommandSession, arg: dict[str, Any]) -> dict[str, Any]:
    """Re-attest a hand-edited record (``uri``): explicit acceptance of the edit, recorded in the ledger."""
    from memzoi import lifecycle as core  # noqa: PLC0415 lazy: start-up
    from memzoi.lifecycle.reattest import reattest as core_reattest  # noqa: PLC0415 lazy: start-up

    root, path = target_path(ls, arg)
    previewed = previewed_of(arg)
    refuse_if_dirty(ls, path, previewed=previewed, root=root, operation="reattest")
    reason = reason_of(arg, False)
    actor = arg.get("actor") or core.default_actor()
    return await run_change(
        ls,
        root,
        lambda: core_reattest(root, str(path), actor=actor, source="editor", reason=reason, previewed=previewed),
    )


async def reconcile_on_start(ls: CommandSession, root: Path) -> None:
    """As the server starts on the project at ``root``: reconcile the changes a dead process left in flight
    (:func:`memzoi.ledger.reconcile_at_start`, off the loop; never replays) and re-diagnose the project's files when
    one was settled, so an ``uncertain`` change shows as ``ledger_uncertain`` without a command, and ask the client
    for its code lenses again (:func:`~.notifications.refresh_lenses`). A damaged ledger is
    said once, in a warning naming what to run; the hover and the history view say it again where they need it."""
    from memzoi.base.runtime_errors import RuntimeStateError  # noqa: PLC0415 lazy: start-up
    from memzoi.judge.pathsafety import shown_for_projects  # noqa: PLC0415 lazy: start-up
    from memzoi.ledger import Refusal, reconcile_at_start  # noqa: PLC0415 lazy: start-up

    try:
        settled = await asyncio.get_running_loop().run_in_executor(None, reconcile_at_start, root)
    except (Refusal, RuntimeStateError) as err:
        text = shown_for_projects(f"Memzoi: {err.message}", [root])
        log.warning("%s", text)
        if isinstance(err, RuntimeStateError) and err.code == "corrupt_database" and not ls.stopping:
            notify(ls, types.WINDOW_SHOW_MESSAGE, types.ShowMessageParams(type=types.MessageType.Warning, message=text))
        return
    for r in settled or ():
        log.info("change %s: %s -> %s (reconciled as the server started)", r.change_id, r.previous, r.status)
    if settled and not ls.stopping and ls.projects.get(root) is not None:
        ls.process_disk([root / ".memzoi"])
        refresh_lenses(ls)  # a packet's Apply/Reject lenses change with its uncertain change


HANDLERS = [apply, reject, route_local, supersede, tombstone, reattest, undo, recover, history, reconcile]


#: Every lifecycle command, a feature the server composes (:class:`.commanding.CommandGroup`); refusals are
#: reported as the client expects (:func:`.refusal.install`).
FEATURE = CommandGroup.of("lifecycle", HANDLERS, setup=refusal.install)
