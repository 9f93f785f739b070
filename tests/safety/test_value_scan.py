"""Every decoded frontmatter string, key or value, is scanned as its own text, as Memzoi scans it.

Memzoi runs its write-safety rules on each decoded field value, so a rule anchored at a line start matches at the
start of a value (``title: TOKEN=…``), an escape is a character of the value (``"\\u200b"``), and keys are texts
too. Planted secrets are built from pieces at run time and never printed: assertions name the code and the field.
"""

from __future__ import annotations

import json
import re

import pytest
from hypothesis import HealthCheck, example, given, settings, strategies as st

from memzoi.base.findings import Severity
from memzoi.judge.analysis import analyze_text
from memzoi.read.document import frame
from memzoi.read.yaml12 import PlainScalar
from memzoi.safety.scan import collect_hits, value_hits
from memzoi.safety.values import KEY_MARK, rescanned, scalars

from ..builders import edit
from .helpers import record, workspace

#: Values Memzoi's anchored rules refuse at the start of a text and our own detectors leave alone (placeholders):
#: only a scan of the value as its own text finds them. (text, Memzoi's code)
ANCHORED = [
    ("TOK" + "EN=<value>", "environment_secret"),
    ("export API" + "_KEY=<your key>", "environment_secret"),
    ("Author" + "ization: Bearer <token>", "authorization_header"),
]
#: Values that hold a match wherever they stand (the escapes are what hides them). (text, code)
UNANCHORED = [
    ("AK" + "IA" + "IOSFODNN7ABCDEFG", "credential_token"),
    ("-----BEGIN " + "PRIVATE KEY-----", "private_key"),
    ("postgres://app" + "@db.internal/main", "connection_string"),
]
#: Invisible and bidirectional characters (written raw or escaped, the value holds them). (text, code)
INVISIBLE = [
    ("zero\u200bwidth", "invisible_character"),
    ("bidi \u202e text", "invisible_character"),
    ("word\u2060joiner", "invisible_character"),
]

FIELDS = ["title", "description", "source_ref", "tags", "flow tags", "origin_key", "flow key", "quoted key"]


def _place(field: str, scalar: str) -> str:
    """A valid record with the YAML ``scalar`` as the value (or key) ``field`` names; the title's H1 is removed
    (it would repeat the value in the body)."""
    base = record()
    if field == "title":
        return edit(edit(base, 'title: "Use pnpm"\n', f"title: {scalar}\n"), "# Use pnpm\n\n", "")
    if field == "origin_key":
        return edit(base, '  origin_key: "repository-record:rec"\n', f"  origin_key: {scalar}\n")
    if field == "tags":
        return edit(base, "status: active\n", f"status: active\ntags:\n  - deploy\n  - {scalar}\n")
    if field == "flow tags":
        return edit(base, "status: active\n", f"status: active\ntags: [deploy, {scalar}]\n")
    if field == "flow key":
        return edit(base, "status: active\n", f"status: active\ncapture: {{{scalar}: x}}\n")
    if field == "quoted key":
        return edit(base, "status: active\n", f"status: active\ncapture:\n  {scalar}: x\n")
    return edit(base, "status: active\n", f"status: active\n{field}: {scalar}\n")


def _escaped(value: str, how: str) -> str:
    """``value`` as a YAML scalar written the ``how`` way (every way decodes to ``value``)."""
    if how == "plain":
        return value
    if how == "json":
        return json.dumps(value, ensure_ascii=False)
    if how == "all escaped":
        return '"' + "".join(f"\\u{ord(c):04x}" for c in value) + '"'
    if how == "first escaped":
        return f'"\\x{ord(value[0]):02x}' + json.dumps(value[1:], ensure_ascii=False)[1:]
    if how == "single":
        return "'" + value.replace("'", "''") + "'"
    raise AssertionError(how)


def _plain_ok(value: str) -> bool:
    return re.fullmatch(r"[A-Za-z0-9<_-][^:#\[\]{},\"']*", value) is not None and ": " not in value


def _findings(text: str, tmp_path):
    return [f for f in analyze_text(text, workspace(tmp_path) / "records" / "rec.md").findings]


def _span(text: str, scalar: str) -> tuple[int, int]:
    start = text.index(scalar)
    return start, start + len(scalar)


def _secret_free(found, secret: str) -> None:
    for f in found:
        assert secret not in f.message and secret not in json.dumps(f.data, default=str), (
            f"a {f.code} finding repeats the planted value"
        )
        assert all(secret not in x.title for x in f.fixes), f"a {f.code} fix title repeats the planted value"


