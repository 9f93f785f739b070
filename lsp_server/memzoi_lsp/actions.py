"""Code actions: quick fixes for fixable findings, and lifecycle actions (as commands) on proposals, records,
materialization candidates and uncertain ledger changes.

Listing is cheap: quick fixes carry only ``data`` naming the finding and fix; the text edits are computed in
``codeAction/resolve`` when the client supports resolving ``edit``, eagerly otherwise. ``context.only`` is
honoured hierarchically.

The kinds of lifecycle actions and how ``context.only`` selects them are :mod:`.codeactions`'.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from lsprotocol import types
from pygls.capabilities import get_capability

from memzoi.base.findings import Finding

from . import commandids, resident_view, routing_view
from .codeactions import (
    APPLY_KIND,
    KINDS,
    MATERIALIZE_KIND,
    OPERATIONS,
    PREVIEW_KIND,
    QUICKFIX,
    REATTEST_KIND,
    RECOVER_KIND,
    REJECT_KIND,
    REVIEW,
    REVIEW_KIND,
    ROUTE_KIND,
    SUPERSEDE_KIND,
    TOMBSTONE_KIND,
    UNDO_KIND,
    action as _action,
    finish,
    is_dirty,
    kind_allowed,
    lifecycle_kind,
)
from .convert import TextMap
from .documents import Snapshot, uri_to_path
from .protocol import handler

if TYPE_CHECKING:
    from memzoi.lifecycle.offers import Offer

    from .session import ReadSession


def _fix_edits(ls: ReadSession, snap: Snapshot, f: Finding, fix_index: int) -> types.WorkspaceEdit:
    tm = TextMap(snap.text, ls.workspace.position_encoding)
    edits = [types.TextEdit(range=tm.range(e.start, e.end), new_text=e.new_text) for e in f.fixes[fix_index].edits]
    if snap.version is not None and get_capability(
        ls.client_capabilities, "workspace.workspace_edit.document_changes", False
    ):
        return types.WorkspaceEdit(
            document_changes=[
                types.TextDocumentEdit(
                    text_document=types.OptionalVersionedTextDocumentIdentifier(uri=snap.uri, version=snap.version),
                    edits=edits,
                )
            ]
        )
    return types.WorkspaceEdit(changes={snap.uri: edits})


def _find(snap: Snapshot, code: str, start: int, end: int) -> Finding | None:
    for f in snap.analysis.findings:
        if f.code == code and f.start == start and f.end == end:
            return f
    return None


def quick_fixes(ls: ReadSession, snap: Snapshot, params: types.CodeActionParams) -> list[types.CodeAction]:
    """Quick fixes for the fixable findings overlapping the requested range."""
    tm = TextMap(snap.text, ls.workspace.position_encoding)
    lo = tm.offset(params.range.start)
    hi = tm.offset(params.range.end)
    resolve = "edit" in (
        get_capability(ls.client_capabilities, "text_document.code_action.resolve_support.properties", None) or []
    )
    diags = {(d.code, d.range.start.line, d.range.start.character): d for d in params.context.diagnostics}
    out: list[types.CodeAction] = []
    for f in ls.findings_for(snap):
        if not f.fixes:
            continue
        if not (f.start <= hi and lo <= f.end):
            continue
        rng = tm.range(f.start, f.end)
        diag = diags.get((f.code, rng.start.line, rng.start.character))
        for i, fix in enumerate(f.fixes):
            action = types.CodeAction(
                title=fix.title,
                kind=QUICKFIX,
                diagnostics=[diag] if diag else None,
                is_preferred=len(f.fixes) == 1,
                data={
                    "type": "fix",
                    "uri": snap.uri,
                    "version": snap.version,
                    "code": f.code,
                    "start": f.start,
                    "end": f.end,
                    "fix": i,
                },
            )
            if not resolve:
                action.edit = _fix_edits(ls, snap, f, i)
            out.append(action)
    return out


class CodeActions:
    """The code action feature (``textDocument/codeAction`` and ``codeAction/resolve``): reads over the
    :class:`~memzoi_lsp.session.ReadSession` it is made with (an action's edit or command runs later, as its own
    request); it owns no state."""

    def __init__(self, ls: ReadSession) -> None:
        self._ls = ls

    def register(self, server: ReadSession) -> None:
        """Register ``textDocument/codeAction`` and ``codeAction/resolve``."""
        server.feature(
            types.TEXT_DOCUMENT_CODE_ACTION, types.CodeActionOptions(code_action_kinds=KINDS, resolve_provider=True)
        )(handler(self.code_action))
        server.feature(types.CODE_ACTION_RESOLVE)(handler(self.resolve))

    def code_action(self, params: types.CodeActionParams) -> list[types.CodeAction] | None:
        """The quick fixes and the review actions of the document (materialization actions for a ``.json`` artifact)."""
        ls = self._ls
        uri = params.text_document.uri
        if uri.endswith(".json"):
            return finish(materialization_actions(ls, uri), params) or None
        snap = ls.docs.snapshot(uri)
        if snap is None or not ls.is_memzoi(snap):
            return None
        actions: list[types.CodeAction] = []
        if kind_allowed(QUICKFIX, params.context.only):
            actions.extend(quick_fixes(ls, snap, params))
        where = resident_view.file_of(ls, snap.path) if snap.analysis.placement.memzoi_dir is None else None
        wanted = any(lifecycle_kind(op, params.context.only, True) for op in OPERATIONS)
        if where is not None and wanted:
            actions.extend(finish(resident_view.code_actions(ls, snap, where), params))
        elif wanted and routing_view.input_root(ls, snap) is not None:
            actions.extend(finish(routing_view.code_actions(ls, snap), params))
        elif wanted:
            actions.extend(finish(lifecycle_actions(ls, snap), params))
        return actions or None

    def resolve(self, action: types.CodeAction) -> types.CodeAction:
        """A quick fix's edit, computed when the client picks it (none when the document changed since the listing)."""
        ls = self._ls
        data = action.data if isinstance(action.data, dict) else {}
        if data.get("type") != "fix":
            return action
        snap = ls.docs.snapshot(str(data.get("uri")))
        if snap is None:
            return action
        if data.get("version") is not None and snap.version != data.get("version"):
            # The document changed since listing: the stored offsets no longer apply; offer nothing rather than
            # a wrong edit (the client lists actions again).
            return action
        f = _find(snap, str(data.get("code")), int(data.get("start", -1)), int(data.get("end", -1)))
        idx = int(data.get("fix", 0))
        if f is None or idx >= len(f.fixes):
            return action
        action.edit = _fix_edits(ls, snap, f, idx)
        return action


