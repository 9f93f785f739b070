"""Diagnostics: core findings → LSP diagnostics, published by push or served by pull (never both).

The model is chosen once per session in ``initialize``: pull when the client advertises
``textDocument.diagnostic``, push otherwise. Open documents are diagnosed from the editor text (debounced per
document in push mode; on request in pull mode); closed files from disk. Every diagnostic has source
``memzoi``, the finding code and a ``codeDescription`` link to the code's section in the diagnostics reference the
package ships (:func:`memzoi.resources.diagnostics_href`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import blake3
from lsprotocol import types

from memzoi.resources import diagnostics_href
from memzoi.findings import Finding

from .convert import TextMap
from .documents import Snapshot

if TYPE_CHECKING:
    from .server import MemzoiServer

SOURCE = "memzoi"


def to_lsp(ls: "MemzoiServer", snap: Snapshot, findings: list[Finding]) -> list[types.Diagnostic]:
    """Convert ``findings`` (spans into ``snap.text``, already graded by the verdict) into diagnostics in the
    negotiated encoding."""
    tm = TextMap(snap.text, ls.workspace.position_encoding)
    out: list[types.Diagnostic] = []
    for f in findings:
        severity = f.severity
        out.append(
            types.Diagnostic(
                range=tm.range(f.start, f.end),
                message=f.message,
                severity=types.DiagnosticSeverity(int(severity)),
                code=f.code,
                code_description=types.CodeDescription(href=diagnostics_href(f.code)),
                source=SOURCE,
                data={"fixable": bool(f.fixes)} if f.fixes else None,
            )
        )
    return out


def diagnostics_for(ls: "MemzoiServer", snap: Snapshot) -> list[types.Diagnostic]:
    """All diagnostics of one snapshot (its own findings plus cross-file findings), or ``[]`` when the file is
    not a Memzoi file."""
    if not ls.is_memzoi(snap):
        return []
    try:
        findings = ls.findings_for(snap)
    except Exception as err:  # the barrier: admission, ledger or cross-file state failed for this file only
        from memzoi.barrier import internal_error

        findings = [internal_error(err, snap.path or snap.uri)]
    return to_lsp(ls, snap, findings)


def result_id(ls: "MemzoiServer", snap: Snapshot) -> str:
    """A pull result id that changes with the text, the settings and the cross-file state."""
    h = blake3.blake3(snap.text.encode("utf-8", "surrogatepass"))
    h.update(f"|{ls.settings_generation}|{ls.crossfile_generation}".encode())
    return h.hexdigest()[:32]


def publish(ls: "MemzoiServer", uri: str) -> None:
    """Push mode: publish the current diagnostics of ``uri`` (clears them when the file is gone or clean)."""
    if ls.pull_diagnostics or ls.stopping:
        return
    snap = ls.docs.snapshot(uri)
    if snap is None:
        clear(ls, uri)
        return
    diags = diagnostics_for(ls, snap)
    if not diags and not snap.is_open and uri not in ls.published:
        return  # nothing shown for this closed file: nothing to send
    ls.text_document_publish_diagnostics(
        types.PublishDiagnosticsParams(uri=snap.uri, diagnostics=diags, version=snap.version)
    )
    if diags:
        ls.published.add(uri)
    else:
        ls.published.discard(uri)


def clear(ls: "MemzoiServer", uri: str) -> None:
    """Remove every diagnostic of ``uri`` (deleted, renamed or ignored file)."""
    if ls.pull_diagnostics:
        ls.request_refresh()
        return
    if ls.stopping:
        return
    ls.text_document_publish_diagnostics(types.PublishDiagnosticsParams(uri=uri, diagnostics=[]))
    ls.published.discard(uri)


def schedule(ls: "MemzoiServer", uri: str) -> None:
    """Push mode: (re)start the per-document debounce timer; the analysis runs once typing pauses."""
    if ls.pull_diagnostics or ls.loop is None:
        return
    timer = ls.timers.pop(uri, None)
    if timer is not None:
        timer.cancel()
    delay = ls.settings.debounce_ms / 1000
    ls.timers[uri] = ls.loop.call_later(delay, _fire, ls, uri)


def _fire(ls: "MemzoiServer", uri: str) -> None:
    ls.timers.pop(uri, None)
    publish(ls, uri)


def enable_pull(server: "MemzoiServer") -> None:
    """Register the pull handlers (``textDocument/diagnostic`` and ``workspace/diagnostic``)."""

    @server.feature(
        types.TEXT_DOCUMENT_DIAGNOSTIC,
        types.DiagnosticOptions(identifier=SOURCE, inter_file_dependencies=True, workspace_diagnostics=True),
    )
    def document_diagnostic(ls: "MemzoiServer", params: types.DocumentDiagnosticParams):
        snap = ls.docs.snapshot(params.text_document.uri)
        if snap is None:
            return types.RelatedFullDocumentDiagnosticReport(items=[])
        rid = result_id(ls, snap)
        if params.previous_result_id == rid:
            return types.RelatedUnchangedDocumentDiagnosticReport(result_id=rid)
        return types.RelatedFullDocumentDiagnosticReport(items=diagnostics_for(ls, snap), result_id=rid)

    @server.feature(types.WORKSPACE_DIAGNOSTIC)
    def workspace_diagnostic(ls: "MemzoiServer", params: types.WorkspaceDiagnosticParams):
        previous = {p.uri: p.value for p in params.previous_result_ids or []}
        items: list = []
        for uri in ls.known_uris():
            if ls.docs.is_open(uri):
                continue  # open documents are pulled per document
            snap = ls.docs.snapshot(uri)
            if snap is None:
                continue
            rid = result_id(ls, snap)
            if previous.get(uri) == rid:
                items.append(types.WorkspaceUnchangedDocumentDiagnosticReport(uri=uri, result_id=rid, version=None))
            else:
                items.append(
                    types.WorkspaceFullDocumentDiagnosticReport(
                        uri=uri, items=diagnostics_for(ls, snap), result_id=rid, version=None
                    )
                )
        return types.WorkspaceDiagnosticReport(items=items)
