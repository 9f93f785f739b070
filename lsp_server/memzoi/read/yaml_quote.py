"""Quoting a YAML scalar value: the double-quoted form Memzoi's renderer writes (:func:`quote_string`, a JSON string
literal with what YAML forbids raw escaped) and the "quote this value" fix of a ``key: value`` line
(:func:`quote_fix`) that the YAML reader (:mod:`memzoi.read.yaml12`) offers on a syntax error.
"""

from __future__ import annotations

import json
import re

from ..base.findings import Fix, TextEdit

_KEY_LINE = re.compile(r"^(?P<indent>[ ]*)(?:- )?(?P<key>[^\s:#][^:#]*?):[ \t]+(?P<value>\S.*?)[ \t]*$")


# Escaped: what YAML forbids raw, plus NEL/LS/PS, which libyaml would fold as line breaks inside a quoted scalar.
_NON_PRINTABLE = re.compile("[^\t\n\r\x20-\x7e\xa0-\u2027\u202a-\ud7ff\ue000-\ufefe\uff00-\ufffd\U00010000-\U0010ffff]")


def quote_string(value: str) -> str:
    """``value`` as a YAML double-quoted scalar: a JSON string literal (what Memzoi's renderer writes) with every
    character YAML forbids unescaped or folds (C0/C1 controls, DEL, NEL, U+2028/9, BOM, surrogates) written as ``\\uXXXX``."""
    out = json.dumps(value, ensure_ascii=False)
    return _NON_PRINTABLE.sub(lambda m: f"\\u{ord(m.group()):04x}" if ord(m.group()) <= 0xFFFF else m.group(), out)


def quote_fix(text: str, line_start: int, line_end: int) -> Fix | None:
    """A "quote this value" fix for a ``key: value`` line spanning ``text[line_start:line_end]``.

    The value is rewritten as a JSON string literal, which is a valid YAML double-quoted scalar with the same
    content (Memzoi's renderer quotes the same way). ``None`` when the line is not a simple key/value pair or
    the value is already quoted.
    """
    m = _KEY_LINE.match(text[line_start:line_end])
    if not m:
        return None
    value = m.group("value")
    if value[0] in "\"'|>" or value.startswith("#"):
        return None
    # A trailing comment is only a comment after whitespace; keep it out of the quoted value.
    cut = re.search(r"[ \t]#", value)
    if cut:
        value = value[: cut.start()].rstrip()
    start = line_start + m.start("value")
    key = m.group("key").strip()
    return Fix(f"Quote the value of `{key}`", (TextEdit(start, start + len(value), quote_string(value)),))