# --- lifecycle actions (commands) ------------------------------------------------------------------------------

#: Menu titles of the core's offers (:mod:`memzoi.lifecycle.offers`): operation -> (title, kind, preview title).
OFFER_TITLES = {
    "review": ("Review proposal…", REVIEW_KIND, None),
    "apply": ("Apply proposal", APPLY_KIND, "Preview: apply proposal"),
    "reject": ("Reject proposal…", REJECT_KIND, None),
    "route_local": ("Route to local memory", ROUTE_KIND, None),
    "supersede": ("Supersede record…", SUPERSEDE_KIND, "Preview: supersede record…"),
    "tombstone": ("Tombstone record…", TOMBSTONE_KIND, "Preview: tombstone record…"),
    "reattest": ("Re-attest (accept this edit)", REATTEST_KIND, "Preview: re-attest (the hand edit)"),
}
RECOVER_LABELS = {
    "restore-before": "restore the files as before",
    "complete-after": "complete the change",
    "accept": "accept the files as they are",
}


def _offer_actions(ls: ReadSession, uri: str, offer: Offer) -> list[types.CodeAction | None]:
    from memzoi.lifecycle.messages import change_label  # noqa: PLC0415 lazy: start-up

    args: dict[str, Any] = {"uri": uri}
    if offer.operation == "undo" and offer.change is not None:
        title = f"Undo {offer.change.operation} ({change_label(offer.change.id)})"
        return [_action(ls, title, UNDO_KIND, commandids.UNDO, {**args, "change_id": offer.change.id}, offer.blocked)]
    if offer.operation == "recover" and offer.change is not None and offer.mode is not None:
        title = f"Recover {change_label(offer.change.id)}: {RECOVER_LABELS[offer.mode]}"
        return [
            _action(
                ls,
                title,
                RECOVER_KIND,
                commandids.RECOVER,
                {**args, "change_id": offer.change.id, "mode": offer.mode},
                offer.blocked,
            )
        ]
    title, kind, preview_title = OFFER_TITLES[offer.operation]
    if offer.operation == "review":  # the preferred action: the client's preview-then-write flow
        return [_action(ls, title, kind, REVIEW, args, offer.blocked, preferred=True)]
    command = {
        "apply": commandids.APPLY,
        "reject": commandids.REJECT,
        "route_local": commandids.ROUTE_LOCAL,
        "supersede": commandids.SUPERSEDE,
        "tombstone": commandids.TOMBSTONE,
        "reattest": commandids.REATTEST,
    }[offer.operation]
    out = [_action(ls, title, kind, command, args, offer.blocked)]
    if offer.preview and preview_title:
        out.append(
            _action(
                ls,
                preview_title,
                PREVIEW_KIND,
                commandids.PREVIEW,
                {**args, "operation": offer.operation},
                offer.blocked,
            )
        )
    return out


