"""Zuno's resident file format (reference §2): delimiter, trimming, caps in characters, spans, the prompt block."""

from __future__ import annotations

from hypothesis import given, strategies as st

from memzoi.resident.format import (
    DELIMITER,
    RULE,
    char_count,
    entry_spans,
    parse,
    render_block,
    round_trips,
    serialize,
    usage,
)


def test_inline_section_sign_is_not_a_separator():
    text = "Cite § 4.2 of the style guide.\n§\nSecond"
    assert parse(text) == ["Cite § 4.2 of the style guide.", "Second"]
    assert parse("a §\nb\n §\nc") == ["a §\nb\n §\nc"]  # § counts only alone on its line
    assert round_trips(text)


def test_multi_line_entries_keep_their_lines():
    entries = ["Build:\n  make all\n  make test", "Prefer `uv` over pip."]
    text = serialize(entries)
    assert text == "Build:\n  make all\n  make test\n§\nPrefer `uv` over pip."
    assert parse(text) == entries
    assert not text.endswith("\n")


def test_empty_and_whitespace_only_files_have_no_entries():
    assert parse("") == []
    assert parse("  \n\t\n") == []
    assert round_trips("") and round_trips(" \n ")
    assert serialize([]) == ""


def test_pieces_are_trimmed_and_empty_pieces_dropped():
    assert parse("  one  \n§\n\n§\n two\n") == ["one", "two"]
    assert not round_trips("  one  \n§\n\n§\n two\n")  # an empty piece does not survive: RoundTrip drift
    assert round_trips("one\n§\ntwo\n")  # a trailing newline is trimmed, nothing else changes


def test_trimming_is_rusts_unicode_white_space_not_pythons_strip():
    # str.strip() also removes the separators U+001C-U+001F; Rust's trim() (Zuno) keeps them
    assert parse("\x1cone\x1f\n§\n\u3000two\u00a0\x85") == ["\x1cone\x1f", "two"]
    assert parse("\x1d") == ["\x1d"] and round_trips("\x1d\x1e")
    text = " \x1fkept\n§\n\u2028x"
    assert [(s.text, text[s.start : s.end]) for s in entry_spans(text)] == [("\x1fkept", "\x1fkept"), ("x", "x")]


def test_caps_count_code_points_delimiters_included():
    assert char_count([]) == 0
    assert char_count(["ab"]) == 2
    assert char_count(["ab", "é€😀"]) == 2 + 3 + 3  # characters, not bytes
    assert len(DELIMITER) == 3


def test_usage_label_matches_zuno():
    assert usage(1390, 2200) == "[63% — 1,390/2,200 chars]"
    assert usage(0, 3000) == "[0% — 0/3,000 chars]"


def test_prompt_block():
    assert render_block("global", [], 2200) == ""
    block = render_block("project", ["a", "b"], 3000)
    lines = block.split("\n")
    assert lines[0] == RULE == "═" * 46 and lines[2] == RULE
    assert lines[1] == "MEMORY (project rules) [0% — 5/3,000 chars]"
    assert block.endswith("a\n§\nb")


def test_entry_spans_are_exact():
    text = "  first  \n§\nsecond\nline\n§\n\n§\nthird"
    spans = entry_spans(text)
    assert [s.text for s in spans] == parse(text)
    assert all(text[s.start : s.end] == s.text for s in spans)
    assert [s.index for s in spans] == [0, 1, 2]


_entry = (
    st.text(st.characters(blacklist_categories=("Cs",)), min_size=1, max_size=40)
    .map(str.strip)
    .filter(lambda e: bool(e) and parse(e) == [e] and not e.startswith("§\n") and not e.endswith("\n§"))
)


@given(st.lists(_entry, max_size=6))
def test_serialize_then_parse_is_identity(entries):
    text = serialize(entries)
    assert parse(text) == entries
    assert round_trips(text)
    assert char_count(entries) == len(text)


@given(st.lists(st.sampled_from(["a", " ", "\n", "\r", "\r\n", "§", "é"]), max_size=40).map("".join))
def test_any_line_ending_reads_as_the_text_with_lf_breaks(text):
    """Zuno's rule applied to lines: the entries of a text with CRLF/CR breaks are those of the same text with
    LF breaks, and each entry's span covers exactly its bytes in the text as it is."""
    from memzoi.resident.encoding import to_lf

    spans = entry_spans(text)
    assert parse(text) == parse(to_lf(text)) == [s.text for s in spans]
    assert all(to_lf(text[s.start : s.end]) == s.text for s in spans)
    assert round_trips(text) == round_trips(to_lf(text))
