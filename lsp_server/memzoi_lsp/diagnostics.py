"""Diagnostics: core findings → LSP diagnostics, published by push or served by pull (never both).

The model is chosen once per session in ``initialize``: pull when the client advertises
``textDocument.diagnostic``, push otherwise. Open documents are diagnosed from the editor text (debounced per
document in push mode; on request in pull mode); closed files from disk. Every diagnostic has source
``memzoi``, the finding code and a ``codeDescription`` link to the code's section in the diagnostics reference the
package ships (:func:`memzoi.base.resources.diagnostics_href`). A file's diagnostics are made once, as the JSON
the client receives (:mod:`.diagwire`): pushed as they are, and turned into the protocol library's
objects only for a pull request's answer (:func:`typed`). An entry below ``.memzoi`` that ``memzoi check`` refuses
without reading it (a symlink, a name that is not UTF-8) is shown as ``check`` reports it (:func:`refused_items`).
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

import blake3
from lsprotocol import types

from memzoi.base.findings import Finding

from . import closed, diagwire
from .convert import placer
from .documents import Snapshot, path_to_uri, uri_to_path

if TYPE_CHECKING:
    from memzoi.project.verdict import ProjectContext
    from memzoi.read.text import LineIndex

    from .session import DiagnosticsSession

SOURCE = diagwire.SOURCE
#: The pull result id of a refused entry's report: its findings depend on nothing but the entry being there.
REFUSED_RESULT = "canonical-path-link"


def wire(ls: DiagnosticsSession, source: str | LineIndex, findings: list[Finding]) -> list[dict[str, Any]]:
    """``findings`` (spans into the text ``source``, or into the ASCII text whose line index it is, already graded
    by the verdict) as the JSON of LSP diagnostics in the negotiated encoding (:func:`.diagwire.diagnostics`;
    positions: :func:`.convert.placer`)."""
    if not findings:
        return []
    return diagwire.diagnostics(findings, placer(source, ls.workspace.position_encoding))


def typed(items: list[dict[str, Any]]) -> list[types.Diagnostic]:
    """:func:`wire`'s diagnostics as the protocol library's objects, for a pull request's answer (which pygls
    converts from them): the same members, each as it is."""
    out: list[types.Diagnostic] = []
    for item in items:
        start, end = item["range"]["start"], item["range"]["end"]
        out.append(
            types.Diagnostic(
                range=types.Range(
                    start=types.Position(line=start["line"], character=start["character"]),
                    end=types.Position(line=end["line"], character=end["character"]),
                ),
                message=item["message"],
                severity=types.DiagnosticSeverity(item["severity"]),
                code=item["code"],
                code_description=types.CodeDescription(href=item["codeDescription"]["href"]),
                source=item["source"],
                data=item.get("data"),
            )
        )
    return out


def send(ls: DiagnosticsSession, uri: str, items: list[dict[str, Any]], version: int | None = None) -> None:
    """Push ``items`` (:func:`wire`) for ``uri`` as one ``textDocument/publishDiagnostics`` notification, written
    as it is (:meth:`.publishlog.PublishLog.send`: pygls's ``notify`` would build its protocol objects around it and
    convert them back to the same JSON); a closed file's message that a warm start's replay wrote already is not
    written again."""
    message = diagwire.publish_notification(uri, items, version)
    ls.publish_log.send(uri, message, closed=version is None, clean=not items)


def diagnostics_for(ls: DiagnosticsSession, snap: Snapshot) -> list[dict[str, Any]]:
    """All diagnostics of one snapshot (its own findings plus cross-file findings), or ``[]`` when the file is
    not a Memzoi file."""
    if not ls.is_memzoi(snap):
        return []
    try:
        findings = ls.findings_for(snap)
    except Exception as err:  # the barrier: admission, ledger or cross-file state failed for this file only
        from memzoi.judge.barrier import internal_error  # noqa: PLC0415 lazy: start-up

        findings = [internal_error(err, snap.path or snap.uri)]
    return wire(ls, snap.text, findings)


def closed_diagnostics(
    ls: DiagnosticsSession,
    uri: str,
    found: tuple[Any, ...] | None = None,
    ctx: ProjectContext | None = None,
    *,
    with_id: bool = True,
) -> tuple[str, list[dict[str, Any]]] | None:
    """``(result id, diagnostics)`` of a closed file from the scan's compact verdict of it (:mod:`.closed`;
    ``found`` is :func:`.closed.lookup`'s answer when the caller has it, ``ctx`` the project's verdict context);
    ``None`` when there is none (the file is then analysed: :func:`diagnostics_for`). Without ``with_id`` (push
    mode, which has no result ids) the id is ``""``."""
    found = found or closed.lookup(ls, uri)
    if found is None:
        return None
    project, held, key = found
    try:
        got = closed.findings(ls, project, held, key, ctx)
    except Exception as err:  # the barrier, as in diagnostics_for
        from memzoi.judge.barrier import internal_error  # noqa: PLC0415 lazy: start-up

        got = ("", [internal_error(err, held.path)])
    if got is None:
        return None
    return closed.result_id(ls, held) if with_id else "", wire(ls, *got)


def refused_items(ls: DiagnosticsSession, uri: str) -> list[dict[str, Any]] | None:
    """The diagnostics of ``uri`` naming an entry below a project's ``.memzoi`` that ``memzoi check`` refuses without
    reading it (:attr:`memzoi.project.projectfiles.ProjectFiles.refused`, the core's listing: a symlink, a name that
    is not UTF-8, whose URI percent-encodes its raw bytes): what ``check`` reports of it
    (:func:`memzoi.project.checkpaths.refused_findings`), nothing read. ``None`` for any other URI and for an open
    symlink (its buffer is diagnosed)."""
    if not any(p.tracked.refused for p in ls.projects.values()):
        return None  # the usual case, and the hot one (every publish asks): no URI to convert
    path = uri_to_path(uri)
    project = ls.project_for(path) if path is not None else None
    if project is None or str(path) not in project.tracked.refused:
        return None
    from memzoi.project.checkpaths import refused_findings  # noqa: PLC0415 lazy: start-up

    found = refused_findings(str(path), opened=ls.docs.is_open(uri))
    return None if found is None else wire(ls, "", found)


def refused_uris(ls: DiagnosticsSession) -> list[str]:
    """The URIs of every project's refused entries (:func:`refused_items`), sorted."""
    return sorted(path_to_uri(p) for project in list(ls.projects.values()) for p in project.tracked.refused)


