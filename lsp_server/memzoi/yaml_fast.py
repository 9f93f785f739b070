"""A fast path for the block-YAML subset that Memzoi and careful humans write in frontmatter.

Building a node tree from libyaml's events costs about 0.6 ms per record in Python, which dominates a cold check
of a large workspace. Frontmatter is nearly always a small block mapping of ``key: scalar`` lines, nested
mappings and lists indented with spaces, flow ``{}``/``[]`` and ``[a, b]`` lists, and double- or single-quoted
single-line strings. This module parses exactly that subset with a few regular expressions and returns the same
tree (node types, values and spans) as :func:`memzoi.yaml12.load`. Anything outside the subset — comments after
values, anchors, tags, multi-line scalars, block scalars, tabs, duplicate keys, unusual characters — returns
``None`` and the caller uses the full parser, which also reports every finding. A property test checks that both
paths agree wherever the fast path answers.
"""

from __future__ import annotations

import json
import re
from functools import lru_cache

from .yaml12 import PlainScalar, YMap, YNode, YScalar, YSeq, resolve_plain

# Keys and most plain values repeat across a workspace (`kind`, `memory`, `active`, `repo`…): resolve each
# spelling once. resolve_plain is pure and returns immutable values, so sharing results is safe.
_resolve = lru_cache(maxsize=8192)(resolve_plain)

# Character classes are written as regex escapes. _HIGH: what YAML accepts raw above ASCII, minus the characters
# libyaml folds as line breaks (NEL U+0085, LS U+2028, PS U+2029) and the BOM.
_HIGH = r"\xa0-\u2027\u202a-\ud7ff\ue000-\ufefe\uff00-\ufffd\U00010000-\U0010ffff"
_LINE = re.compile(r"[^\r\n]*")
_KEY = re.compile(r"([A-Za-z_][A-Za-z0-9_-]*):(?:[ ]+|$)")
# A plain scalar we accept: a safe first character, no '#' at all, no ": ", no trailing ':'.
_PLAIN = re.compile(r"[A-Za-z0-9_./~+=^$()<;\\" + _HIGH + r"][\x20-\x22\x24-\x7e" + _HIGH + "]*")
_PLAIN_BAD = re.compile(r": |:$")
_DQ_BODY = r'(?:[\x20\x21\x23-\x5b\x5d-\x7e' + _HIGH + r']|\\["\\bfnrt]|\\u[0-9a-fA-F]{4})*'
_DQ = re.compile('"' + _DQ_BODY + '"')
# The common case, a double-quoted string without escapes: one character class, far cheaper than _DQ's
# per-character alternation; its content is the text between the quotes.
_DQ_PLAIN = re.compile(r'"[\x20\x21\x23-\x5b\x5d-\x7e' + _HIGH + r']*"')
_SQ = re.compile(r"'(?:[\x20-\x26\x28-\x7e" + _HIGH + "]|'')*'")
# Flow items: a double-quoted string, or a plain scalar without flow indicators, quotes, '#' or ':'.
_FLOW_ITEM = re.compile(
    r'[ ]*(?:("' + _DQ_BODY + r'")|([A-Za-z0-9_./~+=^$()<;\x2d' + _HIGH + r"][\x20\x21\x24-\x26\x28-\x2b\x2d-\x39\x3b-\x5a\x5c\x5e-\x7a\x7c\x7e"
    + _HIGH + r"]*?))[ ]*(?=,|\])"
)


class _Fallback(Exception):
    """The text leaves the subset: use the full parser."""


class _Lines:
    """The frontmatter split into ``(start offset, indent, content start, content end)`` lines."""

    def __init__(self, text: str, start: int, end: int) -> None:
        self.text = text
        self.items: list[tuple[int, int, int, int]] = []
        pos = start
        while pos < end:
            m = _LINE.match(text, pos, end)
            line_end = m.end()
            content = line_end
            while content > pos and text[content - 1] == " ":
                content -= 1
            indent = pos
            while indent < content and text[indent] == " ":
                indent += 1
            if indent < content:
                if text[indent] == "#":
                    pass  # a comment line: skipped by YAML
                elif text[indent] == "\t" or "\t" in text[pos:indent]:
                    raise _Fallback
                else:
                    self.items.append((pos, indent - pos, indent, content))
            # advance past the line break
            if line_end < end and text[line_end] == "\r":
                line_end += 1
                if line_end < end and text[line_end] == "\n":
                    line_end += 1
            elif line_end < end and text[line_end] == "\n":
                line_end += 1
            elif line_end == pos:
                line_end += 1
            pos = line_end
        self.i = 0


def fast_load(text: str, start: int, end: int) -> YNode | None:
    """Parse ``text[start:end]`` if it is inside the subset; the root node, or ``None`` to fall back.

    An empty or comment-only block also returns ``None`` (the full parser handles it).
    """
    try:
        lines = _Lines(text, start, end)
        if not lines.items or lines.items[0][1] != 0:
            return None
        node = _block(lines, 0)
        if lines.i != len(lines.items):
            return None
        return node
    except _Fallback:
        return None