@pytest.mark.parametrize("field", FIELDS)
@pytest.mark.parametrize("value, code", ANCHORED, ids=["env", "export", "authorization"])
def test_an_anchored_rule_matches_at_the_start_of_a_value(tmp_path, field, value, code):
    scalar = json.dumps(value)
    text = _place(field, scalar)
    assert not re.search(r"(?im)^\s*(?:export\s+)?[A-Z_]+=|^\s*authorization\s*:", text), (
        "the file's text starts no line with the match: only the value as its own text does"
    )
    found = _findings(text, tmp_path)
    hits = [f for f in found if f.code == code]
    assert [(f.severity, f.start, f.end) for f in hits] == [(Severity.ERROR, *_span(text, scalar))], [
        (f.code, f.start, f.end) for f in found
    ]
    assert "as its own text" in hits[0].message
    _secret_free(found, value)


@pytest.mark.parametrize("value, code", ANCHORED, ids=["env", "export", "authorization"])
def test_a_plain_list_item_and_a_plain_value_start_their_own_text(tmp_path, value, code):
    for field in ("description", "tags", "flow tags"):
        if field == "flow tags" and ": " in value:
            continue
        scalar = value if ": " not in value else json.dumps(value)
        text = _place(field, scalar)
        assert [f.code for f in _findings(text, tmp_path) if f.code == code] == [code], field


@pytest.mark.parametrize("field", FIELDS)
@pytest.mark.parametrize("value, code", INVISIBLE, ids=["zwsp", "rlo", "wj"])
def test_invisible_characters_are_found_written_raw_or_escaped(tmp_path, field, value, code):
    for how in ("json", "all escaped"):
        scalar = json.dumps(value, ensure_ascii=True) if how == "json" else _escaped(value, how)
        assert value not in (text := _place(field, scalar))
        found = [f for f in _findings(text, tmp_path) if f.code == code]
        assert [(f.start, f.end) for f in found] == [_span(text, scalar)], (how, field)
        assert "written with escapes" in found[0].message
        # the quick fix rewrites the scalar without the character, and the result is clean
        fixed = text[: found[0].start] + found[0].fixes[0].edits[0].new_text + text[found[0].end :]
        assert [f.code for f in _findings(fixed, tmp_path) if f.code == code] == []
    raw = _place(field, json.dumps(value, ensure_ascii=False))
    assert any(f.code == code for f in _findings(raw, tmp_path))  # written raw: the file's scan finds it


@pytest.mark.parametrize("value, code", UNANCHORED + ANCHORED)
def test_a_finding_on_a_key_never_prints_the_key(tmp_path, value, code):
    for field in ("flow key", "quoted key"):
        scalar = _escaped(value, "first escaped")
        text = _place(field, scalar)
        found = _findings(text, tmp_path)
        hits = [f for f in found if f.code == code]
        assert hits and all(f.data["field"].endswith(KEY_MARK) for f in hits), field
        assert all("frontmatter key" in f.message for f in hits)
        _secret_free(found, value)
        _secret_free(found, value[1:])


def test_unknown_and_duplicate_keys_never_print_a_detected_key(tmp_path):
    key = "AK" + "IA" + "IOSFODNN7ABCDEFG"
    text = record(extra=f"{key}: x\n{key}: y\n")
    found = _findings(text, tmp_path)
    codes = {f.code for f in found}
    assert {"credential_token", "unknown_key", "duplicate_key"} <= codes
    _secret_free(found, key)


def test_a_yaml_error_never_prints_a_detected_key(tmp_path):
    secret = "abcdef" + "123456"
    text = record(extra="x: {TOK" + f"EN={secret}\n")
    found = _findings(text, tmp_path)
    assert any(f.code == "yaml_syntax" for f in found) and any(f.code == "credential_token" for f in found)
    _secret_free(found, secret)


def test_keyed_detectors_name_the_kind_of_key_not_the_key(tmp_path):
    key = "zq_vault_password"
    text = record(body=f"Set {key}: " + "Xk9#mQ2$vL7pW4" + " in the deploy.")
    found = [f for f in _findings(text, tmp_path) if f.code == "credential_token"]
    assert found and all(key not in f.message for f in found)
    assert "a `password` key" in found[0].message


def test_a_value_that_starts_its_line_or_holds_no_anchor_is_not_rescanned():
    doc = frame(record(extra='description: "plain words"\nsource_ref: "https://x.example/?a=b"\n'))
    assert rescanned(doc) == []  # no escape, one-line values, no value opens with `name=`
    doc = frame(record(extra='description: "see TOKEN=x"\n'))
    assert rescanned(doc) == []  # the name is not at the value's start
    doc = frame(record(extra='description: "TOKEN=x"\n'))
    assert [doc.text[s.node.start : s.node.end] for s in rescanned(doc)] == ['"TOKEN=x"']


