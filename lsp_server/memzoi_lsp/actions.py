"""Code actions: quick fixes for fixable findings, and lifecycle actions (as commands) on proposals, records,
materialization candidates and uncertain ledger changes.

Listing is cheap: quick fixes carry only ``data`` naming the finding and fix; the text edits are computed in
``codeAction/resolve`` when the client supports resolving ``edit``, eagerly otherwise. ``context.only`` is
honoured hierarchically (``source`` selects ``source.memzoi.apply``). Kinds never go through ``str(enum)``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from lsprotocol import types
from pygls.capabilities import get_capability

from memzoi.findings import Finding

from .convert import TextMap
from .documents import Snapshot

if TYPE_CHECKING:
    from .server import MemzoiServer

QUICKFIX = types.CodeActionKind.QuickFix.value
SOURCE = types.CodeActionKind.Source.value
KINDS = [QUICKFIX]


def kind_allowed(kind: str, only: list[Any] | None) -> bool:
    """LSP rule: an action of kind ``a.b.c`` matches a requested ``a`` or ``a.b`` (prefix at dot boundaries)."""
    if not only:
        return True
    for want in only:
        w = getattr(want, "value", want)
        if kind == w or kind.startswith(str(w) + "."):
            return True
    return False


def _fix_edits(ls: "MemzoiServer", snap: Snapshot, f: Finding, fix_index: int) -> types.WorkspaceEdit:
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


def quick_fixes(ls: "MemzoiServer", snap: Snapshot, params: types.CodeActionParams) -> list[types.CodeAction]:
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
        if not f.fixes or ls.settings.severity_of(f.code, f.severity) is None:
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
                    "type": "fix", "uri": snap.uri, "version": snap.version,
                    "code": f.code, "start": f.start, "end": f.end, "fix": i,
                },
            )
            if not resolve:
                action.edit = _fix_edits(ls, snap, f, i)
            out.append(action)
    return out


def register(server: "MemzoiServer") -> None:
    """Register ``textDocument/codeAction`` and ``codeAction/resolve``."""

    @server.feature(
        types.TEXT_DOCUMENT_CODE_ACTION,
        types.CodeActionOptions(code_action_kinds=KINDS, resolve_provider=True),
    )
    def code_action(ls: "MemzoiServer", params: types.CodeActionParams):
        snap = ls.docs.snapshot(params.text_document.uri)
        if snap is None or not ls.is_memzoi(snap):
            return None
        only = params.context.only
        actions: list[types.CodeAction] = []
        if kind_allowed(QUICKFIX, only):
            actions.extend(quick_fixes(ls, snap, params))
        return actions or None

    @server.feature(types.CODE_ACTION_RESOLVE)
    def resolve(ls: "MemzoiServer", action: types.CodeAction) -> types.CodeAction:
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
