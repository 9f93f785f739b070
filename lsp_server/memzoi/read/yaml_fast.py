"""A fast path for the block-YAML subset that Memzoi and careful humans write in frontmatter.

Building a node tree from libyaml's events costs about 0.6 ms per record in Python, which dominates a cold check
of a large workspace. Frontmatter is nearly always a small block mapping of ``key: scalar`` lines, nested
mappings and lists indented with spaces, flow ``{}``/``[]`` and ``[a, b]`` lists, and double- or single-quoted
single-line strings. This module parses exactly that subset and returns the same tree (node types, values and
spans) as :func:`memzoi.read.yaml12.load`. It runs for every file of a workspace check, so lines are split with
``str.split`` and classified once per distinct line, and key and plain value objects are shared per spelling. Anything outside the subset — comments after
values, anchors, tags, multi-line scalars, block scalars, tabs, duplicate keys, unusual characters — returns
``None`` and the caller uses the full parser, which also reports every finding. A property test checks that both
paths agree wherever the fast path answers.
"""

from __future__ import annotations

import json
import re
from functools import lru_cache
from typing import Any

from ..base.nesting import NESTING_LIMIT
from .yaml_tree import PlainScalar, YMap, YNode, YScalar, YSeq, resolve_plain

# Keys and most plain values repeat across a workspace (`kind`, `memory`, `active`, `repo`…): resolve each
# spelling once. resolve_plain is pure and returns immutable values, so sharing results is safe.
_resolve = lru_cache(maxsize=8192)(resolve_plain)

# Character classes are written as regex escapes. _HIGH: what YAML accepts raw above ASCII, minus the characters
# libyaml folds as line breaks (NEL U+0085, LS U+2028, PS U+2029) and the BOM.
_HIGH = r"\xa0-\u2027\u202a-\ud7ff\ue000-\ufefe\uff00-\ufffd\U00010000-\U0010ffff"
_NOT_HIGH = r"\u2028\u2029\ud800-\udfff\ufeff\ufffe\uffff"  # what _HIGH leaves out from U+00A0 on


def _high(ascii_class: str) -> str:
    """``[ascii_class + _HIGH]`` (``ascii_class``: members below U+00A0) as the negated class it equals, which
    ``re`` compiles in a third of the time (``tests/test_yaml_fast.py`` compares both on every code point)."""
    one = re.compile(f"[{ascii_class}]")
    return "[^" + "".join(f"\\x{c:02x}" for c in range(0xA0) if not one.fullmatch(chr(c))) + _NOT_HIGH + "]"


# A plain scalar we accept: a safe first character, no '#' at all, no ": ", no trailing ':'.
_PLAIN = re.compile(_high(r"A-Za-z0-9_./~+=^$()<;\\") + _high(r"\x20-\x22\x24-\x7e") + "*")
_PLAIN_BAD = re.compile(r": |:$")
# A `\uD800`–`\uDFFF` escape is left to the parser: libyaml refuses it (as Memzoi does) where json.loads would
# join a pair into one character, and yaml12 reports each lone surrogate as `invalid_encoding`.
_DQ_BODY = "(?:" + _high(r"\x20\x21\x23-\x5b\x5d-\x7e") + r'|\\["\\bfnrt]|\\u(?![dD][89a-fA-F])[0-9a-fA-F]{4})*'
_DQ = re.compile('"' + _DQ_BODY + '"')
# The common case, a double-quoted string without escapes: one character class, far cheaper than _DQ's
# per-character alternation; its content is the text between the quotes.
_DQ_PLAIN = re.compile('"' + _high(r"\x20\x21\x23-\x5b\x5d-\x7e") + '*"')
_SQ = re.compile("'(?:" + _high(r"\x20-\x26\x28-\x7e") + "|'')*'")
# Flow items: a double-quoted string, or a plain scalar without flow indicators, quotes, '#' or ':'.
_FLOW_PLAIN = _high(r"A-Za-z0-9_./~+=^$()<;\x2d") + _high(
    r"\x20\x21\x24-\x26\x28-\x2b\x2d-\x39\x3b-\x5a\x5c\x5e-\x7a\x7c\x7e"
)
_FLOW_ITEM = re.compile(r'[ ]*(?:("' + _DQ_BODY + r'")|(' + _FLOW_PLAIN + r"*?))[ ]*(?=,|\])")


class _Fallback(Exception):
    """The text leaves the subset: use the full parser."""