def _block(lines: _Lines, indent: int) -> YNode:
    _, ind, cs, _ = lines.items[lines.i]
    if ind != indent:
        raise _Fallback
    if _is_item(lines.text, cs, lines.items[lines.i][3]):
        return _sequence(lines, indent)
    return _mapping(lines, indent)


def _mapping(lines: _Lines, indent: int, first_key_at: int | None = None) -> YMap:
    text = lines.text
    mapping = YMap({}, -1, -1)
    last_end = -1
    while lines.i < len(lines.items):
        _, ind, cs, ce = lines.items[lines.i]
        key_at = cs
        if first_key_at is not None and not mapping.order:
            key_at = first_key_at  # the first key of a "- key: value" item sits after the dash
        elif ind != indent:
            if ind < indent:
                break
            raise _Fallback
        m = _KEY.match(text, key_at, ce)
        if not m:
            raise _Fallback
        name = m.group(1)
        if not isinstance(_resolve(name), str) or name in mapping.entries:
            raise _Fallback
        key = YScalar(PlainScalar(name, name), key_at, key_at + len(name), "")
        if mapping.start < 0:
            mapping.start = key_at
        lines.i += 1
        value_at = m.end()
        if value_at < ce:
            value = _inline_value(text, value_at, ce)
        else:
            value = _nested(lines, indent, key)
        mapping.entries[name] = (key, value)
        mapping.order.append(key)
        last_end = max(last_end, value.end)
    mapping.end = last_end
    return mapping


def _nested(lines: _Lines, indent: int, key: YScalar) -> YNode:
    """Value of ``key:`` with nothing after the colon: an indented block, a same-indent sequence, or null."""
    if lines.i < len(lines.items):
        _, ind, cs, ce = lines.items[lines.i]
        if ind > indent:
            return _block(lines, ind)
        if ind == indent and _is_item(lines.text, cs, ce):
            return _sequence(lines, indent)
    # An empty value: libyaml puts the (empty) plain scalar right after the colon.
    return YScalar(None, key.end + 1, key.end + 1, "")


def _is_item(text: str, cs: int, ce: int) -> bool:
    return text.startswith("- ", cs) or (text[cs] == "-" and cs + 1 == ce)


def _sequence(lines: _Lines, indent: int) -> YSeq:
    text = lines.text
    seq = YSeq([], -1, -1)
    while lines.i < len(lines.items):
        _, ind, cs, ce = lines.items[lines.i]
        if ind != indent or not _is_item(text, cs, ce):
            if ind <= indent:
                break
            raise _Fallback
        if seq.start < 0:
            seq.start = cs
        at = cs + 1
        while at < ce and text[at] == " ":
            at += 1
        if at >= ce:
            raise _Fallback  # "-" alone (null item or nested block): leave to the full parser
        m = _KEY.match(text, at, ce)
        if m:
            # "- key: value": a mapping whose further keys sit at the item's content column.
            item_indent = at - (cs - ind)
            item: YNode = _mapping(lines, item_indent, first_key_at=at)
        else:
            item = _inline_value(text, at, ce)
            lines.i += 1
        seq.items.append(item)
        seq.end = item.end
    return seq


def _inline_value(text: str, at: int, ce: int) -> YNode:
    c = text[at]
    if c == '"':
        m = _DQ_PLAIN.match(text, at, ce)
        if m is not None and m.end() == ce:
            return YScalar(text[at + 1:ce - 1], at, ce, '"')
        m = _DQ.match(text, at, ce)
        if not m or m.end() != ce:
            raise _Fallback
        return YScalar(json.loads(m.group()), at, ce, '"')
    if c == "'":
        m = _SQ.match(text, at, ce)
        if not m or m.end() != ce:
            raise _Fallback
        return YScalar(m.group()[1:-1].replace("''", "'"), at, ce, "'")
    if c == "{":
        if text[at:ce] in ("{}", "{ }"):
            node = YMap({}, at, ce, True)
            return node
        raise _Fallback
    if c == "[":
        return _flow_seq(text, at, ce)
    m = _PLAIN.match(text, at, ce)
    if not m or m.end() != ce or _PLAIN_BAD.search(text, at, ce):
        raise _Fallback
    raw = text[at:ce]
    resolved = _resolve(raw)
    return YScalar(None if resolved is None else PlainScalar(raw, resolved), at, ce, "")


def _flow_seq(text: str, at: int, ce: int) -> YSeq:
    if text[ce - 1] != "]":
        raise _Fallback
    seq = YSeq([], at, ce, True)
    pos = at + 1
    if text[pos:ce - 1].strip(" ") == "":
        return seq
    while True:
        m = _FLOW_ITEM.match(text, pos, ce)
        if not m:
            raise _Fallback
        if m.group(1) is not None:
            s = m.start(1)
            seq.items.append(YScalar(json.loads(m.group(1)), s, m.end(1), '"'))
        else:
            raw = m.group(2)
            if not raw or raw[0] == "-" and (len(raw) == 1 or raw[1] == " "):
                raise _Fallback
            resolved = _resolve(raw)
            s = m.start(2)
            seq.items.append(YScalar(None if resolved is None else PlainScalar(raw, resolved), s, s + len(raw), ""))
        pos = m.end()
        if text[pos] == "]":
            if pos != ce - 1:
                raise _Fallback
            return seq
        pos += 1  # the comma
