"""Escapes in quoted YAML scalars never hide a match of Memzoi's rules: Memzoi scans the decoded field values, so
``"\\u0041KIA…"`` is an AWS key id, ``"\\x2d----BEGIN PRIVATE KEY-----"`` a key header and ``"see\\nTOKEN=abc"`` an
environment secret on its own line. The finding spans the scalar. Planted secrets are built from pieces."""

from __future__ import annotations

import pytest

from memzoi.base.findings import Severity
from memzoi.judge.analysis import analyze_text
from memzoi.read.document import frame
from memzoi.safety.values import rescanned

from ..builders import edit
from .helpers import SAFETY_CODES, record, workspace

#: (escaped YAML source of a double-quoted scalar, Memzoi's code, the decoded match: absent from the file's text,
#: never printed; the environment secret is a match only at the start of its line)
ESCAPED = [
    ('"\\u0041KIA' + "IOSFODNN7" + 'ABCDEFG"', "credential_token", "AKIA" + "IOSFODNN7ABCDEFG"),
    ('"\\x2d----BEGIN PRIVATE' + ' KEY-----"', "private_key", "-----BEGIN PRIVATE" + " KEY-----"),
    ('"see\\nTOK' + 'EN=abc"', "environment_secret", "\nTOK" + "EN=abc"),
]


def _place(field: str, scalar: str) -> str:
    """A valid record with ``scalar`` as the value of ``field`` (``tags``: an item; ``origin_key``: nested)."""
    base = record()
    if field == "title":
        return edit(edit(base, 'title: "Use pnpm"\n', f"title: {scalar}\n"), "# Use pnpm\n\n", "")
    if field == "origin_key":
        return edit(base, '  origin_key: "repository-record:rec"\n', f"  origin_key: {scalar}\n")
    if field == "tags":
        return edit(base, "status: active\n", f"status: active\ntags:\n  - deploy\n  - {scalar}\n")
    if field == "flow tags":
        return edit(base, "status: active\n", f"status: active\ntags: [deploy, {scalar}]\n")
    return edit(base, "status: active\n", f"status: active\n{field}: {scalar}\n")


@pytest.mark.parametrize("field", ["title", "description", "source_ref", "tags", "flow tags", "origin_key"])
@pytest.mark.parametrize("scalar, code, secret", ESCAPED)
def test_a_secret_written_with_escapes_is_reported_over_the_scalar(tmp_path, field, scalar, code, secret):
    text = _place(field, scalar)
    assert secret not in text  # the file's text shows no match: only the decoded value holds one
    found = [
        f for f in analyze_text(text, workspace(tmp_path) / "records" / "rec.md").findings if f.code in SAFETY_CODES
    ]
    start = text.index(scalar)
    hits = [f for f in found if f.code == code]
    assert [(f.severity, f.start, f.end) for f in hits] == [(Severity.ERROR, start, start + len(scalar))], [
        (f.code, f.start, f.end) for f in found
    ]
    assert "written with escapes" in hits[0].message
    shown = any(secret.strip() in f.message for f in found)
    assert not shown, "a message repeats the decoded secret"


def test_a_quoted_key_with_escapes_is_scanned_too(tmp_path):
    key = '"\\u0041KIA' + 'IOSFODNN7ABCDEFG"'
    text = record(extra=f"capture:\n  {key}: x\n")
    found = [
        f
        for f in analyze_text(text, workspace(tmp_path) / "records" / "rec.md").findings
        if f.code == "credential_token"
    ]
    start = text.index(key)
    assert [(f.start, f.end) for f in found] == [(start, start + len(key))]


def test_a_match_in_the_text_is_not_reported_twice(tmp_path):
    token = "gh" + "p_" + "Q1w2E3r4T5y6U7i8O9p0A1s2D3f4G5h6J7k8"
    text = record(extra=f'description: "{token} \\u0041KIA' + 'IOSFODNN7ABCDEFG"\n')
    found = [
        f
        for f in analyze_text(text, workspace(tmp_path) / "records" / "rec.md").findings
        if f.code == "credential_token"
    ]
    assert len(found) == 1  # the raw token; the escaped one is the same code over the same scalar


@pytest.mark.parametrize("scalar", ['"\\u0041BC and \\"quotes\\""', "'it''s fine'", '"tab\\there"'])
def test_harmless_escapes_give_nothing(tmp_path, scalar):
    text = record(extra=f"description: {scalar}\n")
    assert [
        f.code
        for f in analyze_text(text, workspace(tmp_path) / "records" / "rec.md").findings
        if f.code in SAFETY_CODES
    ] == []


def test_only_scalars_whose_decoded_value_differs_are_rescanned():
    # no backslash, no '' and one-line values: nothing is walked
    assert rescanned(frame(record(extra='description: "a quoted one-line value"\n'))) == []
    doc = frame(record(extra='description: "plain"\nsource_ref: "with\\tescape"\n'))
    assert [(doc.text[s.node.start : s.node.end], s.escaped) for s in rescanned(doc)] == [('"with\\tescape"', True)]
    # a folded value differs from its text too (Memzoi reads the folded string)
    doc = frame(record(extra='description: "a quoted\n  folded value"\n'))
    assert [(doc.text[s.node.start : s.node.end], s.escaped) for s in rescanned(doc)] == [
        ('"a quoted\n  folded value"', False)
    ]
