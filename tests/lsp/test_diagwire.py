"""The diagnostics' JSON (``memzoi_lsp.diagwire``), pushed as it is, equals what the protocol library makes of the
same diagnostics (the objects the server built before, turned into JSON by pygls's converter), and the objects a pull
answer is made of (``memzoi_lsp.diagnostics.typed``) turn back into that very JSON."""

from __future__ import annotations

from lsprotocol import types
from pygls.protocol import default_converter

from memzoi.base.findings import Fix, Severity, TextEdit, finding
from memzoi.base.resources import diagnostics_href
from memzoi_lsp import diagwire
from memzoi_lsp.convert import TextMap
from memzoi_lsp.diagnostics import typed

TEXT = "---\nid: é😀x\ntitle: t\n---\nBody.\n"
FINDINGS = [
    finding("invalid_value", "bad value", 7, 10),
    finding("unknown_key", "no such key", 13, 18, fixes=(Fix("Remove it", (TextEdit(13, 19, ""),)),)),
    finding("retention_query_only", "query only", 26, 26),
]


def _made_by_the_library(text: str, found, encoding: str) -> list[types.Diagnostic]:
    """Each diagnostic as the server built it with the protocol library's objects before issue 29's change."""
    tm = TextMap(text, encoding)
    return [
        types.Diagnostic(
            range=types.Range(start=tm.position(f.start), end=tm.position(max(f.start, f.end))),
            message=f.message,
            severity=types.DiagnosticSeverity(int(f.severity)),
            code=f.code,
            code_description=types.CodeDescription(href=diagnostics_href(f.code)),
            source="memzoi",
            data={"fixable": bool(f.fixes)} if f.fixes else None,
        )
        for f in found
    ]


def test_the_json_is_the_library_s_in_every_encoding_and_typed_gives_it_back():
    converter = default_converter()
    for encoding in ("utf-8", "utf-16", "utf-32"):
        wire = diagwire.diagnostics(FINDINGS, TextMap(TEXT, encoding).place)
        library = _made_by_the_library(TEXT, FINDINGS, encoding)
        assert wire == [converter.unstructure(d) for d in library]
        assert typed(wire) == library
    assert [d.get("data") for d in wire] == [None, {"fixable": True}, None]
    assert {d["severity"] for d in wire} <= {int(s) for s in Severity}


def test_the_notification_is_the_library_s_with_and_without_a_version():
    converter = default_converter()
    items = diagwire.diagnostics(FINDINGS, TextMap(TEXT).place)
    for version in (None, 7):
        library = types.PublishDiagnosticsNotification(
            params=types.PublishDiagnosticsParams(uri="file:///p/a.md", diagnostics=typed(items), version=version)
        )
        assert diagwire.publish_notification("file:///p/a.md", items, version) == converter.unstructure(library)
    assert diagwire.publish_notification("file:///p/a.md", [])["params"] == {"uri": "file:///p/a.md", "diagnostics": []}
