"""Text synchronisation: ``didOpen``, ``didChange``, ``didSave`` and ``didClose``, and registering the project of
an opened file. Open documents are judged from the editor's text; a closed one goes back to the file on disk."""

from __future__ import annotations

from typing import TYPE_CHECKING

from lsprotocol import types

from memzoi.judge.workspace import place

from . import routing_view
from .documents import path_to_uri, uri_key, uri_to_path

if TYPE_CHECKING:
    from .session import Session


def register(server: Session) -> None:
    """Register the text-synchronisation handlers."""

    @server.feature(types.TEXT_DOCUMENT_DID_OPEN)
    def did_open(ls: Session, params: types.DidOpenTextDocumentParams) -> None:
        uri = params.text_document.uri
        discover(ls, uri, params.text_document.text)
        ls.apply_editor(uri)
        if not ls.pull_diagnostics:
            ls.publish(uri)  # at once on open; typing is debounced

    @server.feature(types.TEXT_DOCUMENT_DID_CHANGE)
    def did_change(ls: Session, params: types.DidChangeTextDocumentParams) -> None:
        # pygls has already applied every content change to the workspace document. Push: the change enters the
        # project's state and is published once typing pauses (diagnostics.schedule); pull: at once, since the
        # client pulls next. A file that became a runtime input file has its project registered now, not by a read.
        discover(ls, params.text_document.uri)
        if ls.pull_diagnostics:
            ls.apply_editor(params.text_document.uri)
        else:
            ls.schedule_diagnostics(params.text_document.uri)

    @server.feature(types.TEXT_DOCUMENT_DID_SAVE)
    def did_save(ls: Session, params: types.DidSaveTextDocumentParams) -> None:
        path = uri_to_path(params.text_document.uri)
        if path is not None:
            ls.files_changed([path], immediate=True)

    @server.feature(types.TEXT_DOCUMENT_DID_CLOSE)
    def did_close(ls: Session, params: types.DidCloseTextDocumentParams) -> None:
        uri = params.text_document.uri
        ls.cancel_diagnostics(uri)
        # The buffer is gone: the file on disk (if any) is what other files now refer to and what is shown.
        path = uri_to_path(uri)
        project = ls.project_for(path)
        key = path_to_uri(path) if path else uri
        ls.gone.discard(key)
        if project is not None and project.has(key):
            snap = ls.docs.snapshot(key)
            affected = project.apply_editor(key, snap.analysis) if snap is not None else set()
            if ls.pull_diagnostics:
                if affected:
                    ls.republish(affected)
                return
            ls.publish(key)
            if affected - {key}:
                ls.republish(affected - {key})
        else:
            if project is not None:
                affected = project.forget(key)
                if affected - {key}:
                    ls.republish(affected - {key})
            if not ls.pull_diagnostics and (uri in (shown := ls.shown_uris()) or key in shown):
                ls.clear_diagnostics(uri)


def discover(ls: Session, uri: str, text: str | None = None) -> None:
    """Register the project of an opened or changed file (walking up to its ``.memzoi``; never down): a file of a
    ``.memzoi`` tree, or a runtime input file outside the registered projects
    (:func:`.routing_view.register_input`; ``text``: the buffer's, else the workspace document's). The reads that
    follow (``is_memzoi``, the findings) only answer from registered projects."""
    path = uri_to_path(uri)
    if path is None:
        return
    placement = place(path)
    if placement.memzoi_dir is not None:
        if ls.project_for(path) is None:
            ls.add_project(placement.memzoi_dir.parent)
        return
    if text is None:
        doc = ls.workspace.text_documents.get(uri_key(uri))
        text = doc.source if doc is not None else ""
    routing_view.register_input(ls, path, text)


__all__ = ["discover", "register"]
