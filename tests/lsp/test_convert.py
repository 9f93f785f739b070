"""Core spans to LSP positions (``memzoi_lsp.convert.TextMap``): each position equals what pygls's codec gives over
the text's lines split the LSP way, in every position encoding (the map cuts out only the offset's own line)."""

from __future__ import annotations

from hypothesis import given, settings, strategies as st
from pygls.workspace import PositionCodec, ServerTextPosition

from memzoi.read.text import LineIndex
from memzoi_lsp.convert import TextMap, placer

_TEXT = st.lists(st.sampled_from(["a", "é", "😀", "\n", "\r", "\r\n", "\u2028", " ", "\t"]), max_size=30).map("".join)


@settings(max_examples=200, deadline=None)
@given(_TEXT, st.integers(-3, 60), st.sampled_from(["utf-8", "utf-16", "utf-32"]))
def test_each_position_is_the_codec_s_over_all_lines(text, offset, encoding):
    tm = TextMap(text, encoding)
    line, col = tm.index.position(offset)
    lines = tm.lines  # all lines, the LSP way
    want = PositionCodec(encoding).position_to_client_units(lines, ServerTextPosition(line, min(col, len(lines[line]))))
    fresh = TextMap(text, encoding)  # no line list made yet: the one-line route
    assert fresh.position(offset) == want
    assert tm.position(offset) == want  # the line list made: the same
    assert fresh.offset(want) == tm.offset(want)


_ASCII = st.lists(st.sampled_from(["a", "b", " ", "\n", "\r", "\r\n", "\t"]), max_size=30).map("".join)


@settings(max_examples=300, deadline=None)
@given(_ASCII, st.integers(-3, 40), st.sampled_from(["utf-8", "utf-16", "utf-32"]))
def test_an_ascii_text_s_line_starts_place_an_offset_inside_its_line_as_the_text_does(text, offset, encoding):
    """What a compact verdict's findings are placed by when its text is not read
    (``FirstStage.plain_lines``): the line starts alone, for offsets inside their line whatever its break."""
    full = LineIndex(text)
    starts_only = LineIndex.from_starts(full.starts, len(text))
    if full.inside_line(offset):
        assert placer(starts_only, encoding)(offset) == TextMap(text, encoding).place(offset)
    line, col = full.position(offset)
    if col > len(TextMap(text, encoding).lines[line]):  # a column the text clamps: never taken from starts alone
        assert not full.inside_line(offset)


def test_an_offset_on_a_line_s_last_character_is_not_inside_it():
    # The break's last character: "\n" of "ab\n" is column 2, "\n" of "ab\r\n" column 3 clamped to 2.
    assert not LineIndex("ab\ncd").inside_line(2)
    assert not LineIndex("ab\r\ncd").inside_line(3)
    assert not LineIndex("ab\rcd").inside_line(2)
    assert LineIndex("ab\ncd").inside_line(1)
    assert LineIndex("ab\r\ncd").inside_line(2)  # the \r: the end of the line's content either way
    assert LineIndex("ab\ncd").inside_line(5)  # the last line has no break
