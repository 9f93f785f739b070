"""Quoted values with surrounding white space are trimmed exactly where Memzoi's parser trims them.

Memzoi (``okf.rs`` ``required_string``/``optional_string``/``parse_required_enum``/``validate_schema_identity``)
trims id, kind, profile, type, lane, title, scope, scope id, visibility, content class, status, source, source
ref, proposal id, timestamp, updated, supersedes and ``applies_to`` entries of a record, and the matching packet
fields; it keeps tags, created_by, sources, origin and a record's description exactly as written.
"""

from __future__ import annotations

from memzoi.judge.analysis import analyze_text
from memzoi.read.document import frame
from memzoi.read.trimming import trimmed
from memzoi.read.yaml12 import PlainScalar

from . import builders

#: Every field Memzoi trims, padded (inside quotes: the core's writer quotes a padded string), and the two it
#: keeps as written (``description``, ``tags``).
PADDED_RECORD = dict(
    id=" rec-x ",
    kind="memory ",
    profile=" memzoi ",
    type=" fact",
    lane="\tsemantic",
    title=" Use pnpm ",
    description=" kept as written ",
    scope=" repo ",
    visibility=" repo ",
    content_class=" general_repo_knowledge ",
    status=" active ",
    source=" cli ",
    source_ref=" prop_1 ",
    proposal_id=" prop_1 ",
    timestamp=" 2026-07-06T00:00:00Z ",
    updated="2026-07-06T00:00:00Z\u3000",
    applies_to=[" src/app/** "],
    tags=[" spaced "],
    origin={"origin_key": "repository-record:rec-x", "route": "repository_materialization"},
)


def padded_record(**fields) -> str:
    """The padded record (:data:`PADDED_RECORD`), with ``fields`` overriding it."""
    return builders.record("rec-x", **{**PADDED_RECORD, **fields}, body="Use pnpm for installs.")


RECORD = padded_record()

PACKET = builders.packet(
    "pkt-1",
    id=" pkt-1 ",
    kind=" proposal ",
    profile=" memzoi ",
    type=" fact ",
    lane=" semantic ",
    title=" Use pnpm ",
    description=" Use pnpm for installs. ",
    status=" proposed ",
    proposal={
        "action": " create ",
        "proposed_by": " agent ",
        "proposed_at": " 2026-07-06T00:00:00Z ",
        "reason": " learned ",
    },
    scope={"kind": " repo ", "paths": [" src/** "]},
    timestamp=" 2026-07-06T00:00:00Z ",
    created_by=" agent ",
    sources=[{"path": "src/app.ts"}],
    sensitivity=" repo-safe ",
    content_class=" general_repo_knowledge ",
    body="Use pnpm for installs.",
)


def test_padded_record_fields_read_as_memzoi_reads_them():
    a = analyze_text(RECORD, ".memzoi/records/rec-x.md")
    assert [(f.code, f.message) for f in a.findings] == []
    data = a.document.data
    for key, want in (
        ("id", "rec-x"),
        ("kind", "memory"),
        ("profile", "memzoi"),
        ("type", "fact"),
        ("lane", "semantic"),
        ("title", "Use pnpm"),
        ("scope", "repo"),
        ("visibility", "repo"),
        ("status", "active"),
        ("content_class", "general_repo_knowledge"),
        ("source", "cli"),
        ("source_ref", "prop_1"),
        ("proposal_id", "prop_1"),
        ("timestamp", "2026-07-06T00:00:00Z"),
        ("updated", "2026-07-06T00:00:00Z"),
    ):
        assert data[key] == want, key
    assert data["applies_to"] == ["src/app/**"]
    # Not trimmed by Memzoi: tags are stored and hashed as written; a record's description is never read.
    assert data["tags"] == [" spaced "]
    assert data["description"] == " kept as written "


def test_padded_packet_fields_read_as_memzoi_reads_them():
    a = analyze_text(PACKET, ".memzoi/proposals/pending/pkt-1.md")
    assert [(f.code, f.message) for f in a.findings] == []
    data = a.document.data
    assert (data["id"], data["description"], data["sensitivity"]) == ("pkt-1", "Use pnpm for installs.", "repo-safe")
    assert data["proposal"] == {
        "action": "create",
        "proposed_by": "agent",
        "proposed_at": "2026-07-06T00:00:00Z",
        "reason": "learned",
    }
    assert data["scope"] == {"kind": "repo", "paths": ["src/**"]}
    assert data["created_by"] == " agent "  # Memzoi keeps created_by as written


def test_fields_memzoi_does_not_trim_stay_errors():
    """``origin.route`` is a serde enum in Memzoi: a padded value is refused there, so it is refused here."""
    text = padded_record(origin={"origin_key": "repository-record:rec-x", "route": " repository_materialization "})
    codes = [f.code for f in analyze_text(text, ".memzoi/records/rec-x.md").findings]
    assert codes == ["invalid_value"]


def test_whitespace_only_value_is_empty_after_trimming():
    text = padded_record(source="  ")
    [f] = analyze_text(text, ".memzoi/records/rec-x.md").findings
    assert f.code == "invalid_value" and "`source`" in f.message


def test_padded_legacy_profile_is_still_legacy():
    text = padded_record(profile=" memzoi/v1 ")
    a = analyze_text(text, ".memzoi/records/rec-x.md")
    assert [f.code for f in a.findings] == ["legacy_profile"]
    assert "`memzoi/v1`" in a.findings[0].message


def test_trimmed_keeps_plain_scalars_typed():
    value = trimmed(PlainScalar("1\u00a0", "1\u00a0"))
    assert isinstance(value, PlainScalar) and value == "1" and value.resolved == 1
    assert trimmed(5) == 5 and trimmed("x") == "x"
    assert frame("---\ntags: [' a ']\nid: ' b '\n---\n").data == {"tags": [" a "], "id": "b"}


def test_trimming_is_rusts_not_pythons():
    """Rust's ``str::trim`` keeps U+001C..U+001F (Python's ``str.strip`` drops them), so Memzoi refuses this id."""
    text = padded_record(id="\x1crec-x")
    a = analyze_text(text, ".memzoi/records/rec-x.md")
    assert a.document.data["id"] == "\x1crec-x"
    # The id is refused; its U+001C, a C0 control character, is also reported where it hides (issue 31).
    assert [f.code for f in a.findings if f.code != "invisible_character"] == ["invalid_identifier"]


def test_the_schemas_say_that_trimmed_fields_are_checked_after_trimming():
    # JSON Schema cannot trim: `const: memzoi` and `format: date-time` on the raw text would refuse what Memzoi
    # (and memzoi check) accept, so the committed schemas say so where it applies
    import json

    from .conftest import ROOT

    record = json.loads((ROOT / "schemas" / "record.schema.json").read_text(encoding="utf-8"))
    note = "Surrounding white space is trimmed before this is checked"
    assert (
        record["properties"]["profile"]["const"] == "memzoi" and note in record["properties"]["profile"]["description"]
    )
    assert note in record["properties"]["timestamp"]["description"]
    assert note not in record["properties"]["tags"]["description"]  # kept exactly as written
    assert '`profile: " memzoi "`' in record["description"]
    packet = json.loads((ROOT / "schemas" / "proposal.schema.json").read_text(encoding="utf-8"))
    assert note in packet["$defs"]["ProposalBlock"]["properties"]["action"]["description"]
    assert [
        f.code for f in analyze_text(builders.record("rec-x", profile=" memzoi "), ".memzoi/records/rec-x.md").findings
    ] == []
