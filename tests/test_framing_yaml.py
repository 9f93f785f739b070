"""Framing and YAML cases: sections A and B of shared/cases/bug-classes.md, adapted to the current profile."""

from __future__ import annotations

import json

import pytest

from memzoi.judge.analysis import analyze_bytes, analyze_text
from memzoi.judge.legacy import apply_edits
from memzoi.read.document import frame
from memzoi.read.text import LineIndex

VALID = """---
id: rec-x
kind: memory
profile: memzoi
type: fact
lane: semantic
title: Use pnpm
scope: repo
visibility: repo
content_class: general_repo_knowledge
status: active
confidence: 1
timestamp: "2026-07-06T00:00:00Z"
retention: {}
origin:
  origin_key: repository-record:rec-x
  route: repository_materialization
---

# Use pnpm

Use pnpm for installs.
"""


def codes(analysis) -> list[str]:
    return [f.code for f in analysis.findings]


def pos(analysis, f) -> tuple[int, int]:
    return LineIndex(analysis.text).position(f.start)


def test_valid_record_is_clean():
    a = analyze_text(VALID, ".memzoi/records/rec-x.md")
    assert codes(a) == []
    assert a.model.title == "Use pnpm"
    assert a.document.body == "Use pnpm for installs."


# --- B01: BOM --------------------------------------------------------------------------------------------------


def test_bom_from_disk_bytes_and_editor_text():
    raw = b"\xef\xbb\xbf" + VALID.encode()
    for a in (
        analyze_bytes(raw, ".memzoi/records/rec-x.md"),
        analyze_text("\ufeff" + VALID, ".memzoi/records/rec-x.md"),
    ):
        assert a.document.data["id"] == "rec-x"
        assert codes(a) == ["bom"]
        bom = a.findings[0]
        assert (bom.start, bom.end) == (0, 1) and bom.severity == 2
        fixed = apply_edits(a.text, list(bom.fixes[0].edits))
        assert fixed == VALID


def test_bom_replay_simplified_shape():
    a = analyze_bytes(b"\xef\xbb\xbf---\nid: rec-bom\nkind: fact\n---\nUse pnpm.\n")
    assert a.document.data["id"] == "rec-bom"
    assert "frontmatter_missing" not in codes(a)


# --- B02: CRLF -------------------------------------------------------------------------------------------------


def test_crlf_parses_like_lf_and_spans_exclude_cr():
    crlf = VALID.replace("\n", "\r\n")
    a = analyze_text(crlf, ".memzoi/records/rec-x.md")
    assert codes(a) == []
    assert a.document.data == analyze_text(VALID, ".memzoi/records/rec-x.md").document.data
    bad = crlf.replace("visibility: repo", "visibility: secret-ish")
    b = analyze_text(bad, ".memzoi/records/rec-x.md")
    [f] = b.findings
    assert f.code == "invalid_value" and "\r" not in b.text[f.start : f.end]


def test_crlf_upgrade_keeps_one_line_ending_style():
    legacy = (
        '---\r\ntype: decision\r\ntitle: "Keep CRLF"\r\ntimestamp: "2026-07-05T11:31:45Z"\r\n'
        "status: current\r\nscope: repo\r\nvisibility: repo\r\nconfidence: likely\r\n---\r\n\r\n# Keep CRLF\r\n\r\nBody.\r\n"
    )
    a = analyze_text(legacy, ".memzoi/records/keep-crlf.md")
    assert codes(a) == ["legacy_profile"]
    fixed = apply_edits(legacy, list(a.findings[0].fixes[0].edits))
    assert "\n" not in fixed.replace("\r\n", "")
    b = analyze_text(fixed, ".memzoi/records/keep-crlf.md")
    assert codes(b) == []
    assert b.model.status == "active" and b.model.confidence == 0.75


# --- B04: empty, comment-only, frontmatter-only -----------------------------------------------------------------


def test_empty_frontmatter_gives_one_missing_key_on_line_zero():
    a = analyze_text("---\n---\nbody\n")
    assert a.document.data == {}
    assert codes(a) == ["missing_key"]
    f = a.findings[0]
    assert pos(a, f) == (0, 0)
    assert "`id`" in f.message and "`kind`" in f.message


