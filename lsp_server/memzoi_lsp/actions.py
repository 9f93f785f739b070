"""Code actions: quick fixes for fixable findings, and lifecycle actions (as commands) on proposals, records,
materialization candidates and uncertain ledger changes.

Listing is cheap: quick fixes carry only ``data`` naming the finding and fix; the text edits are computed in
``codeAction/resolve`` when the client supports resolving ``edit``, eagerly otherwise. ``context.only`` is
honoured hierarchically. Kinds never go through ``str(enum)``.

Lifecycle actions must appear where users look (VS Code's Ctrl+. and lightbulb, ``gra`` in Neovim,
``eglot-code-actions``): VS Code hides ``source.*`` actions there, so their kind is ``quickfix.memzoi.<op>`` when the
request carries one of our diagnostics (the action is then tied to it), else ``refactor.rewrite.memzoi.<op>``. A
request asking only for ``source`` (VS Code's *Source Action…*) gets the same actions as ``source.memzoi.<op>``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from lsprotocol import types
from pygls.capabilities import get_capability

from memzoi.findings import Finding

from . import resident, routing
from .convert import TextMap
from .documents import Snapshot

if TYPE_CHECKING:
    from pathlib import Path

    from memzoi.lifecycle.offers import Offer

    from .server import MemzoiServer

QUICKFIX = types.CodeActionKind.QuickFix.value
SOURCE = types.CodeActionKind.Source.value
REWRITE = types.CodeActionKind.RefactorRewrite.value
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
        uri = params.text_document.uri
        if uri.endswith(".json"):
            return finish(materialization_actions(ls, uri), params) or None
        snap = ls.docs.snapshot(uri)
        if snap is None or not ls.is_memzoi(snap):
            return None
        actions: list[types.CodeAction] = []
        if kind_allowed(QUICKFIX, params.context.only):
            actions.extend(quick_fixes(ls, snap, params))
        where = resident.file_of(ls, snap.path) if snap.analysis.placement.memzoi_dir is None else None
        wanted = any(lifecycle_kind(op, params.context.only, True) for op in OPERATIONS)
        if where is not None and wanted:
            actions.extend(finish(resident.code_actions(ls, snap, where), params))
        elif wanted and routing.input_root(ls, snap) is not None:
            actions.extend(finish(routing.code_actions(ls, snap), params))
        elif wanted:
            actions.extend(finish(lifecycle_actions(ls, snap), params))
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


# --- lifecycle actions (commands) ------------------------------------------------------------------------------

# Lifecycle actions are built with their operation as a provisional kind; :func:`finish` gives each its real kind
# for the request (the names stay ``*_KIND`` for the builders).
APPLY_KIND, REJECT_KIND, ROUTE_KIND, SUPERSEDE_KIND, TOMBSTONE_KIND = "apply", "reject", "routeLocal", "supersede", "tombstone"
UNDO_KIND, RECOVER_KIND, REATTEST_KIND, MATERIALIZE_KIND = "undo", "recover", "reattest", "materialize"
PREVIEW_KIND, REVIEW_KIND = "preview", "review"
#: Client-side commands (contract of issue 28 §3): each client runs its own preview-then-write flow for them; the
#: server never advertises them in its executeCommandProvider.
REVIEW = "memzoi.review"
REVIEW_CANDIDATE = "memzoi.reviewCandidate"
OPERATIONS = (REVIEW_KIND, APPLY_KIND, REJECT_KIND, ROUTE_KIND, SUPERSEDE_KIND, TOMBSTONE_KIND, UNDO_KIND, RECOVER_KIND,
              REATTEST_KIND, MATERIALIZE_KIND, PREVIEW_KIND)
KINDS.extend(f"{base}.memzoi" for base in (REWRITE, SOURCE))


def lifecycle_kind(op: str, only: list[Any] | None, tied: bool) -> str | None:
    """The kind of the lifecycle action ``op`` for a request (see the module docstring), or ``None`` when the
    request's ``only`` excludes every form of it."""
    for kind in (f"{QUICKFIX}.memzoi.{op}" if tied else None, f"{REWRITE}.memzoi.{op}", f"{SOURCE}.memzoi.{op}"):
        if kind is not None and kind_allowed(kind, only):
            return kind
    return None


def finish(actions: list[types.CodeAction], params: types.CodeActionParams) -> list[types.CodeAction]:
    """Give each lifecycle action its kind for this request and drop those ``context.only`` excludes. An action is
    tied to the request's Memzoi diagnostics (kind ``quickfix.memzoi.<op>``) when there are any."""
    ours = [d for d in params.context.diagnostics if d.source == "memzoi"]
    out = []
    for action in actions:
        kind = lifecycle_kind(action.kind or "", params.context.only, bool(ours))
        if kind is None:
            continue
        action.kind = kind
        if kind.startswith(QUICKFIX):
            action.diagnostics = ours
        out.append(action)
    return out


def is_dirty(ls: "MemzoiServer", snap: Snapshot) -> bool:
    """True when the document is open and its text differs from the file on disk."""
    if not snap.is_open or snap.path is None:
        return False
    try:
        return snap.path.read_bytes().decode("utf-8", errors="replace") != snap.text
    except OSError:
        return True