#: The shape of one line, offsets from the line start: ``(indent, is an item, key name or None, key value,
#: key start, value start, value end, scalar value, scalar style)``. The value span is the rest of the line after
#: the key (or the dash), trailing spaces excluded; an item without a key has its key start at its value start.
#: ``key value`` is the key's shared :class:`PlainScalar`; the scalar value and style are those of a one-line
#: scalar (style ``None`` when the line has no value or a flow collection, built per document).
_Shape = tuple[int, bool, "str | None", "PlainScalar | None", int, int, int, Any, "str | None"]
#: A row: the offset of its line's start in the text, and the line's shape.
_Row = tuple[int, _Shape]

# One line of the subset for text with \r breaks: indentation, an optional item dash, an optional `key:` and the
# rest of the line, then its line break. Every part is optional, so consecutive matches tile the text line by
# line. The key alternative mirrors a `key:` followed by spaces or the line end.
_ROW = re.compile(r"([ ]*)(-[ ]+)?(?:([A-Za-z_][A-Za-z0-9_-]*):(?:[ ]+|(?=[\r\n]|\Z)))?([^\r\n]*)(?:\r\n|\r|\n)?")
_KEY_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_-]*")

# Memoised per spelling, bounded by clearing (workspaces repeat a few hundred keys and values; unique values
# such as ids and timestamps would otherwise grow the tables without end). PlainScalar is never mutated after
# construction, so one object can stand for a spelling in every document.
_CACHE_LIMIT = 8192
# Longer lines and values are never cached (they hardly repeat, and a few huge ones must not stay in memory).
_CACHED_TEXT_MAX = 256
_MISS = object()
_INVALID = object()
_keys: dict[str, PlainScalar | None] = {}  # key spelling -> key value, None when it is not a string key
_plains: dict[str, object] = {}  # plain value spelling -> PlainScalar, None (null) or _INVALID (outside the subset)
# Whole lines repeat too (`kind: memory`, `  route: repository_materialization`): line -> _line_shape result.
_shapes: dict[str, object] = {}


def _rows(text: str, start: int, end: int) -> list[_Row] | None:
    """The non-blank, non-comment lines of ``text[start:end]`` as rows; ``None`` when a line is neither a
    ``key:`` line nor a ``- `` item (tabs in the indentation, a lone ``-``, flow or quoted keys…) or holds a
    scalar outside the subset: such a document always falls back, whatever the structure around the line."""
    if text.find("\r", start, end) >= 0:
        return _rows_any_break(text, start, end)
    rows: list[_Row] = []
    pos = start
    for line in text[start:end].split("\n"):
        shape = _shapes.get(line, _MISS)
        if shape is _MISS:
            shape = _line_shape(line)
            if len(line) <= _CACHED_TEXT_MAX:
                if len(_shapes) >= _CACHE_LIMIT:
                    _shapes.clear()
                _shapes[line] = shape
        if shape:
            rows.append((pos, shape))  # type: ignore[arg-type]  # truthy, so a _Shape: the cache holds _line_shape's
        elif shape is None:
            return None
        pos += len(line) + 1
    return rows


def _line_shape(line: str) -> _Shape | tuple[()] | None:
    """The shape of one line (without its break); ``()`` for a blank or comment line; ``None`` when the line is
    neither a ``key:`` line nor an item, or holds a non-string key or a scalar outside the subset."""
    content = line.lstrip(" ")
    if not content or content[0] == "#":
        return ()  # a blank or comment line: skipped by YAML
    indent = len(line) - len(content)
    if content[-1] == " ":
        content = content.rstrip(" ")
    end = indent + len(content)
    dash = content[0] == "-"
    if dash:
        if len(content) == 1 or content[1] != " ":
            return None  # "-" alone (null item or nested block) or "-x": leave to the full parser
        rest = content[2:].lstrip(" ")
    else:
        rest = content
    rest_at = end - len(rest)
    name, colon, after = rest.partition(":")
    try:
        if colon and (not after or after[0] == " ") and (name in _keys or _KEY_NAME.fullmatch(name)):
            raw = after.lstrip(" ")
            key = _key_value(name)
            if raw[:1] == '"' and raw[-1] == '"' and len(raw) >= 2:
                content = raw[1:-1]
                if content.isascii() and content.isprintable() and '"' not in content and "\\" not in content:
                    # The most common unique line, `title: "..."`, without the general scalar dispatch.
                    return indent, dash, name, key, rest_at, end - len(raw), end, content, '"'
            return (indent, dash, name, key, rest_at, end - len(raw), end) + _line_value(raw)
        if dash:
            return (indent, True, None, None, rest_at, rest_at, end) + _line_value(rest)
    except _Fallback:
        return None
    return None  # neither a `key:` line nor an item (a tab in the indentation, a flow key…)