def test_comment_only_frontmatter():
    a = analyze_text("---\n# todo\n---\n")
    assert a.document.data == {}
    assert codes(a)[0] == "missing_key" and pos(a, a.findings[0]) == (0, 0)
    assert set(codes(a)) == {"missing_key", "empty_body"}
    assert a.document.h1 is None  # the YAML comment is not a heading


def test_frontmatter_only_without_trailing_newline():
    text = VALID.split("---\n\n# Use pnpm")[0] + "---"
    a = analyze_text(text, ".memzoi/records/rec-x.md")
    assert a.document.fm_close is not None
    assert codes(a) == ["empty_body"]


# --- B05: not a mapping ----------------------------------------------------------------------------------------


@pytest.mark.parametrize("text", ["---\n- a\n- b\n---\nx", "---\njust a sentence\n---\nx"])
def test_frontmatter_not_mapping(text):
    a = analyze_text(text)
    assert codes(a) == ["frontmatter_not_mapping"]
    f = a.findings[0]
    assert text[f.start : f.end].strip() in ("- a\n- b", "just a sentence")


# --- B08: TOML / JSON frontmatter ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "word"), [('+++\nid = "rec-toml"\n+++\nBody\n', "TOML"), ('{"id": "rec-json"}\nBody\n', "JSON")]
)
def test_toml_and_json_frontmatter_named(text, word):
    a = analyze_text(text)
    assert codes(a) == ["frontmatter_missing"]
    assert word in a.findings[0].message


def test_unclosed_frontmatter():
    a = analyze_text("---\nid: x\ntitle: y\n")
    assert codes(a) == ["frontmatter_unclosed"]


# --- B09: unquoted colon, Windows path, `*` ---------------------------------------------------------------------


def test_unquoted_colon_points_at_second_colon_with_quote_fix():
    text = "---\nid: rec-colon\ntitle: Step 2: run tests\npath: C:\\tmp\\x\nnote: *important*\n---\nbody\n"
    a = analyze_text(text)
    [f] = [f for f in a.findings if f.code == "yaml_syntax"]
    assert pos(a, f) == (2, 13)  # 0-based line 2 is the third line; column of the second `:`
    assert "`title`" in f.message
    fixed = apply_edits(text, list(f.fixes[0].edits))
    assert 'title: "Step 2: run tests"' in fixed
    # The next error is the `*important*` value (an invalid alias for libyaml): also fixable by quoting.
    b = analyze_text(fixed)
    [alias] = [g for g in b.findings if g.code in ("yaml_syntax", "yaml_alias")]
    assert "`note`" in alias.message
    c = analyze_text(apply_edits(b.text, list(alias.fixes[0].edits)))
    assert c.document.data["title"] == "Step 2: run tests"
    assert c.document.data["path"] == "C:\\tmp\\x"
    assert c.document.data["note"] == "*important*"
    assert not {"yaml_syntax", "yaml_alias"} & set(codes(c))


def test_flow_looking_value_gets_quote_fix():
    text = "---\nid: rec-l\ntitle: [[link]]tail\n---\nbody\n"
    a = analyze_text(text)
    [f] = [f for f in a.findings if f.code == "yaml_syntax"]
    assert f.fixes and analyze_text(apply_edits(text, list(f.fixes[0].edits))).document.data["title"] == "[[link]]tail"


# --- B10 / B11: YAML 1.2 core schema ---------------------------------------------------------------------------


def test_dates_stay_exact_strings_and_json_serialisable():
    text = "---\nid: rec-date\ncreated: 2026-04-05\nreviewed_at: 2026-04-05T09:05:28-06:00\n---\nx\n"
    data = frame(text).data
    assert data["created"] == "2026-04-05" and data["reviewed_at"] == "2026-04-05T09:05:28-06:00"
    json.dumps(data)


def test_edit_of_another_field_leaves_timestamp_bytes():
    text = VALID.replace("id: rec-x", "id: other-id").replace(
        'timestamp: "2026-07-06T00:00:00Z"', "timestamp: 2026-07-06T00:00:00-06:00"
    )
    a = analyze_text(text, ".memzoi/records/rec-x.md")
    [f] = a.findings
    assert f.code == "id_path_mismatch"
    fixed = apply_edits(text, list(f.fixes[0].edits))
    assert "timestamp: 2026-07-06T00:00:00-06:00\n" in fixed
    assert codes(analyze_text(fixed, ".memzoi/records/rec-x.md")) == []