def _action(ls: "MemzoiServer", title: str, kind: str, command: str, args: dict, disabled: str | None,
            preferred: bool = False) -> types.CodeAction | None:
    action = types.CodeAction(title=title, kind=kind, command=types.Command(title=title, command=command, arguments=[args]),
                              is_preferred=True if preferred else None)
    if disabled:
        if not get_capability(ls.client_capabilities, "text_document.code_action.disabled_support", False):
            return None  # a client that cannot show why would run it and get a refusal: do not offer it
        action.disabled = types.CodeActionDisabled(reason=disabled)
    return action


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
RECOVER_LABELS = {"restore-before": "restore the files as before", "complete-after": "complete the change",
                  "accept": "accept the files as they are"}


def _offer_actions(ls: "MemzoiServer", uri: str, offer: "Offer") -> list[types.CodeAction | None]:
    from . import lifecycle
    from .preview import PREVIEW

    args: dict[str, Any] = {"uri": uri}
    if offer.operation == "undo" and offer.change is not None:
        title = f"Undo {offer.change.operation} ({offer.change.id[:12]})"
        return [_action(ls, title, UNDO_KIND, lifecycle.UNDO, {**args, "change_id": offer.change.id}, offer.blocked)]
    if offer.operation == "recover" and offer.change is not None and offer.mode is not None:
        title = f"Recover {offer.change.id[:12]}: {RECOVER_LABELS[offer.mode]}"
        return [_action(ls, title, RECOVER_KIND, lifecycle.RECOVER,
                        {**args, "change_id": offer.change.id, "mode": offer.mode}, offer.blocked)]
    title, kind, preview_title = OFFER_TITLES[offer.operation]
    if offer.operation == "review":  # the preferred action: the client's preview-then-write flow
        return [_action(ls, title, kind, REVIEW, args, offer.blocked, preferred=True)]
    command = {"apply": lifecycle.APPLY, "reject": lifecycle.REJECT, "route_local": lifecycle.ROUTE_LOCAL,
               "supersede": lifecycle.SUPERSEDE, "tombstone": lifecycle.TOMBSTONE,
               "reattest": lifecycle.REATTEST}[offer.operation]
    out = [_action(ls, title, kind, command, args, offer.blocked)]
    if offer.preview and preview_title:
        out.append(_action(ls, preview_title, PREVIEW_KIND, PREVIEW, {**args, "operation": offer.operation},
                           offer.blocked))
    return out


def lifecycle_actions(ls: "MemzoiServer", snap: Snapshot) -> list[types.CodeAction]:
    """The core's lifecycle offers of a record or packet (:func:`memzoi.lifecycle.offers.file_offers`) as code
    actions: a blocked offer is a disabled action with its reason, or left out for a client that cannot show one."""
    from memzoi.lifecycle.offers import file_offers

    from . import readiness

    project = ls.project_for(snap.path)
    ledger = project.ledger.for_file(snap.path) if project is not None and snap.path is not None else None
    path = snap.path
    offers = file_offers(
        snap.analysis.placement.role, snap.analysis.document.data or {}, ls.findings_for(snap),
        readiness.of(ls, snap), ledger,
        lambda change: project is not None and path is not None and project.ledger.undo_available(path, change),
        unsaved=is_dirty(ls, snap),
    )
    return [a for offer in offers for a in _offer_actions(ls, snap.uri, offer) if a is not None]


def _saved(ls: "MemzoiServer", uri: str, path: "Path", text: str) -> bool:
    """Whether the document ``uri`` is closed or its text is the file's on disk."""
    if not ls.docs.is_open(uri):
        return True
    try:
        return path.read_text(encoding="utf-8") == text
    except OSError:
        return False


def materialization_actions(ls: "MemzoiServer", uri: str) -> list[types.CodeAction]:
    """Plan / Decide / Materialize on a materialization candidate, plan or decision JSON file, depending on which
    of the three files (``X.json``, ``X.plan.json``, ``X.decision.json``) exist."""
    from memzoi.lifecycle.artifacts import artifact_kind, artifact_set

    from . import materialization as mat
    from .documents import uri_to_path
    from .preview import PREVIEW

    path = uri_to_path(uri)
    if path is None:
        return []
    try:
        text = ls.workspace.get_text_document(uri).source
    except OSError:
        return []
    if artifact_kind(text) is None:
        return []
    files = artifact_set(path)
    dirty = None if _saved(ls, uri, path, text) else "save the file first: materialization reads the files on disk"
    out: list[types.CodeAction | None] = []
    have = {k: p.is_file() for k, p in files.items()}
    if have["candidate"] and not have["plan"]:
        out.append(_action(ls, "Plan materialization", MATERIALIZE_KIND, mat.MATERIALIZE_PLAN, {"uri": uri}, dirty))
    if have["candidate"] and have["plan"] and not have["decision"]:
        out.append(_action(ls, "Decide: approve this plan", MATERIALIZE_KIND, mat.MATERIALIZE_DECIDE, {"uri": uri}, dirty))
    if all(have.values()):
        out.append(_action(ls, "Materialize the decided record", MATERIALIZE_KIND, mat.MATERIALIZE, {"uri": uri}, dirty))
        out.append(_action(ls, "Preview: materialize", PREVIEW_KIND, PREVIEW, {"uri": uri, "operation": "materialize"},
                           dirty))
    return [a for a in out if a is not None]
