"""Core spans to LSP positions (``memzoi_lsp.convert.TextMap``): each position equals what pygls's codec gives over
the text's lines split the LSP way, in every position encoding (the map cuts out only the offset's own line)."""

from __future__ import annotations

from hypothesis import given, settings, strategies as st
from pygls.workspace import PositionCodec, ServerTextPosition

from memzoi_lsp.convert import TextMap

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