def lifecycle_actions(ls: ReadSession, snap: Snapshot) -> list[types.CodeAction]:
    """The core's lifecycle offers of a record or packet (:func:`memzoi.lifecycle.offers.file_offers`) as code
    actions: a blocked offer is a disabled action with its reason, or left out for a client that cannot show one."""
    from memzoi.lifecycle.offers import file_offers, path_blocker  # noqa: PLC0415 lazy: start-up

    from . import readiness  # noqa: PLC0415 lazy: start-up

    project = ls.project_for(snap.path)
    ledger = project.ledger.for_file(snap.path) if project is not None and snap.path is not None else None
    path = snap.path
    rel = _project_rel(project.root, path) if project is not None and path is not None else None
    offers = file_offers(
        snap.analysis.placement.role,
        snap.analysis.document.data or {},
        ls.findings_for(snap),
        readiness.of(ls, snap),
        ledger,
        lambda change: project is not None and path is not None and project.ledger.undo_available(path, change),
        unsaved=is_dirty(ls, snap),
        unwritable=path_blocker(project.root, rel) if project is not None and rel is not None else None,
    )
    return [a for offer in offers for a in _offer_actions(ls, snap.uri, offer) if a is not None]


def _project_rel(root: Path, path: Path) -> str | None:
    """``path`` relative to ``root`` in posix form, the way the commands name it (``None`` outside ``root``)."""
    try:
        return path.relative_to(root).as_posix()
    except ValueError:
        return None


#: Menu entries of the core's materialization steps (:func:`memzoi.lifecycle.artifacts.offered_steps`).
STEP_TITLES = {
    "plan": "Plan materialization",
    "decide": "Decide: approve this plan",
    "materialize": "Materialize the decided record",
}


def materialization_actions(ls: ReadSession, uri: str) -> list[types.CodeAction]:
    """The core's next step of a materialization candidate, plan or decision JSON file
    (:func:`memzoi.lifecycle.artifacts.offered_steps`), and the preview of the last one, as code actions."""
    from memzoi.lifecycle.artifacts import artifact_kind, artifact_set, offered_steps  # noqa: PLC0415 lazy: start-up
    from memzoi.lifecycle.buffers import unsaved  # noqa: PLC0415 lazy: start-up

    path = uri_to_path(uri)
    if path is None:
        return []
    try:
        text = ls.workspace.get_text_document(uri).source
    except OSError:
        return []
    if artifact_kind(text) is None:
        return []
    why = unsaved(path, text, is_open=ls.docs.is_open(uri), behind=ls.docs.is_behind(uri))
    dirty = None if why is None else "save the file first: materialization reads the files on disk"
    commands = {
        "plan": commandids.MATERIALIZE_PLAN,
        "decide": commandids.MATERIALIZE_DECIDE,
        "materialize": commandids.MATERIALIZE,
    }
    steps = offered_steps(artifact_set(path))
    out = [_action(ls, STEP_TITLES[step], MATERIALIZE_KIND, commands[step], {"uri": uri}, dirty) for step in steps]
    if "materialize" in steps:
        out.append(
            _action(
                ls,
                "Preview: materialize",
                PREVIEW_KIND,
                commandids.PREVIEW,
                {"uri": uri, "operation": "materialize"},
                dirty,
            )
        )
    return [a for a in out if a is not None]
