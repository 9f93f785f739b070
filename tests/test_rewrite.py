"""memzoi.read.rewrite: a lifecycle rewrite changes only the keys it owns and keeps every other line in place, or
refuses naming the line (``hand_edit_conflict``). Property tests drive hand edits × rewrites × line endings."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings, strategies as st

from memzoi.read.document import frame
from memzoi.read.render import PACKET_ORDER, RECORD_ORDER
from memzoi.read.rewrite import HandEditConflict, rewrite

from . import builders

WHEN = "2026-08-01T00:00:00Z"
RETIRE = {"status": "tombstoned", "updated": WHEN, "materialization": None}


def attested(**fields) -> str:
    return builders.record("r", attested=True, body="First line.\n\nSecond paragraph.", **fields)


def data_of(text: str) -> dict:
    doc = frame(text)
    assert doc.data is not None and not [f for f in doc.findings if f.code != "bom"], doc.findings
    return doc.data


def test_retire_keeps_comments_description_body_and_trailing_blank_lines():
    text = attested(description="Written by a person.")
    text = builders.edit(text, "status: active\n", "status: active  # since the July review\n")
    text = builders.edit(text, "\nscope: repo\n", "\n# scope decided in ADR-7\nscope: repo\n")
    text = builders.edit(text, "First line.\n", "First line.\n<!-- reviewer note -->\n")
    text += "\n\n\n"
    out = rewrite(frame(text), RETIRE, RECORD_ORDER)
    assert "status: tombstoned  # since the July review\n" in out
    assert f'updated: "{WHEN}"\nstatus:' in out  # inserted at Memzoi's place, before `status`
    assert "\n# scope decided in ADR-7\nscope: repo\n" in out
    assert 'description: "Written by a person."' in out and "\nmaterialization:" not in out
    assert out.split("\n---\n", 1)[1] == text.split("\n---\n", 1)[1]  # the body part, byte for byte
    expected = {k: v for k, v in {**data_of(text), **RETIRE}.items() if v is not None}
    assert data_of(out) == expected


def test_unchanged_values_and_their_spelling_stay():
    text = builders.edit(builders.record("r"), "status: active", 'status: "active"')
    assert rewrite(frame(text), {"status": "active"}, RECORD_ORDER) != text  # asked to write: canonical spelling
    assert rewrite(frame(text), {}, RECORD_ORDER) == text


@pytest.mark.parametrize("newline", ["\n", "\r\n"])
def test_line_endings_are_kept(newline):
    text = builders.edit(attested(), "\nscope: repo\n", "\n# note\nscope: repo\n")
    text = text.replace("\n", newline) + newline * 2
    out = rewrite(frame(text), RETIRE, RECORD_ORDER)
    breaks = re.findall(r"\r\n|\n|\r", out)
    assert set(breaks) == {newline}
    assert data_of(out)["status"] == "tombstoned" and out.endswith(newline * 3)


def test_mixed_line_endings_keep_each_line_its_own():
    text = builders.record("r")
    lf_lines = text.split("\n")
    mixed = "\r\n".join(lf_lines[:5]) + "\r\n" + "\n".join(lf_lines[5:])
    out = rewrite(frame(mixed), {"status": "tombstoned"}, RECORD_ORDER)
    assert out.startswith("\r\n".join(lf_lines[:5]) + "\r\n")
    assert out.replace("status: tombstoned", "status: active") == mixed


def test_packet_resolution_is_added_last_and_supersedes_when_absent():
    text = builders.packet("p", extra="# kept at the end\n")
    text = builders.edit(text, "supersedes: []\n", "")
    resolution = builders.resolution("rejected")
    out = rewrite(frame(text), {"status": "rejected", "resolution": resolution, "supersedes": []}, PACKET_ORDER)
    assert out.index("supersedes: []") < out.index("sensitivity:")
    assert out.index("resolution:") < out.index("# kept at the end")  # after the last key, before the comment
    assert data_of(out)["resolution"] == resolution


@pytest.mark.parametrize(
    "where, kind, line",
    [
        ("\n  action: create\n", "a comment line inside `materialization`", "\n  # reviewed\n  action: create\n"),
        ("\n  action: create\n", "a line with a comment inside `materialization`", "\n  action: create  # reviewed\n"),
        ("\n  action: create\n", "a blank line inside `materialization`", "\n\n  action: create\n"),
        ("\nmaterialization:\n", "a line with a comment inside `materialization`", "\nmaterialization:  # reviewed\n"),
    ],
)
def test_a_hand_edit_inside_a_removed_key_is_a_conflict_naming_the_line(where, kind, line):
    text = builders.edit(attested(), where, line)
    number = text[: text.index("reviewed") if "reviewed" in text else text.index("\n\n  action") + 1].count("\n") + 1
    with pytest.raises(HandEditConflict) as err:
        rewrite(frame(text), RETIRE, RECORD_ORDER)
    assert err.value.describe() == f"line {number} is {kind}"
    assert "reviewed" not in str(err.value)


def test_a_comment_inside_a_replaced_block_is_a_conflict_a_comment_on_its_key_line_is_kept():
    text = builders.record("r", tags=["a", "b"])
    inner = builders.edit(text, "\n  - b\n", "\n  # why b\n  - b\n")
    with pytest.raises(HandEditConflict) as err:
        rewrite(frame(inner), {"tags": ["a", "c"]}, RECORD_ORDER)
    assert err.value.key == "tags" and err.value.kind == "a comment line"
    head = builders.edit(text, "\ntags:\n", "\ntags:  # sorted by hand\n")
    out = rewrite(frame(head), {"tags": ["a", "c"]}, RECORD_ORDER)
    assert "\ntags:  # sorted by hand\n  - a\n  - c\n" in out


def test_frontmatter_the_writer_cannot_edit_line_by_line_is_a_conflict():
    flow = "---\n{id: r, status: active}\n---\n\nBody.\n"
    with pytest.raises(HandEditConflict) as err:
        rewrite(frame(flow), {"status": "tombstoned"}, RECORD_ORDER)
    assert err.value.line == 2 and "flow mapping" in err.value.kind
    indented = "---\n  id: r\n  status: active\n---\n\nBody.\n"
    with pytest.raises(HandEditConflict) as err:
        rewrite(frame(indented), {"status": "tombstoned"}, RECORD_ORDER)
    assert err.value.line == 3 and err.value.key == "status"
    twice = "---\nid: r\nstatus: active\nstatus: active\n---\n\nBody.\n"
    with pytest.raises(HandEditConflict) as err:
        rewrite(frame(twice), {"status": "tombstoned"}, RECORD_ORDER)
    assert err.value.line == 4


def test_a_changed_body_is_replaced_in_place_and_the_title_in_its_heading():
    text = builders.record("r", body="Old body.") + "\n\n"
    out = rewrite(frame(text), {"title": "New title"}, RECORD_ORDER, title="New title", body="New body.\n")
    assert out.endswith("\n---\n\n# New title\n\nNew body.\n\n\n")
    doc = frame(out)
    assert doc.body == "New body." and doc.h1_text == "New title"


# --- property: hand edits × rewrites × line endings ------------------------------------------------------------

_words = st.text(alphabet="abcdefghij klmnop-", min_size=1, max_size=20).map(str.strip).filter(bool)


@st.composite
def hand_edited(draw):
    """A record or packet with random hand edits: a hand-written description, comment lines between top-level
    keys, a comment at the end of a key line, a comment in the body, trailing blank lines; in LF or CRLF (Memzoi frames no other)."""
    is_packet = draw(st.booleans())
    base = builders.packet("p", body="First line.\n\nMore.") if is_packet else attested()
    lines = base.split("\n")
    close = lines.index("---", 1)
    markers: list[str] = []
    if draw(st.booleans()):
        i = next(n for n, ln in enumerate(lines) if ln.startswith("description:"))
        lines[i] = f'description: "{draw(_words)}"'
    # comment lines before top-level keys (never inside a block)
    tops = [n for n in range(1, close) if lines[n][:1].isalpha()] + [close]
    for n in sorted(draw(st.sets(st.sampled_from(tops), max_size=4)), reverse=True):
        marker = f"# hand note {len(markers)}"
        markers.append(marker)
        lines.insert(n, marker)
    close = lines.index("---", 1)
    scalar_keys = [n for n in range(1, close) if re.match(r"^[a-z_]+: \S", lines[n])]
    for n in draw(st.sets(st.sampled_from(scalar_keys), max_size=2)):
        marker = f"# tail note {len(markers)}"
        markers.append(marker)
        lines[n] += "  " + marker
    if draw(st.booleans()):  # a comment line inside a nested block (origin, materialization, proposal, scope)
        blocks = [n for n in range(1, close) if re.match(r"^[a-z_]+:$", lines[n]) and lines[n + 1].startswith("  ")]
        n = draw(st.sampled_from(blocks))
        lines.insert(n + 2, "  # inner note")
    body_note = draw(st.booleans())
    if body_note:
        i = lines.index("First line.")
        lines.insert(i + 1, "<!-- body note -->")
    text = "\n".join(lines) + "\n" * draw(st.integers(0, 3))
    newline = draw(st.sampled_from(["\n", "\r\n"]))
    return is_packet, text.replace("\n", newline), markers, newline


@settings(max_examples=300, deadline=None)
@given(case=hand_edited(), status=st.sampled_from(["tombstoned", "superseded", "rejected", "applied"]))
def test_rewrites_keep_every_hand_edit_in_place_and_in_order(case, status):
    is_packet, text, markers, newline = case
    if is_packet:
        outcome = "rejected" if status in ("rejected", "tombstoned") else "applied"
        changes = {"status": outcome, "resolution": builders.resolution(outcome)}
        order = PACKET_ORDER
    else:
        changes = {
            "status": "superseded" if status == "superseded" else "tombstoned",
            "updated": WHEN,
            "materialization": None,
        }
        order = RECORD_ORDER
    doc = frame(text)
    lines = re.split(r"\r\n|\n|\r", text)
    inner = next((n for n, ln in enumerate(lines) if ln == "  # inner note"), None)
    owner = (
        None
        if inner is None
        else next(re.match(r"^([a-z_]+):", ln).group(1) for ln in reversed(lines[:inner]) if re.match(r"^[a-z_]+:", ln))
    )
    if owner in changes:  # a comment inside a block the rewrite removes: refused, naming that line
        with pytest.raises(HandEditConflict) as err:
            rewrite(doc, changes, order)
        assert (err.value.line, err.value.kind, err.value.key) == (inner + 1, "a comment line", owner)
        return
    out = rewrite(doc, changes, order)
    # Data: exactly the requested change; body part byte for byte; one line-ending style.
    expected = {k: v for k, v in {**doc.data, **changes}.items() if v is not None}
    assert data_of(out) == expected
    close = re.search(r"(?:\r\n|\n|\r)---(?:\r\n|\n|\r)", text)
    out_close = re.search(r"(?:\r\n|\n|\r)---(?:\r\n|\n|\r)", out)
    assert out[out_close.end() :] == text[close.end() :]
    assert set(re.findall(r"\r\n|\n|\r", out)) == {newline}
    # Every hand-edit marker is still there, once, in the same order.
    assert re.findall(r"# (?:hand|tail|inner) note \d*", out) == re.findall(r"# (?:hand|tail|inner) note \d*", text)
    if "description" in doc.data:
        assert data_of(out)["description"] == doc.data["description"]
    # Lines outside the changed keys are untouched: removing the changed keys' lines from both gives the same text.
    assert _without(out, changes) == _without(text, changes)


def _without(text: str, changes: dict) -> list[str]:
    """The lines of ``text`` that belong to none of the top-level keys in ``changes`` (a key's lines run from the
    key to the next line at column 0), with a comment at the end of such a key line set apart."""
    out, skipping = [], False
    for line in re.split(r"\r\n|\n|\r", text):
        top = re.match(r"^([a-z_]+):", line)
        if top:
            skipping = top.group(1) in changes
            if skipping and "#" in line:
                out.append(line[line.index("#") :])
        elif not line.startswith(" "):
            skipping = False
        if not skipping:
            out.append(line)
    return out
