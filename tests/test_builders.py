"""The shared test builder writes what the core writes: valid, canonical texts, and broken ones on request."""

from __future__ import annotations

import pytest

from memzoi.judge.analysis import analyze_text
from memzoi.read.document import frame
from memzoi.read.render import render_packet, render_record

from .builders import crlf, edit, packet, packet_path, record, record_path

NOW = "2026-07-08T00:00:00Z"


def codes(text: str, rel: str) -> list[str]:
    return [f.code for f in analyze_text(text, f"ws/{rel}").findings]


@pytest.mark.parametrize(
    "text,rel",
    [
        (record("use-pnpm"), record_path("use-pnpm")),
        (
            record("dir/use-pnpm", tags=["a", "b"], applies_to=["src/**"], source="cli", source_ref="x"),
            record_path("dir/use-pnpm"),
        ),
        (record("use-pnpm", attested=True), record_path("use-pnpm")),
        (record("use-pnpm", newline="\r\n"), record_path("use-pnpm")),
        (packet("mem-new"), packet_path("mem-new")),
        (packet("mem-sup", action="supersede", supersedes=["use-pnpm"]), packet_path("mem-sup")),
        (packet("mem-tomb", action="tombstone", target="use-pnpm"), packet_path("mem-tomb")),
        (packet("mem-done", status="applied"), packet_path("mem-done", "resolved/applied")),
        (packet("mem-no", status="rejected"), packet_path("mem-no", "resolved/rejected")),
    ],
)
def test_every_built_text_is_valid_and_canonical(text, rel):
    assert [c for c in codes(text, rel) if c not in ("dangling_reference", "review_visibility")] == []
    doc = frame(text)
    render = render_record if rel.startswith(".memzoi/records") else render_packet
    newline = "\r\n" if "\r\n" in text else "\n"
    assert render(doc.data, doc.body, newline=newline) == text  # byte for byte what the core writes


def test_fields_are_overridden_removed_and_broken_on_request():
    assert "lane: procedural" in record("r", lane="procedural")
    assert "missing_key" in codes(record("r", lane=None), record_path("r"))
    assert "unknown_key" in codes(record("r", extra="colour: blue"), record_path("r"))
    assert "duplicate_key" in codes(record("r", extra="lane: episodic\n"), record_path("r"))
    stale = edit(record("r", attested=True), "Body of r.", "Edited body.")
    assert "stale_attestation" in codes(stale, record_path("r"))
    with pytest.raises(AssertionError):
        edit(record("r"), "not in the text", "x")
    assert crlf(record("r")) == record("r", newline="\r\n")
    assert "\r\n" not in record("r") and "\n" not in crlf(record("r")).replace("\r\n", "")
    assert "invalid_proposal_shape" in codes(packet("p", action="create", supersedes=["r"]), packet_path("p"))