def result_id(ls: DiagnosticsSession, snap: Snapshot) -> str:
    """A pull result id that changes with the text, the settings and the cross-file state."""
    h = blake3.blake3(snap.text.encode("utf-8", "surrogatepass"))
    h.update(f"|{ls.settings_generation}|{ls.crossfile_generation}".encode())
    return h.hexdigest()[:32]


class Diagnostics:
    """The diagnostics feature in push mode, an object that owns its state and timers: the URIs whose diagnostics
    the client shows (``shown``), the per-document debounce timers (``timers``) and the URIs queued for the next
    :meth:`flush` (``queued``). Made by the session with the session it publishes through; changed on the event
    loop only. Other features reach it through the session (``publish``, ``clear_diagnostics`` …), never
    directly."""

    def __init__(self, ls: DiagnosticsSession) -> None:
        self._ls = ls
        self.shown: set[str] = set()
        self.timers: dict[str, asyncio.TimerHandle] = {}
        self.queued: set[str] = set()

    def cancel(self, uri: str) -> None:
        """Cancel the debounce timer of ``uri``, if any (the document was closed)."""
        timer = self.timers.pop(uri, None)
        if timer is not None:
            timer.cancel()

    def stop(self) -> None:
        """Cancel every timer (shutdown)."""
        for timer in self.timers.values():
            timer.cancel()
        self.timers.clear()

    def publish(self, uri: str, found: tuple[Any, ...] | None = None, ctx: ProjectContext | None = None) -> None:
        """Push mode: publish the current diagnostics of ``uri`` (clears them when the file is gone or clean).
        ``found`` and ``ctx``: as for :func:`closed_diagnostics` (the scan passes what it just made)."""
        ls = self._ls
        if ls.pull_diagnostics or ls.stopping:
            return

        if self._publish_refused(uri, found):
            return
        # The scan's ``found`` is of a file it has just seen closed, and names its path: no conversion of its URI.
        if found is not None or not ls.docs.is_open(uri):
            opened = ls.docs.open_uri_for(found[1].path if found is not None else uri_to_path(uri))
            if opened is not None:  # open under another spelling: that buffer's text, under the client's URI
                uri, found = opened, None
        compact = closed_diagnostics(ls, uri, found, ctx, with_id=False)
        if compact is not None:
            diags, shown_uri, version, is_open = compact[1], uri, None, False
        else:
            snap = ls.docs.snapshot(uri)
            if snap is None:
                self.clear(uri)
                return
            diags, shown_uri, version, is_open = diagnostics_for(ls, snap), snap.uri, snap.version, snap.is_open
        if not diags and not is_open and uri not in self.shown:
            return  # nothing shown for this closed file: nothing to send
        send(ls, shown_uri, diags, version)
        if diags:
            self.shown.add(uri)
        else:
            self.shown.discard(uri)

    def _publish_refused(self, uri: str, found: tuple[Any, ...] | None) -> bool:
        """Push mode: publish ``uri`` when it is a refused entry (:func:`refused_items`: what check says of it, nothing
        read); False for any other URI, and for a file the scan passes as ``found``."""
        items = refused_items(self._ls, uri) if found is None else None
        if items is None:
            return False
        send(self._ls, uri, items)
        self.shown.add(uri)
        return True

    def clear(self, uri: str) -> None:
        """Remove every diagnostic of ``uri`` (deleted, renamed or ignored file)."""
        ls = self._ls
        if ls.pull_diagnostics:
            ls.request_refresh()
            return
        if ls.stopping:
            return
        send(ls, uri, [])
        self.shown.discard(uri)

    def forget(self, uris: set[str]) -> None:
        """Files of a forgotten project: what the client shows of the closed ones is cleared, none is republished."""
        ls = self._ls
        for uri in sorted(uris):
            if not ls.docs.is_open(uri):
                self.clear(uri)
        self.queued -= uris

    def queue(self, uris: Iterable[str]) -> None:
        """Push mode: queue ``uris`` for :meth:`flush` at the next turn of the loop (one flush for many calls)."""
        ls = self._ls
        if ls.loop is None:
            return
        first = not self.queued
        self.queued |= set(uris)
        if first:
            ls.loop.call_soon(self.flush)

    def flush(self, rounds: int = 8) -> None:
        """Push mode: publish the queued files now, and those their publishing queues, for a few rounds (the rest at
        the next turn). The scan calls it before it ends its work-done progress, so no publish of the scan follows
        its end."""
        ls = self._ls
        for _ in range(rounds):
            if not self.queued or ls.stopping:
                return
            batch = sorted(self.queued)
            self.queued.clear()
            for uri in batch:
                self.publish(uri)
        if self.queued and ls.loop is not None:
            ls.loop.call_soon(self.flush)

    def schedule(self, uri: str) -> None:
        """Push mode: (re)start the per-document debounce timer; the analysis runs once typing pauses."""
        ls = self._ls
        if ls.pull_diagnostics or ls.loop is None:
            return
        timer = self.timers.pop(uri, None)
        if timer is not None:
            timer.cancel()
        delay = ls.settings.debounce_ms / 1000
        self.timers[uri] = ls.loop.call_later(delay, self._fire, uri)

    def _fire(self, uri: str) -> None:
        ls = self._ls
        self.timers.pop(uri, None)
        ls.apply_editor(uri)  # the change enters the project's state once typing pauses
        self.publish(uri)


