"""A file's findings as the JSON the language server sends: LSP ``Diagnostic`` objects and the
``textDocument/publishDiagnostics`` notification as plain dicts, built once per publish (issue 29, warm start: the
server built the protocol library's objects for each diagnostic, which pygls's converter then turned into this
same JSON again).

The shape is LSP 3.17's (``Diagnostic``: ``range``, ``message``, ``severity``, ``code``, ``codeDescription``,
``source``, ``data``; ``PublishDiagnosticsParams``: ``uri``, ``diagnostics``, ``version``), with the optional
members left out when they have no value, as the protocol library writes them; ``tests/lsp/test_diagwire.py``
holds each equal to what that library makes of the same diagnostic. Positions are the caller's: it converts a
finding's code-point offsets into ``(line, character)`` in the client's encoding (``memzoi_lsp.convert``, the
protocol edge). Findings are LSP diagnostics of source ``memzoi`` with the finding's code, a ``codeDescription``
link to the code's section in the shipped reference (:func:`memzoi.base.resources.diagnostics_href`) and
``data: {"fixable": true}`` when the finding has quick fixes.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from memzoi.base.findings import Finding
from memzoi.base.resources import diagnostics_href

#: The ``source`` of every diagnostic the server publishes.
SOURCE = "memzoi"
#: The LSP method of pushed diagnostics.
PUBLISH = "textDocument/publishDiagnostics"
#: ``(line, character)`` of an LSP position, ``character`` in the client's position encoding.
Place = tuple[int, int]


def diagnostics(findings: Sequence[Finding], place: Callable[[int], Place]) -> list[dict[str, Any]]:
    """The LSP diagnostics of ``findings`` (in their order) as JSON objects; ``place(offset)`` gives the position of a
    code-point offset of the text the findings' spans index. A span is ``[start, max(start, end))``."""
    out: list[dict[str, Any]] = []
    for f in findings:
        line, character = place(f.start)
        end_line, end_character = place(max(f.start, f.end))
        item: dict[str, Any] = {
            "range": {
                "start": {"line": line, "character": character},
                "end": {"line": end_line, "character": end_character},
            },
            "message": f.message,
            "severity": int(f.severity),
            "code": f.code,
            "codeDescription": {"href": diagnostics_href(f.code)},
            "source": SOURCE,
        }
        if f.fixes:
            item["data"] = {"fixable": True}
        out.append(item)
    return out


def publish_notification(uri: str, items: list[dict[str, Any]], version: int | None = None) -> dict[str, Any]:
    """The JSON-RPC ``textDocument/publishDiagnostics`` notification of ``items`` (:func:`diagnostics`) for the
    document ``uri``; ``version``: the open document's version the diagnostics were computed for, left out when
    ``None`` (a closed file)."""
    params: dict[str, Any] = {"uri": uri, "diagnostics": items}
    if version is not None:
        params["version"] = version
    return {"jsonrpc": "2.0", "method": PUBLISH, "params": params}


__all__ = ["PUBLISH", "SOURCE", "Place", "diagnostics", "publish_notification"]