def test_norway_problem_values_stay_strings():
    data = frame("---\nid: rec-no\nlocale: no\nsensitivity: off\ntags: [se, no, dk]\non: yes\n---\n").data
    assert data["locale"] == "no" and data["sensitivity"] == "off" and data["tags"] == ["se", "no", "dk"]
    assert data["on"] == "yes"


def test_sensitivity_off_does_not_pass_enum(corpus):
    packet = (corpus / "examples/proposals/mem_2026_07_06_auth_001.md").read_text()
    a = analyze_text(
        packet.replace("sensitivity: repo-safe", "sensitivity: off"),
        ".memzoi/proposals/pending/mem_2026_07_06_auth_001.md",
    )
    [f] = [f for f in a.findings if f.code == "invalid_value"]
    assert a.text[f.start : f.end] == "off" and "repo-safe" in f.message


def test_core_schema_numbers_and_booleans():
    data = frame("---\na: 1\nb: 0.5\nc: true\nd: ~\ne: 0x1F\nf: '1'\ng: .inf\n---\n").data
    assert data["a"].resolved == 1 and data["b"].resolved == 0.5 and data["c"].resolved is True
    assert data["d"] is None and data["e"].resolved == 31 and data["f"] == "1" and not hasattr(data["f"], "resolved")
    quoted = VALID.replace("confidence: 1", 'confidence: "1"')
    assert codes(analyze_text(quoted, ".memzoi/records/rec-x.md")) == ["invalid_value"]


# --- B13: tabs -------------------------------------------------------------------------------------------------


def test_tab_indentation_error_with_fix_and_tab_before_comment_ok():
    text = "---\nid: rec-tab\ntags:\n\t- a\nnote: x\t# trailing\n---\n"
    a = analyze_text(text)
    [f] = [f for f in a.findings if f.code == "yaml_tab_indent"]
    assert pos(a, f) == (3, 0)
    assert "yaml_syntax" not in codes(a)
    assert a.document.data["tags"] == ["a"] and a.document.data["note"] == "x"
    fixed = apply_edits(text, list(f.fixes[0].edits))
    assert "\n  - a\n" in fixed and "yaml_tab_indent" not in codes(analyze_text(fixed))


# --- keys, anchors, tags, documents ----------------------------------------------------------------------------


def test_duplicate_key_on_second_occurrence():
    text = VALID.replace("lane: semantic\n", "lane: semantic\nlane: episodic\n")
    a = analyze_text(text, ".memzoi/records/rec-x.md")
    [f] = [f for f in a.findings if f.code == "duplicate_key"]
    assert pos(a, f)[0] == 6 and "line 6" in f.message
    assert a.document.data["lane"] == "semantic"


def test_non_string_keys():
    a = analyze_text("---\n1: x\ntrue: y\n? [a]\n: z\n---\n")
    assert codes(a).count("non_string_key") == 3


def test_anchor_and_alias_never_expanded():
    a = analyze_text("---\nid: &a rec\nother: *a\n---\n")
    assert codes(a).count("yaml_alias") == 2
    assert a.document.data["other"] is None


def test_custom_tag_and_second_document():
    a = analyze_text("---\nid: !custom rec\n...\n---\n")
    assert "yaml_syntax" in codes(a)


def test_unknown_key_suggests_rename():
    text = VALID.replace("title: Use pnpm", "titel: Use pnpm")
    a = analyze_text(text, ".memzoi/records/rec-x.md")
    unknown = [f for f in a.findings if f.code == "unknown_key"][0]
    assert a.text[unknown.start : unknown.end] == "titel"
    assert unknown.fixes[0].title == "Rename to `title`"
    assert codes(analyze_text(apply_edits(text, list(unknown.fixes[0].edits)), ".memzoi/records/rec-x.md")) == []