def enable_pull(server: DiagnosticsSession) -> None:
    """Register the pull handlers (``textDocument/diagnostic`` and ``workspace/diagnostic``)."""

    @server.feature(
        types.TEXT_DOCUMENT_DIAGNOSTIC,
        types.DiagnosticOptions(identifier=SOURCE, inter_file_dependencies=True, workspace_diagnostics=True),
    )
    def document_diagnostic(
        ls: DiagnosticsSession, params: types.DocumentDiagnosticParams
    ) -> types.DocumentDiagnosticReport:
        linked = refused_items(ls, params.text_document.uri)
        if linked is not None:
            if params.previous_result_id == REFUSED_RESULT:
                return types.RelatedUnchangedDocumentDiagnosticReport(result_id=REFUSED_RESULT)
            return types.RelatedFullDocumentDiagnosticReport(items=typed(linked), result_id=REFUSED_RESULT)
        compact = closed_diagnostics(ls, params.text_document.uri)
        if compact is not None:
            if params.previous_result_id == compact[0]:
                return types.RelatedUnchangedDocumentDiagnosticReport(result_id=compact[0])
            return types.RelatedFullDocumentDiagnosticReport(items=typed(compact[1]), result_id=compact[0])
        snap = ls.docs.snapshot(params.text_document.uri)
        if snap is None:
            return types.RelatedFullDocumentDiagnosticReport(items=[])
        rid = result_id(ls, snap)
        if params.previous_result_id == rid:
            return types.RelatedUnchangedDocumentDiagnosticReport(result_id=rid)
        return types.RelatedFullDocumentDiagnosticReport(items=typed(diagnostics_for(ls, snap)), result_id=rid)

    @server.feature(types.WORKSPACE_DIAGNOSTIC)
    def workspace_diagnostic(
        ls: DiagnosticsSession, params: types.WorkspaceDiagnosticParams
    ) -> types.WorkspaceDiagnosticReport:
        previous = {p.uri: p.value for p in params.previous_result_ids or []}
        items: list[types.WorkspaceDocumentDiagnosticReport] = []
        for uri in ls.known_uris():
            if ls.docs.is_open(uri):
                continue  # open documents are pulled per document
            item = _workspace_item(ls, uri, previous.get(uri))
            if item is not None:
                items.append(item)
        for uri in refused_uris(ls):
            linked = refused_items(ls, uri)
            if linked is None:
                continue
            items.append(
                types.WorkspaceUnchangedDocumentDiagnosticReport(uri=uri, result_id=REFUSED_RESULT, version=None)
                if previous.get(uri) == REFUSED_RESULT
                else types.WorkspaceFullDocumentDiagnosticReport(
                    uri=uri, items=typed(linked), result_id=REFUSED_RESULT, version=None
                )
            )
        return types.WorkspaceDiagnosticReport(items=items)


def _workspace_item(
    ls: DiagnosticsSession, uri: str, previous: str | None
) -> types.WorkspaceDocumentDiagnosticReport | None:
    """One closed file's report of a workspace pull: from its compact verdict, else from its analysis."""
    compact = closed_diagnostics(ls, uri)
    if compact is not None:
        rid, diags = compact
    else:
        snap = ls.docs.snapshot(uri)
        if snap is None:
            return None
        rid, diags = result_id(ls, snap), None
        if previous != rid:
            diags = diagnostics_for(ls, snap)
    if previous == rid:
        return types.WorkspaceUnchangedDocumentDiagnosticReport(uri=uri, result_id=rid, version=None)
    return types.WorkspaceFullDocumentDiagnosticReport(uri=uri, items=typed(diags or []), result_id=rid, version=None)
