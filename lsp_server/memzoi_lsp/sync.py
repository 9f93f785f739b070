"""Text synchronisation: ``didOpen``, ``didChange``, ``didSave`` and ``didClose``, and registering the project of
an opened file. Open documents are judged from the editor's text; a closed one goes back to the file on disk."""

from __future__ import annotations

from typing import TYPE_CHECKING

from lsprotocol import types

from memzoi.judge.workspace import place

from . import diskview, routing_view
from .documents import path_to_uri, uri_key, uri_to_path
from .protocol import handler

if TYPE_CHECKING:
    from .project import Project
    from .session import ProjectDiscovery, SyncSession


class TextSync:
    """The text synchronisation feature: the editor's events on its buffers (open, change, save, close), each entering
    the project state through the session's events (``apply_editor``, ``files_changed``), over the
    :class:`~memzoi_lsp.session.SyncSession` it is made with."""

    def __init__(self, ls: SyncSession) -> None:
        self._ls = ls

    def register(self, server: SyncSession) -> None:
        """Register the text-synchronisation handlers."""
        server.feature(types.TEXT_DOCUMENT_DID_OPEN)(handler(self.did_open))
        server.feature(types.TEXT_DOCUMENT_DID_CHANGE)(handler(self.did_change))
        server.feature(types.TEXT_DOCUMENT_DID_SAVE)(handler(self.did_save))
        server.feature(types.TEXT_DOCUMENT_DID_CLOSE)(handler(self.did_close))

    def did_open(self, params: types.DidOpenTextDocumentParams) -> None:
        """``didOpen``: register the file's project, take its text into the project state, publish it at once (push)."""
        ls = self._ls
        uri = params.text_document.uri
        discover(ls, uri, params.text_document.text)
        ls.docs.note_loaded(uri, params.text_document.text)
        ls.apply_editor(uri)
        if not ls.pull_diagnostics:
            ls.publish(uri)  # at once on open; typing is debounced
        diskview.refresh(ls, uri)  # the findings of its bytes on disk follow, read off the loop

    def did_change(self, params: types.DidChangeTextDocumentParams) -> None:
        """``didChange``: push: diagnosed once typing pauses; pull: the text enters the project state at once."""
        ls = self._ls
        # pygls has already applied every content change to the workspace document. Push: the change enters the
        # project's state and is published once typing pauses (diagnostics.schedule); pull: at once, since the
        # client pulls next. A file that became a runtime input file has its project registered now, not by a read.
        discover_input(ls, params.text_document.uri)
        if ls.pull_diagnostics:
            ls.apply_editor(params.text_document.uri)
        else:
            ls.schedule_diagnostics(params.text_document.uri)

    def did_save(self, params: types.DidSaveTextDocumentParams) -> None:
        """``didSave``: the file on disk changed (the watch pass, at once)."""
        ls = self._ls
        uri = params.text_document.uri
        doc = ls.workspace.text_documents.get(uri_key(uri))
        if doc is not None:
            ls.docs.note_loaded(uri, doc.source)
        path = uri_to_path(uri)
        if path is not None:
            ls.files_changed([path], immediate=True)

    def did_close(self, params: types.DidCloseTextDocumentParams) -> None:
        """``didClose``: the buffer is gone; the file on disk (if any) is what other files refer to and what is
        shown."""
        ls = self._ls
        uri = params.text_document.uri
        ls.cancel_diagnostics(uri)
        ls.docs.forget_disk(uri)
        ls.docs.forget_loaded(uri)
        # The buffer is gone: the file on disk (if any) is what other files now refer to and what is shown.
        path = uri_to_path(uri)
        project = ls.project_for(path)
        key = path_to_uri(path) if path else uri
        ls.forget_gone(key)
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
            self._closed_outside(project, uri, key)

    def _closed_outside(self, project: Project | None, uri: str, key: str) -> None:
        """``didClose`` of a document that is no file of a project: its facts go; what the client shows of it is
        cleared, unless it is an entry ``check`` refuses without reading it (a name that is not UTF-8), which shows
        what ``check`` says of it, closed as open (:func:`.diagnostics.refused_items`)."""
        ls = self._ls
        if project is not None:
            affected = project.forget(key)
            if affected - {key}:
                ls.republish(affected - {key})
            if project.refuses(key):
                ls.publish(uri)
                return
        if not ls.pull_diagnostics and (uri in (shown := ls.shown_uris()) or key in shown):
            ls.clear_diagnostics(uri)


def discover(ls: ProjectDiscovery, uri: str, text: str | None = None) -> None:
    """Register the project of an opened file (walking up to its ``.memzoi``; never down): a file of a ``.memzoi``
    tree, or a runtime input file outside the registered projects (:func:`discover_input`; ``text``: the
    buffer's, else the workspace document's). The reads that follow (``is_memzoi``, the findings) only answer from
    registered projects."""
    path = uri_to_path(uri)
    if path is None:
        return
    placement = place(path)
    if placement.memzoi_dir is not None:
        if ls.project_for(path) is None:
            ls.add_project(placement.memzoi_dir.parent)
        return
    discover_input(ls, uri, text)


def discover_input(ls: ProjectDiscovery, uri: str, text: str | None = None) -> None:
    """A buffer that is (or became, on a change) a runtime input file outside the registered projects: register the
    project of the ``.memzoi`` above it (:func:`.routing_view.register_input`; ``text``: the buffer's, else the
    workspace document's; the core looks at the name first, :func:`memzoi.lifecycle.routing.input_kind`)."""
    path = uri_to_path(uri)
    if path is None:
        return
    if text is None:
        doc = ls.workspace.text_documents.get(uri_key(uri))
        text = doc.source if doc is not None else ""
    routing_view.register_input(ls, path, text)


__all__ = ["TextSync", "discover", "discover_input"]
