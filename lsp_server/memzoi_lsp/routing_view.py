"""Runtime-plane input files as the editor shows them (a session-end ``{task, candidates}`` file, an import
manifest): which file is one (:func:`input_root`, a read; :func:`register_input` registers its project at the editor's
events), its findings and its *Plan memory routing…* code action. Shared
by diagnostics, code actions and the ``routing`` feature's commands, importing none of them
(``tests/test_architecture.py``). Protocol glue only: :mod:`memzoi.lifecycle.routing` decides.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from lsprotocol import types

from memzoi.base.findings import Finding

from .commanding import CommandError
from .documents import uri_to_path

if TYPE_CHECKING:
    from .documents import Snapshot
    from .session import CommandSession, ProjectRegistry, ReadSession

PREVIEW = "memzoi.routing.preview"
APPLY = "memzoi.routing.apply"


def input_root(ls: ReadSession, snap: Snapshot) -> Path | None:
    """The project root of ``snap`` when it is a runtime input file of a registered project (else ``None``). A
    read: it registers nothing (an input file outside the workspace's projects has its project registered when
    it is opened or changed, :func:`register_input`; docs/architecture.md, "Features over snapshots")."""
    if snap.path is None or snap.analysis.placement.memzoi_dir is not None or not is_input(snap.path, snap.text):
        return None
    return registered_root(ls.projects, snap.path)


def is_input(path: Path, text: str) -> bool:
    """Whether ``path`` with ``text`` has a runtime input file's name and content
    (:func:`memzoi.lifecycle.routing.input_kind`); the caller rules out files inside a ``.memzoi`` tree."""
    from memzoi.lifecycle.routing import input_kind  # noqa: PLC0415 lazy: start-up

    return input_kind(path, text) is not None


def registered_root(roots: Iterable[Path], path: Path) -> Path | None:
    """The innermost of the registered project ``roots`` holding ``path`` (``None`` when none does). A read."""
    roots = [r for r in roots if path.is_relative_to(r)]
    return max(roots, key=lambda r: len(r.parts)) if roots else None


def root_of(ls: ProjectRegistry, path: Path) -> Path | None:
    """The workspace project holding ``path``; else the project of the nearest ``.memzoi`` above it, registered
    now (an input file opened before, or outside, the workspace folders' projects). An event's or a command's
    doing, never a read's."""
    root = registered_root(ls.projects, path)
    if root is not None:
        return root
    for folder in path.parents:
        if (folder / ".memzoi").is_dir():
            project = ls.add_project(folder)
            return project.root if project is not None else None
    return None


def register_input(ls: ProjectRegistry, path: Path | None, text: str) -> None:
    """An input file opened or changed in the editor: register the project of the nearest ``.memzoi`` above it
    when no registered project holds it (:func:`root_of`), so the reads (:func:`input_root`) find it."""
    from memzoi.judge.workspace import place  # noqa: PLC0415 lazy: start-up

    if path is None or not is_input(path, text) or registered_root(ls.projects, path) is not None:
        return
    if place(path).memzoi_dir is None:
        root_of(ls, path)


def target_path(ls: CommandSession, arg: dict[str, Any]) -> tuple[Path, Path]:
    """``(project root, file path)`` of the input file ``uri`` (a file anywhere under a workspace project)."""
    uri = arg.get("uri")
    path = uri_to_path(uri) if isinstance(uri, str) and uri else None
    if path is None:
        raise CommandError("invalid_arguments", "this command needs the saved input file's `uri`")
    root = root_of(ls, path)
    if root is None:
        raise CommandError("not_in_project", f"{path.name}: not inside a project of this workspace")
    return root, path


def findings_for(ls: ReadSession, snap: Snapshot, root: Path) -> list[Finding]:
    """The verdict's findings of the input file ``snap`` (its text: unsaved edits included)."""
    from memzoi.lifecycle.routing import input_verdict  # noqa: PLC0415 lazy: start-up

    if snap.path is None:  # input_root found none: an unsaved buffer is no input file
        return []
    return list(input_verdict(snap.path, snap.text, root, ls.context(ls.projects[root])))


def code_actions(ls: ReadSession, snap: Snapshot) -> list[types.CodeAction]:
    """*Plan memory routing…*: the client shows the preview, then applies it on confirmation."""
    from .codeactions import REVIEW_KIND, action as _action, is_dirty  # noqa: PLC0415 lazy: start-up

    dirty = "save the file first: routing reads the file on disk" if is_dirty(ls, snap) else None
    action = _action(
        ls, "Plan memory routing (preview)…", REVIEW_KIND, PREVIEW, {"uri": snap.uri}, dirty, preferred=True
    )
    return [action] if action is not None else []
