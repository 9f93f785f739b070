"""Code-action building blocks shared by the features that offer actions (files, resident files, materialization
artifacts): the kinds and how a request's ``context.only`` selects them, and the construction of one action.

Lifecycle actions must appear where users look (VS Code's Ctrl+. and lightbulb, ``gra`` in Neovim,
``eglot-code-actions``): VS Code hides ``source.*`` actions there, so their kind is ``quickfix.memzoi.<op>`` when the
request carries one of our diagnostics (the action is then tied to it), else ``refactor.rewrite.memzoi.<op>``. A
request asking only for ``source`` (VS Code's *Source Action…*) gets the same actions as ``source.memzoi.<op>``.
Kinds never go through ``str(enum)``. Imports no feature.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from lsprotocol import types
from pygls.capabilities import get_capability

if TYPE_CHECKING:
    from .documents import Snapshot
    from .session import ReadSession

QUICKFIX = types.CodeActionKind.QuickFix.value
SOURCE = types.CodeActionKind.Source.value
REWRITE = types.CodeActionKind.RefactorRewrite.value
KINDS = [QUICKFIX]


def kind_allowed(kind: str, only: Sequence[Any] | None) -> bool:
    """LSP rule: an action of kind ``a.b.c`` matches a requested ``a`` or ``a.b`` (prefix at dot boundaries)."""
    if not only:
        return True
    for want in only:
        w = getattr(want, "value", want)
        if kind == w or kind.startswith(str(w) + "."):
            return True
    return False


# Lifecycle actions are built with their operation as a provisional kind; :func:`finish` gives each its real kind
# for the request (the names stay ``*_KIND`` for the builders).
APPLY_KIND, REJECT_KIND, ROUTE_KIND, SUPERSEDE_KIND, TOMBSTONE_KIND = (
    "apply",
    "reject",
    "routeLocal",
    "supersede",
    "tombstone",
)
UNDO_KIND, RECOVER_KIND, REATTEST_KIND, MATERIALIZE_KIND = "undo", "recover", "reattest", "materialize"
PREVIEW_KIND, REVIEW_KIND = "preview", "review"
#: Client-side commands (contract of issue 28 §3): each client runs its own preview-then-write flow for them; the
#: server never advertises them in its executeCommandProvider.
REVIEW = "memzoi.review"
REVIEW_CANDIDATE = "memzoi.reviewCandidate"
OPERATIONS = (
    REVIEW_KIND,
    APPLY_KIND,
    REJECT_KIND,
    ROUTE_KIND,
    SUPERSEDE_KIND,
    TOMBSTONE_KIND,
    UNDO_KIND,
    RECOVER_KIND,
    REATTEST_KIND,
    MATERIALIZE_KIND,
    PREVIEW_KIND,
)
KINDS.extend(f"{base}.memzoi" for base in (REWRITE, SOURCE))


def lifecycle_kind(op: str, only: Sequence[Any] | None, tied: bool) -> str | None:
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


def is_dirty(ls: ReadSession, snap: Snapshot) -> bool:
    """Whether actions on ``snap`` must wait for a save: the core's one rule (:func:`memzoi.lifecycle.buffers.unsaved`), the
    same the commands refuse by (:func:`memzoi_lsp.commanding.refuse_if_dirty`)."""
    from memzoi.lifecycle.buffers import unsaved  # noqa: PLC0415 lazy: start-up

    return unsaved(snap.path, snap.text, is_open=snap.is_open, behind=ls.docs.is_behind(snap.uri)) is not None


def action(
    ls: ReadSession,
    title: str,
    kind: str,
    command: str,
    args: dict[str, Any],
    disabled: str | None,
    preferred: bool = False,
) -> types.CodeAction | None:
    """A code action running ``command`` with ``args`` (one JSON object), of the provisional ``kind`` that
    :func:`finish` makes final; ``disabled`` is the reason it cannot run yet (the action is left out, ``None``, for
    a client that cannot show a disabled action), ``preferred`` marks the one to run by default."""
    action = types.CodeAction(
        title=title,
        kind=kind,
        command=types.Command(title=title, command=command, arguments=[args]),
        is_preferred=True if preferred else None,
    )
    if disabled:
        if not get_capability(ls.client_capabilities, "text_document.code_action.disabled_support", False):
            return None  # a client that cannot show why would run it and get a refusal: do not offer it
        action.disabled = types.CodeActionDisabled(reason=disabled)
    return action