def _rows_any_break(text: str, start: int, end: int) -> list[_Row] | None:
    """:func:`_rows` for text with ``\\r\\n`` or ``\\r`` line breaks, one regular expression match per line."""
    rows: list[_Row] = []
    for m in _ROW.finditer(text, start, end):
        indent, dash, key, value = m.groups()
        at = m.start()
        vs, ve = m.span(4)
        shape: _Shape
        if value[-1:] == " ":
            ve = vs + len(value.rstrip(" "))
        try:
            if key is None:
                if dash is None:
                    if vs == ve or value[0] == "#":
                        continue
                    return None
                if vs == ve:
                    return None
                shape = (len(indent), True, None, None, vs - at, vs - at, ve - at) + _line_value(text[vs:ve])
            else:
                if vs == ve:
                    vs = ve = m.end(3) + 1  # no value: both ends at the colon's end, the trimmed line end
                head = (len(indent), dash is not None, key, _key_value(key), m.start(3) - at, vs - at, ve - at)
                shape = head + _line_value(text[vs:ve])
        except _Fallback:
            return None
        rows.append((at, shape))
    return rows


def fast_load(text: str, start: int, end: int) -> YNode | None:
    """Parse ``text[start:end]`` if it is inside the subset; the root node, or ``None`` to fall back.

    An empty or comment-only block also returns ``None`` (the full parser handles it).
    """
    rows = _rows(text, start, end)
    if not rows or rows[0][1][0] != 0:
        return None
    try:
        node, i = _block(text, rows, 0, 0, 1)
    except _Fallback:
        return None
    return node if i == len(rows) else None


def _block(text: str, rows: list[_Row], i: int, indent: int, depth: int) -> tuple[YNode, int]:
    """The block starting at row ``i`` (which must sit at ``indent``) and the index of the row after it.
    ``depth`` is the block's nesting level (the root is 1). A mapping or sequence at the limit falls back (a flow
    value inside it could pass the limit, which the full parser reports as ``yaml_nesting_limit``), so this
    recursion stays bounded."""
    shape = rows[i][1]
    if shape[0] != indent:
        raise _Fallback
    if shape[1]:
        return _sequence(text, rows, i, indent, depth)
    return _mapping(text, rows, i, indent, False, depth)


def _key_value(name: str) -> PlainScalar:
    """The shared key value for the key spelling ``name``; raises :class:`_Fallback` for a non-string key."""
    value = _keys.get(name, _MISS)
    if value is _MISS:
        resolved = _resolve(name)
        value = PlainScalar(name, name) if isinstance(resolved, str) else None
        if len(_keys) >= _CACHE_LIMIT:
            _keys.clear()
        _keys[name] = value
    if value is None:
        raise _Fallback  # `true:`, `null:`…: a non-string key, reported by the full parser
    return value  # type: ignore[return-value]  # not _MISS nor None: a PlainScalar (the cache holds only those)


def _mapping(text: str, rows: list[_Row], i: int, indent: int, item: bool, depth: int) -> tuple[YMap, int]:
    """A block mapping at ``indent`` and nesting level ``depth``; ``item`` when its first key follows the ``- ``
    of row ``i``."""
    if depth >= NESTING_LIMIT:
        raise _Fallback
    mapping = YMap({}, -1, -1)
    entries = mapping.entries
    order = mapping.order
    last_end = -1
    n = len(rows)
    while i < n:
        pos, (ind, dash, name, key_value, key_at, vs, ve, scalar, style) = rows[i]
        if item and not order:
            pass  # the first key of a "- key: value" item sits after the dash
        elif ind != indent:
            if ind < indent:
                break
            raise _Fallback
        elif dash:
            raise _Fallback
        if name is None or name in entries:
            raise _Fallback
        key_at += pos
        key = YScalar(key_value, key_at, key_at + len(name), "")
        if not order:
            mapping.start = key_at
        i += 1
        value: YNode
        if style is not None:
            value = YScalar(scalar, pos + vs, pos + ve, style)
        elif vs < ve:
            value = _inline_value(text, pos + vs, pos + ve)
        else:
            value, i = _nested(text, rows, i, indent, key, depth)
        entries[name] = (key, value)
        order.append(key)
        if value.end > last_end:
            last_end = value.end
    mapping.end = last_end
    return mapping, i