def test_a_pair_inside_a_quoted_value_of_a_keyed_field_is_found_by_the_files_scan():
    """The file's scan tries the pairs inside a quoted value, as a scan of the value alone (Memzoi's) finds them:
    the outer pair (``origin_key``'s ``key``) does not hide them."""
    line = 'origin_key: "a TOK' + "EN=TOK" + 'EN=abcdef"'
    found = collect_hits(line, body_start=len(line))
    assert [(h.code, line[h.start : h.start + 6]) for h in found] == [("credential_token", "TOK" + "EN=")]


# --- the shortcut equals scanning every scalar -------------------------------------------------------------------

_PIECES = [
    "TOK" + "EN=",
    "<v>",
    "abc",
    " ",
    "\\u200b",
    "\\n",
    "Author" + "ization: Bearer ",
    "x",
    "export ",
    "AK" + "IA" + "IOSFODNN7ABCDEFG",
    "=",
    "-",
    "\\x41",
    "''",
    "postgres://h",
    "#",
    "proxy-",
]


def _all_scalar_hits(doc) -> set[tuple[str, int]]:
    """(code, scalar start) of every string scalar's own scan that the file's scan does not already report over
    that scalar: what :func:`value_hits` must return when it scans every scalar."""
    raw = collect_hits(doc.text, body_start=doc.body_start or 0, bom=doc.bom)
    out = set()
    for node, _ in scalars(doc.yaml_root) if doc.yaml_root is not None else ():
        v = node.value
        if not isinstance(v, str) or (isinstance(v, PlainScalar) and not isinstance(v.resolved, str)):
            continue
        for h in collect_hits(v, body_start=len(v)):
            if not any(r.code == h.code and r.start < node.end and node.start < r.end for r in raw):
                out.add((h.code, node.start))
    return out


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@example(["<v>", "TOK" + "EN=", "TOK" + "EN=", "<v>"], "json-ish", "origin_key")  # a pair inside a keyed value
@given(
    st.lists(st.sampled_from(_PIECES), min_size=1, max_size=6),
    st.sampled_from(["json-ish", "single", "plain"]),
    st.sampled_from(["description", "tags", "flow tags", "origin_key", "flow key", "quoted key"]),
)
def test_the_rescan_shortcut_equals_scanning_every_scalar(pieces, style, field):
    value = "".join(pieces)
    if style == "json-ish":
        scalar = '"' + value.replace('"', "") + '"'
    elif style == "single":
        scalar = "'" + value.replace("'", "''").replace("\\", "/") + "'"
    else:
        scalar = value.replace("\\", "/")
    doc = frame(_place(field, scalar))
    if doc.yaml_root is None:
        return  # not YAML: Memzoi refuses the file; the file's scan still runs
    raw = collect_hits(doc.text, body_start=doc.body_start or 0, bom=doc.bom)
    got = {(h.code, h.start) for h in value_hits(doc, raw)}
    assert got == _all_scalar_hits(doc)


# --- escapes x fields x rules --------------------------------------------------------------------------------------

_RULES = ANCHORED + UNANCHORED + INVISIBLE


@settings(max_examples=250, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.sampled_from(_RULES),
    st.sampled_from(FIELDS),
    st.sampled_from(["plain", "json", "all escaped", "first escaped", "single", "line break before"]),
)
def test_every_escape_of_every_rule_in_every_field_is_refused(tmp_path_factory, rule, field, how):
    value, code = rule
    if how == "plain" and (not _plain_ok(value) or field in ("quoted key",)):
        how = "json"
    if how == "single" and field == "flow key" and ": " in value:
        how = "json"
    if how == "line break before":
        scalar, decoded = '"see\\n' + json.dumps(value, ensure_ascii=True)[1:], "see\n" + value
    else:
        scalar, decoded = _escaped(value, how), value
    text = _place(field, scalar)
    found = _findings(text, tmp_path_factory.mktemp("w"))
    s, e = _span(text, scalar)
    hits = [f for f in found if f.code == code and f.start < e and s < f.end]
    assert hits, f"{code} not reported for {field} written {how}: {sorted({f.code for f in found})}"
    assert all(f.severity == Severity.ERROR for f in hits)
    if code != "invisible_character":
        _secret_free(found, value)
    assert all(decoded not in f.message for f in found)
