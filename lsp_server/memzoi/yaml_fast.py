"""A fast path for the block-YAML subset that Memzoi and careful humans write in frontmatter.

Building a node tree from libyaml's events costs about 0.6 ms per record in Python, which dominates a cold check
of a large workspace. Frontmatter is nearly always a small block mapping of ``key: scalar`` lines, nested
mappings and lists indented with spaces, flow ``{}``/``[]`` and ``[a, b]`` lists, and double- or single-quoted
single-line strings. This module parses exactly that subset and returns the same tree (node types, values and
spans) as :func:`memzoi.yaml12.load`. It runs for every file of a workspace check, so lines are split with
``str.split`` and classified once per distinct line, and key and plain value objects are shared per spelling. Anything outside the subset — comments after
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


# One line of the subset: indentation, an optional item dash, an optional `key:` and the rest of the line, then
# its line break. Every part is optional, so consecutive matches tile the text line by line; whether a line is
# acceptable is decided in _rows. The key alternative mirrors a `key:` followed by spaces or the line end.
_ROW = re.compile(r"([ ]*)(-[ ]+)?(?:([A-Za-z_][A-Za-z0-9_-]*):(?:[ ]+|(?=[\r\n]|\Z)))?([^\r\n]*)(?:\r\n|\r|\n)?")

#: A row: ``(indent, content start, is an item, key or None, key start, value start, value end)``; the value span
#: is the rest of the line after the key (or the dash), trailing spaces excluded; an item without a key has its
#: key start at its value start.
_KEY_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_-]*")
_Row = tuple[int, int, bool, "str | None", int, int, int]

# Memoised per spelling, bounded by clearing (workspaces repeat a few hundred keys and values; unique values
# such as ids and timestamps would otherwise grow the tables without end). PlainScalar is never mutated after
# construction, so one object can stand for a spelling in every document.
_CACHE_LIMIT = 8192
_MISS = object()
_INVALID = object()
_keys: dict[str, "PlainScalar | None"] = {}  # key spelling -> key value, None when it is not a string key
_plains: dict[str, object] = {}  # plain value spelling -> PlainScalar, None (null) or _INVALID (outside the subset)
# Whole lines repeat too (`kind: memory`, `  route: repository_materialization`): line -> _line_shape result.
_shapes: dict[str, object] = {}


def _rows(text: str, start: int, end: int) -> list[_Row] | None:
    """The non-blank, non-comment lines of ``text[start:end]`` as rows; ``None`` when a line is neither a
    ``key:`` line nor a ``- `` item (tabs in the indentation, a lone ``-``, flow or quoted keys…)."""
    if "\r" in text[start:end]:
        return _rows_any_break(text, start, end)
    rows: list[_Row] = []
    pos = start
    for line in text[start:end].split("\n"):
        shape = _shapes.get(line, _MISS)
        if shape is _MISS:
            shape = _line_shape(line)
            if len(_shapes) >= _CACHE_LIMIT:
                _shapes.clear()
            _shapes[line] = shape
        if shape:
            indent, dash, name, key_at, vs, ve = shape
            rows.append((indent, pos + indent, dash, name, pos + key_at, pos + vs, pos + ve))
        elif shape is None:
            return None
        pos += len(line) + 1
    return rows


def _line_shape(line: str) -> tuple[int, bool, str | None, int, int, int] | tuple[()] | None:
    """One line (without its break) as ``(indent, is an item, key or None, key start, value start, value end)``,
    offsets from the line start (without a key, the key start is the value start); ``()`` for a blank or comment
    line; ``None`` when the line is neither a ``key:`` line nor an item."""
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
    name, colon, value = rest.partition(":")
    if colon and (not value or value[0] == " ") and _KEY_NAME.fullmatch(name):
        return indent, dash, name, rest_at, end - len(value.lstrip(" ")), end
    if dash:
        return indent, True, None, rest_at, rest_at, end
    return None  # neither a `key:` line nor an item (a tab in the indentation, a flow key…)


def _rows_any_break(text: str, start: int, end: int) -> list[_Row] | None:
    """:func:`_rows` for text with ``\\r\\n`` or ``\\r`` line breaks, one regular expression match per line."""
    rows: list[_Row] = []
    for m in _ROW.finditer(text, start, end):
        indent, dash, key, value = m.groups()
        vs, ve = m.span(4)
        if value[-1:] == " ":
            ve = vs + len(value.rstrip(" "))
        if key is None:
            if dash is None:
                if vs == ve or value[0] == "#":
                    continue
                return None
            if vs == ve:
                return None
            rows.append((len(indent), m.start() + len(indent), True, None, vs, vs, ve))
        else:
            if vs == ve:
                vs = ve = m.end(3) + 1  # no value: both ends at the colon's end, the trimmed line end
            rows.append((len(indent), m.start() + len(indent), dash is not None, key, m.start(3), vs, ve))
    return rows


def fast_load(text: str, start: int, end: int) -> YNode | None:
    """Parse ``text[start:end]`` if it is inside the subset; the root node, or ``None`` to fall back.

    An empty or comment-only block also returns ``None`` (the full parser handles it).
    """
    rows = _rows(text, start, end)
    if not rows or rows[0][0] != 0:
        return None
    try:
        node, i = _block(text, rows, 0, 0)
    except _Fallback:
        return None
    return node if i == len(rows) else None


def _block(text: str, rows: list[_Row], i: int, indent: int) -> tuple[YNode, int]:
    """The block starting at row ``i`` (which must sit at ``indent``) and the index of the row after it."""
    row = rows[i]
    if row[0] != indent:
        raise _Fallback
    if row[2]:
        return _sequence(text, rows, i, indent)
    return _mapping(text, rows, i, indent, -1)


def _key_value(name: str) -> PlainScalar:
    value = _keys.get(name, _MISS)
    if value is _MISS:
        resolved = _resolve(name)
        value = PlainScalar(name, name) if isinstance(resolved, str) else None
        if len(_keys) >= _CACHE_LIMIT:
            _keys.clear()
        _keys[name] = value
    if value is None:
        raise _Fallback  # `true:`, `null:`…: a non-string key, reported by the full parser
    return value  # type: ignore[return-value]


def _mapping(text: str, rows: list[_Row], i: int, indent: int, first_key_at: int) -> tuple[YMap, int]:
    """A block mapping at ``indent``; ``first_key_at`` >= 0 when its first key follows a ``- `` on row ``i``."""
    mapping = YMap({}, -1, -1)
    entries = mapping.entries
    order = mapping.order
    last_end = -1
    n = len(rows)
    while i < n:
        ind, _, dash, name, key_at, vs, ve = rows[i]
        if first_key_at >= 0 and not order:
            pass  # the first key of a "- key: value" item sits after the dash
        elif ind != indent:
            if ind < indent:
                break
            raise _Fallback
        elif dash:
            raise _Fallback
        if name is None or name in entries:
            raise _Fallback
        key_value = _keys.get(name) or _key_value(name)
        key = YScalar(key_value, key_at, key_at + len(name), "")
        if mapping.start < 0:
            mapping.start = key_at
        i += 1
        if vs < ve:
            value = _inline_value(text, vs, ve)
        else:
            value, i = _nested(text, rows, i, indent, key)
        entries[name] = (key, value)
        order.append(key)
        if value.end > last_end:
            last_end = value.end
    mapping.end = last_end
    return mapping, i


def _nested(text: str, rows: list[_Row], i: int, indent: int, key: YScalar) -> tuple[YNode, int]:
    """Value of ``key:`` with nothing after the colon: an indented block, a same-indent sequence, or null."""
    if i < len(rows):
        row = rows[i]
        if row[0] > indent:
            return _block(text, rows, i, row[0])
        if row[0] == indent and row[2]:
            return _sequence(text, rows, i, indent)
    # An empty value: libyaml puts the (empty) plain scalar right after the colon.
    return YScalar(None, key.end + 1, key.end + 1, ""), i


def _sequence(text: str, rows: list[_Row], i: int, indent: int) -> tuple[YSeq, int]:
    """A block sequence of ``- `` items at ``indent``."""
    seq = YSeq([], -1, -1)
    items = seq.items
    n = len(rows)
    while i < n:
        ind, cs, dash, name, key_at, vs, ve = rows[i]
        if ind != indent or not dash:
            if ind <= indent:
                break
            raise _Fallback
        if seq.start < 0:
            seq.start = cs
        item: YNode
        if name is not None:
            # "- key: value": a mapping whose further keys sit at the item's content column.
            item, i = _mapping(text, rows, i, key_at - (cs - ind), key_at)
        else:
            item = _inline_value(text, vs, ve)
            i += 1
        items.append(item)
        seq.end = item.end
    return seq, i


def _inline_value(text: str, at: int, ce: int) -> YNode:
    c = text[at]
    if c == '"':
        if ce - at >= 2 and text[ce - 1] == '"':
            content = text[at + 1:ce - 1]
            # Printable ASCII without quotes or escapes is exactly the common case of _DQ_PLAIN, and these
            # str checks run in C without a regular expression (isascii is constant time).
            if content.isascii() and content.isprintable() and '"' not in content and "\\" not in content:
                return YScalar(content, at, ce, '"')
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
    raw = text[at:ce]
    value = _plains.get(raw, _MISS)
    if value is _MISS:
        if _PLAIN.fullmatch(raw) and not _PLAIN_BAD.search(raw):
            resolved = _resolve(raw)
            value = None if resolved is None else PlainScalar(raw, resolved)
        else:
            value = _INVALID
        if len(_plains) >= _CACHE_LIMIT:
            _plains.clear()
        _plains[raw] = value
    if value is _INVALID:
        raise _Fallback
    return YScalar(value, at, ce, "")


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