def test_invalid_utf8_reports_byte_offset():
    raw = VALID.encode().replace(b"Use pnpm for", b"Use \xff\xfe for")
    a = analyze_bytes(raw, ".memzoi/records/rec-x.md")
    [f] = [f for f in a.findings if f.code == "invalid_encoding"]
    assert f.data["byte_offset"] == raw.index(b"\xff")
    assert a.text[f.start] == "\ufffd"


def test_unclosed_flow_sequence_is_blamed_on_its_own_key():
    text = "---\nid: x\nstatus: [active\nscope: repo\n---\nbody\n"
    a = analyze_text(text)
    [f] = [f for f in a.findings if f.code == "yaml_syntax"]
    assert pos(a, f) == (2, 8) and "`status`" in f.message
    assert analyze_text(apply_edits(text, list(f.fixes[0].edits))).document.data["status"] == "[active"


# The shortcuts below (a first-character test and one union pattern for plain scalars, one pattern for a whole
# id, C-level scans for the body) must keep the exact results of the straightforward definitions.
_SCALAR_ALPHABET = "0123456789+-.eExoabfinINFaNlLtTrRuUsS~ _:/\n"


def _resolve_by_definition(text):
    import math
    import re

    if re.match(r"^(?:~|null|Null|NULL|)$", text):
        return None
    bools = {"true": True, "True": True, "TRUE": True, "false": False, "False": False, "FALSE": False}
    if text in bools:
        return bools[text]
    if re.match(r"^[-+]?[0-9]+$", text):
        return int(text)
    if re.match(r"^0o[0-7]+$", text):
        return int(text[2:], 8)
    if re.match(r"^0x[0-9a-fA-F]+$", text):
        return int(text[2:], 16)
    if re.match(r"^[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?$", text):
        return float(text)
    if re.match(r"^[-+]?\.(?:inf|Inf|INF)$", text):
        return -math.inf if text.startswith("-") else math.inf
    if re.match(r"^\.(?:nan|NaN|NAN)$", text):
        return math.nan
    return text


def test_plain_scalar_resolution_matches_the_core_schema_definition():
    import random

    from memzoi.read.yaml12 import resolve_plain

    r = random.Random(7)
    samples = [
        "",
        "~",
        "null",
        "NULL",
        "true",
        "TRUE",
        "no",
        "0o17",
        "0x1F",
        "1e3",
        ".inf",
        "-.Inf",
        ".nan",
        "1\n",
        "true\n",
        "2026-07-04T00:00:00Z",
        "+.5",
        "-",
        ".",
    ]
    samples += ["".join(r.choice(_SCALAR_ALPHABET) for _ in range(r.randint(0, 6))) for _ in range(20000)]
    for text in samples:
        got, want = resolve_plain(text), _resolve_by_definition(text)
        assert type(got) is type(want) and (got == want or got != got and want != want), repr(text)


def test_identifier_patterns_match_the_per_segment_definition():
    import random
    import re

    from memzoi.models.common import is_concept_id, is_identifier

    seg = re.compile(r"^[a-z0-9](?:[a-z0-9_-]*[a-z0-9])?$")
    concept = re.compile(r"^[a-z0-9](?:[a-z0-9-]*[a-z0-9])?$")
    r = random.Random(11)
    for _ in range(20000):
        value = "".join(r.choice("ab0-_/\n A.") for _ in range(r.randint(0, 8)))
        assert is_identifier(value) == (bool(value) and all(seg.match(s) for s in value.split("/"))), repr(value)
        assert is_concept_id(value) == (bool(value) and all(concept.match(s) for s in value.split("/"))), repr(value)


@pytest.mark.parametrize("tail", ["", "\n", " \t\n\u3000", "\n\n# H\n", "\u2028x\u2029 "])
def test_body_span_trims_like_rust(tail):
    from memzoi.read.document import rust_trim

    for body in ["", " ", "x", "  x  ", "\u00a0x\u00a0", "# H\n\nx", "# H"]:
        doc = frame("---\na: 1\n---\n" + body + tail)
        start = doc.body_start
        rest = doc.text[start:].lstrip("\r\n")
        if rest.startswith("# "):
            line = rest.split("\n")[0].split("\r")[0]
            rest = rest[len(line) :].lstrip("\r\n")
        assert doc.body == rust_trim(rest)
