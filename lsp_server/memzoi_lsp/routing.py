"""Runtime-plane input files in the editor (a session-end ``{task, candidates}`` file, an import manifest): their
diagnostics, the *Plan memory routing…* code action, and the preview and apply commands. Protocol glue only: every
decision comes from :mod:`memzoi.lifecycle.routing` (findings graded by :func:`memzoi.project.verdict.graded`).

Commands (one object argument; refusals are JSON-RPC errors, see :mod:`.refusal`):

* ``memzoi.routing.preview`` ``{"uri"}`` → the outcome per candidate before anything is written
  (:func:`memzoi.lifecycle.routing.routing_preview`: ``kind``, ``blocked``, ``candidates`` with the packet path or
  runtime route each would create or the reason codes that block it, and the ``plan_id`` (import) or
  ``expected_version`` (session-end) apply must be given);
* ``memzoi.routing.apply`` ``{"uri", "plan_id"? , "expected_version"?}`` → the ``memzoi import apply`` /
  ``memzoi session-end`` JSON outcome, one ledgered change; refused when the state moved since the preview.

The file must be saved (the preview and apply read what is on disk, as the CLI does).
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import TYPE_CHECKING, Any

from lsprotocol import types

from memzoi.base.findings import Finding

from .documents import uri_to_path
from .lifecycle import CommandError, command, refuse_if_dirty

if TYPE_CHECKING:
    from .documents import Snapshot
    from .session import Session

PREVIEW = "memzoi.routing.preview"
APPLY = "memzoi.routing.apply"


def input_root(ls: Session, snap: Snapshot) -> Path | None:
    """The project root of ``snap`` when it is a runtime input file of a project (else ``None``)."""
    from memzoi.lifecycle.routing import input_kind  # noqa: PLC0415 lazy: start-up

    if snap.path is None or snap.analysis.placement.memzoi_dir is not None or input_kind(snap.path, snap.text) is None:
        return None
    return _root_of(ls, snap.path)


def _root_of(ls: Session, path: Path) -> Path | None:
    """The workspace project holding ``path``; else the project of the nearest ``.memzoi`` above it, registered
    now (an input file opened before, or outside, the workspace folders' projects)."""
    roots = [r for r in ls.projects if path.is_relative_to(r)]
    if roots:
        return max(roots, key=lambda r: len(r.parts))
    for folder in path.parents:
        if (folder / ".memzoi").is_dir():
            project = ls.add_project(folder)
            return project.root if project is not None else None
    return None


def target_path(ls: Session, arg: dict[str, Any]) -> tuple[Path, Path]:
    """``(project root, file path)`` of the input file ``uri`` (a file anywhere under a workspace project)."""
    uri = arg.get("uri")
    path = uri_to_path(uri) if isinstance(uri, str) and uri else None
    if path is None:
        raise CommandError("invalid_arguments", "this command needs the saved input file's `uri`")
    root = _root_of(ls, path)
    if root is None:
        raise CommandError("not_in_project", f"{path.name}: not inside a project of this workspace")
    return root, path


def findings_for(ls: Session, snap: Snapshot, root: Path) -> list[Finding]:
    """The verdict's findings of the input file ``snap`` (its text: unsaved edits included)."""
    from memzoi.lifecycle.routing import input_verdict  # noqa: PLC0415 lazy: start-up

    return list(input_verdict(snap.path, snap.text, root, ls.context(ls.projects[root])))


def code_actions(ls: Session, snap: Snapshot) -> list[types.CodeAction]:
    """*Plan memory routing…*: the client shows the preview, then applies it on confirmation."""
    from .codeactions import REVIEW_KIND, action as _action, is_dirty  # noqa: PLC0415 lazy: start-up

    dirty = "save the file first: routing reads the file on disk" if is_dirty(ls, snap) else None
    action = _action(
        ls, "Plan memory routing (preview)…", REVIEW_KIND, PREVIEW, {"uri": snap.uri}, dirty, preferred=True
    )
    return [action] if action is not None else []


def _text(path: Path) -> str:
    from memzoi.ledger import Refusal  # noqa: PLC0415 lazy: start-up

    try:
        return path.read_bytes().decode("utf-8")
    except (OSError, UnicodeDecodeError) as err:
        raise Refusal("unreadable", f"{path.name}: cannot read it as UTF-8 text ({type(err).__name__})") from None


@command(PREVIEW)
async def preview(ls: Session, arg: dict[str, Any]) -> dict[str, Any]:
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
async def apply(ls: Session, arg: dict[str, Any]) -> dict[str, Any]:
    """Apply the routing the preview showed (``plan_id`` for an import, ``expected_version`` for session-end)."""
    from memzoi.lifecycle import default_actor  # noqa: PLC0415 lazy: start-up
    from memzoi.lifecycle.routing import routing_apply  # noqa: PLC0415 lazy: start-up

    from . import changes  # noqa: PLC0415 lazy: start-up

    root, path = target_path(ls, arg)
    refuse_if_dirty(ls, path)
    version = arg.get("expected_version")
    if version is not None and (isinstance(version, bool) or not isinstance(version, int)):
        raise CommandError("invalid_arguments", "`expected_version` is the integer the preview showed")
    actor = arg.get("actor") or default_actor()
    out = await asyncio.get_running_loop().run_in_executor(
        None,
        lambda: routing_apply(
            root, path, _text(path), actor=actor, plan_id=arg.get("plan_id"), expected_version=version
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


def register(server: Session) -> None:
    """Register the routing commands."""
    for handler in HANDLERS:
        server.command(handler.__memzoi_command__)(handler)