def _nested(text: str, rows: list[_Row], i: int, indent: int, key: YScalar, depth: int) -> tuple[YNode, int]:
    """Value of ``key:`` (in a mapping at level ``depth``) with nothing after the colon: an indented block, a
    same-indent sequence, or null."""
    if i < len(rows):
        shape = rows[i][1]
        if shape[0] > indent:
            return _block(text, rows, i, shape[0], depth + 1)
        if shape[0] == indent and shape[1]:
            return _sequence(text, rows, i, indent, depth + 1)
    # An empty value: libyaml puts the (empty) plain scalar right after the colon.
    return YScalar(None, key.end + 1, key.end + 1, ""), i


def _sequence(text: str, rows: list[_Row], i: int, indent: int, depth: int) -> tuple[YSeq, int]:
    """A block sequence of ``- `` items at ``indent`` and nesting level ``depth``."""
    if depth >= NESTING_LIMIT:
        raise _Fallback
    seq = YSeq([], -1, -1)
    items = seq.items
    n = len(rows)
    while i < n:
        pos, (ind, dash, name, _, key_at, vs, ve, scalar, style) = rows[i]
        if ind != indent or not dash:
            if ind <= indent:
                break
            raise _Fallback
        if seq.start < 0:
            seq.start = pos + ind
        item: YNode
        if name is not None:
            # "- key: value": a mapping whose further keys sit at the item's content column.
            item, i = _mapping(text, rows, i, key_at, True, depth + 1)
        elif style is not None:
            item = YScalar(scalar, pos + vs, pos + ve, style)
            i += 1
        else:
            item = _inline_value(text, pos + vs, pos + ve)
            i += 1
        items.append(item)
        seq.end = item.end
    return seq, i


def _inline_value(text: str, at: int, ce: int) -> YNode:
    """The value written on the line itself, ``text[at:ce]``: a scalar or a flow ``{}`` or ``[...]``."""
    c = text[at]
    if c == "{":
        if text[at:ce] in ("{}", "{ }"):
            node = YMap({}, at, ce, True)
            return node
        raise _Fallback
    if c == "[":
        return _flow_seq(text, at, ce)
    value, style = _scalar(text[at:ce])
    return YScalar(value, at, ce, style)


def _scalar(raw: str) -> tuple[Any, str]:
    """``(value, style)`` of a one-line scalar ``raw`` (not a flow collection); raises :class:`_Fallback`
    outside the subset."""
    c = raw[0]
    if c == '"':
        if len(raw) >= 2 and raw[-1] == '"':
            content = raw[1:-1]
            # Printable ASCII without quotes or escapes is exactly the common case of _DQ_PLAIN, and these
            # str checks run in C without a regular expression (isascii is constant time).
            if content.isascii() and content.isprintable() and '"' not in content and "\\" not in content:
                return content, '"'
        m = _DQ_PLAIN.match(raw)
        if m is not None and m.end() == len(raw):
            return raw[1:-1], '"'
        m = _DQ.match(raw)
        if not m or m.end() != len(raw):
            raise _Fallback
        return json.loads(raw), '"'
    if c == "'":
        m = _SQ.match(raw)
        if not m or m.end() != len(raw):
            raise _Fallback
        return raw[1:-1].replace("''", "'"), "'"
    value = _plains.get(raw, _MISS)
    if value is _MISS:
        m = _PLAIN.match(raw)
        if m is not None and m.end() == len(raw) and not _PLAIN_BAD.search(raw):
            resolved = _resolve(raw)
            value = None if resolved is None else PlainScalar(raw, resolved)
        else:
            value = _INVALID
        if len(raw) <= _CACHED_TEXT_MAX:
            if len(_plains) >= _CACHE_LIMIT:
                _plains.clear()
            _plains[raw] = value
    if value is _INVALID:
        raise _Fallback
    return value, ""


def _line_value(raw: str) -> tuple[Any, str | None]:
    """What a row carries about its value ``raw``: ``(value, style)`` of a scalar, ``(None, None)`` when there
    is no value or it is a flow collection (built per document by :func:`_inline_value`); raises
    :class:`_Fallback` for a scalar outside the subset (a document holding that line always falls back)."""
    if not raw or raw[0] in "{[":
        return None, None
    return _scalar(raw)


def _flow_seq(text: str, at: int, ce: int) -> YSeq:
    if text[ce - 1] != "]":
        raise _Fallback
    seq = YSeq([], at, ce, True)
    pos = at + 1
    if text[pos : ce - 1].strip(" ") == "":
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
