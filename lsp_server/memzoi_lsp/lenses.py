"""Code lenses (``textDocument/codeLens``) at the top of a pending packet (*Apply · Reject…*, or why it cannot be
applied, as the core's can-apply rule says) and of a record another record supersedes; resident memory files get
theirs from :mod:`.resident`."""

from __future__ import annotations

from typing import TYPE_CHECKING

from lsprotocol import types

from memzoi.base.views import Frontmatter
from memzoi.judge.workspace import Role

from . import commandids, provenance, readiness, resident_view
from .documents import Snapshot
from .protocol import handler

if TYPE_CHECKING:
    from .session import ReadSession


def code_lenses(ls: ReadSession, snap: Snapshot) -> list[types.CodeLens]:
    """*Apply · Reject…* on pending packets that the core's can-apply rule lets through, else the blocking codes
    (and *Route to local memory* where it fits; no *Reject…* while an uncertain change holds the packet:
    ``Readiness.held``); *Superseded by …* on records another record replaces."""
    role = snap.analysis.placement.role
    top = types.Range(start=types.Position(line=0, character=0), end=types.Position(line=0, character=3))
    out: list[types.CodeLens] = []
    if role is Role.PENDING:
        args = [{"uri": snap.uri}]
        verdict = readiness.of(ls, snap)
        if verdict is None or verdict.can_apply:
            out.append(
                types.CodeLens(
                    range=top, command=types.Command(title="Apply", command=commandids.APPLY, arguments=args)
                )
            )
        else:
            # Informational lens (an empty command id renders as plain text): the same rule as the menu and hover.
            out.append(
                types.CodeLens(
                    range=top, command=types.Command(title="Cannot apply: " + ", ".join(verdict.codes()), command="")
                )
            )
            if verdict.can_route_local:
                out.append(
                    types.CodeLens(
                        range=top,
                        command=types.Command(
                            title="Route to local memory", command=commandids.ROUTE_LOCAL, arguments=args
                        ),
                    )
                )
        if verdict is None or not verdict.held:  # an uncertain change holding the packet refuses a reject too
            out.append(
                types.CodeLens(
                    range=top, command=types.Command(title="Reject…", command=commandids.REJECT, arguments=args)
                )
            )
    elif role is Role.RECORD:
        rid = snap.analysis.placement.identity
        by = provenance.superseded_by(ls, snap, rid) if rid else []
        if by:
            # Informational lens: an empty command id renders as plain text in clients.
            out.append(
                types.CodeLens(range=top, command=types.Command(title="Superseded by " + ", ".join(by), command=""))
            )
        elif Frontmatter(snap.analysis.document.data).status == "superseded":
            out.append(
                types.CodeLens(range=top, command=types.Command(title="Superseded (replacement not found)", command=""))
            )
    return out


class CodeLenses:
    """The code lens feature (``textDocument/codeLens``): a read over the :class:`~memzoi_lsp.session.ReadSession` it is
    made with; it owns no state."""

    def __init__(self, ls: ReadSession) -> None:
        self._ls = ls

    def register(self, server: ReadSession) -> None:
        """Register ``textDocument/codeLens``."""
        server.feature(types.TEXT_DOCUMENT_CODE_LENS)(handler(self.code_lens))

    def code_lens(self, params: types.CodeLensParams) -> list[types.CodeLens] | None:
        """The lenses of the document: a resident file's, else :func:`code_lenses`."""
        ls = self._ls
        snap = ls.docs.snapshot(params.text_document.uri)
        if snap is None or not ls.is_memzoi(snap):
            return None
        where = resident_view.file_of(ls, snap.path) if snap.analysis.placement.memzoi_dir is None else None
        if where is not None:
            return resident_view.code_lenses(snap, where) or None
        return code_lenses(ls, snap) or None
