"""The one spelling of file-derived text for a terminal (:mod:`memzoi.base.printable`): every control, bidi and
other non-printing character and every undecodable byte of a file name is escaped, the result is one printable
line, and the spelling reads back to the original (lossless)."""

from __future__ import annotations

import os

from hypothesis import given, strategies as st

from memzoi.base.printable import BIDI_CONTROLS, lossless, printable, printable_block, unescaped

#: Characters a hostile file name or title uses, beside any text hypothesis draws.
_HOSTILE = st.sampled_from(
    ["\x1b", "\x07", "\n", "\r", "\t", "\x00", "\x7f", "\x85", "\x9b", "\u2028", "\ufeff", "\u200b", "\\", "x", "u"]
    + sorted(BIDI_CONTROLS)
    + ["\udce9", "\udc80", "\udcff", "\ud800", "\U000e0001", "\u00a0", "é", "😀"]
)
_TEXT = st.lists(st.one_of(st.characters(), _HOSTILE, st.text(max_size=3)), max_size=20).map("".join)


def test_the_escapes_of_the_defect_report():
    name = "odd \x1b]0;PWNED\x07\x1b[2J name\nx\u202e.md"
    assert printable(name) == "odd \\x1b]0;PWNED\\x07\\x1b[2J name\\x0ax\\u202e.md"
    assert printable(os.fsdecode(b"caf\xe9.md")) == "caf\\xe9.md"  # the byte, never U+FFFD
    assert printable("\x85\u00a0\U000e0001") == "\\u0085\\u00a0\\U000e0001"  # C1 as \u: \xHH >= 80 is a byte
    for c in BIDI_CONTROLS:
        assert printable(c) == f"\\u{ord(c):04x}"


def test_plain_text_is_unchanged_and_a_backslash_is_doubled_only_before_an_escape():
    for text in ["", "plain/ascii-name.md", "café 😀 名前", "C:\\dir\\file", "a\\", "regex \\d+"]:
        assert printable(text) == text
    assert printable("a\\x1b") == "a\\\\x1b"  # a literal backslash-x: not read back as ESC
    assert printable("a\\\x1b") == "a\\\\\\x1b"


@given(_TEXT)
def test_printable_is_one_printable_line_and_lossless(text):
    out = printable(text)
    assert out.isprintable()  # no control, bidi, format, separator or surrogate left; one line
    assert not BIDI_CONTROLS & set(out)
    assert unescaped(out) == text


@given(st.binary(max_size=40))
def test_a_file_name_round_trips_to_its_bytes(raw):
    assert os.fsencode(unescaped(printable(os.fsdecode(raw)))) == raw


@given(_TEXT)
def test_lossless_leaves_utf8_alone_and_spells_undecodable_bytes(text):
    out = lossless(text)
    out.encode("utf-8")  # raises on a lone surrogate: JSON with ensure_ascii=False and SQLite take it
    if any("\ud800" <= c <= "\udfff" for c in text):
        assert unescaped(out) == text
    else:
        assert out == text  # a valid UTF-8 path is given as it is; its controls are JSON's to escape


@given(_TEXT)
def test_printable_block_keeps_lines_and_tabs_only(text):
    out = printable_block(text)
    assert out.count("\n") == text.count("\n")
    assert out.replace("\n", "").replace("\t", "").isprintable()
