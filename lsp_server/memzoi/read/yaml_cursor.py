"""Which frontmatter value a cursor is in: the key path of the value being typed at an offset, for the editor's
value completion.

One function, :func:`value_path_at`, with two modes:

* **positioned** — when the frontmatter parses to a mapping, the answer comes from the tree of
  :mod:`memzoi.read.yaml12` (the spans of every key and value), so block scalars, flow collections, list items and
  comments are judged exactly as the reader reads them;
* **tolerant** — while the text is still being typed and the YAML does not parse (or the block is not closed
  yet), the path is guessed from the lines above the cursor: the cursor's own ``key:`` or ``- item`` line, and
  the keys of lower indentation above it.

Paths are tuples of keys and list indexes, as :func:`memzoi.read.yaml12.locate` and :mod:`memzoi.judge.schemainfo` take
them. A cursor on a key, in a comment, in the body or outside any value gets ``None``.
"""

from __future__ import annotations

import re
from typing import Any

from .document import Document
from .yaml12 import YAlias, YMap, YNode, YScalar, YSeq

Path = tuple[Any, ...]

# `key:` (optionally after `- `) at the start of a line, followed by a space or the end of the line.
_KEY_LINE = re.compile(r"^(?P<indent>[ ]*)(?P<dash>-[ ]+)?(?P<key>[A-Za-z_][A-Za-z0-9_]*)[ ]*:(?:[ ]+|$)")
_ITEM_LINE = re.compile(r"^(?P<indent>[ ]*)-(?:[ ]+|$)")


def value_path_at(doc: Document, offset: int) -> Path | None:
    """The key path of the frontmatter value at code-point ``offset`` of ``doc.text``, or ``None``.

    ``lane: |`` → ``("lane",)``; the second item of ``supersedes:`` → ``("supersedes", 1)``; ``kind`` inside
    ``scope: {kind: repo}`` → ``("scope", "kind")``; a block scalar's lines → its key. A cursor right after a
    ``key:`` whose value is still empty is in that value. Positioned when the frontmatter parses to a mapping,
    tolerant (from indentation) otherwise; never raises.
    """
    if not 0 <= offset <= len(doc.text):
        return None
    if doc.mapping is not None and doc.fm_start is not None and doc.fm_end is not None:
        if not doc.fm_start <= offset <= doc.fm_end:
            return None
        return _in_map(doc.text, doc.mapping, offset, (), len(doc.text))
    return _tolerant(doc.text, offset)


# -- positioned mode -------------------------------------------------------------------------------------------


def _line_end(text: str, offset: int) -> int:
    """End of the content of the line holding ``offset`` (before its line break)."""
    ends = [i for i in (text.find("\n", offset), text.find("\r", offset)) if i >= 0]
    return min(ends) if ends else len(text)


def _scalar_hi(text: str, node: YScalar | YAlias, limit: int) -> int:
    """Last offset still inside a scalar value (or an alias, ``*name``): its end without the trailing line breaks of a block scalar; an
    empty (null) value reaches the end of its line, short of ``limit`` (the next sibling or the container's
    end), so the cursor after ``key: `` is in it."""
    if node.start == node.end:
        return min(_line_end(text, node.end), limit)
    return node.start + len(text[node.start : node.end].rstrip("\r\n"))


def _in_node(text: str, node: YNode, offset: int, path: Path, limit: int) -> Path | None:
    """The path of ``offset`` inside the value ``node`` (reached by ``path``), or ``None``."""
    if isinstance(node, YMap):
        return _in_map(text, node, offset, path, limit)
    if isinstance(node, YSeq):
        return _in_seq(text, node, offset, path, limit)
    if node.start <= offset <= _scalar_hi(text, node, limit):
        return path
    return None


def _container_limit(node: YNode, limit: int) -> int:
    """A flow collection ends at its closing bracket; a block one where its parent says."""
    return node.end - 1 if getattr(node, "flow", False) else limit


def _in_map(text: str, node: YMap, offset: int, path: Path, limit: int) -> Path | None:
    keys = node.order
    inner = _container_limit(node, limit)
    for i, key in enumerate(keys):
        if key.start <= offset <= key.end:
            return None  # on the key itself
        entry = node.entries.get(key.value) if isinstance(key.value, str) else None
        if entry is None or entry[0] is not key:
            continue  # a duplicate or non-string key: the tree holds no value for it
        value = entry[1]
        nxt = keys[i + 1].start if i + 1 < len(keys) else inner
        if offset <= key.end or offset > max(value.end, nxt):
            continue
        found = _in_node(text, value, offset, path + (key.value,), min(nxt, inner))
        if found is not None:
            return found
        # After `key:` on the key's own line, before a nested block starts: the key's value.
        colon = text.find(":", key.end)
        if 0 <= colon < offset <= min(_line_end(text, key.end), nxt) and offset < value.start:
            return path + (key.value,)
    return None


def _in_seq(text: str, node: YSeq, offset: int, path: Path, limit: int) -> Path | None:
    items = node.items
    inner = _container_limit(node, limit)
    for i, item in enumerate(items):
        nxt = items[i + 1].start if i + 1 < len(items) else inner
        found = _in_node(text, item, offset, path + (i,), min(nxt, inner))
        if found is not None:
            return found
    if node.flow and node.start < offset <= inner:
        # Between items of `[a, b]`: the index of the item being typed.
        return path + (sum(1 for it in items if it.end <= offset),)
    return None


# -- tolerant mode ---------------------------------------------------------------------------------------------


def _lines_before(text: str, offset: int) -> tuple[str, list[str]] | None:
    """The cursor's line up to the cursor, and the frontmatter lines above it (nearest first); ``None`` when the
    cursor is not inside a frontmatter block (the text does not open with ``---``, or the block closed above)."""
    lines = text[:offset].replace("\r\n", "\n").replace("\r", "\n").split("\n")
    if len(lines) < 2 or lines[0].lstrip("\ufeff").rstrip() != "---":
        return None
    above = lines[1:-1]
    if any(line.rstrip() == "---" for line in above):
        return None  # the block closed above the cursor: the cursor is in the body
    return lines[-1], above[::-1]


def _elements(line: str) -> list[tuple[str, int, str]]:
    """What a line holds, innermost first: ``("key", column, name)`` and ``("item", column, "")`` for a dash;
    ``  - path: a`` gives ``[("key", 4, "path"), ("item", 2, "")]``. Other lines (text, comments) give ``[]``."""
    m = _KEY_LINE.match(line)
    if m:
        dash = m.group("dash") or ""
        indent = len(m.group("indent"))
        out = [("key", indent + len(dash), m.group("key"))]
        return out + [("item", indent, "")] if dash else out
    item = _ITEM_LINE.match(line)
    return [("item", len(item.group("indent")), "")] if item else []


def _in_comment(rest: str) -> bool:
    """Whether the value text ``rest`` before the cursor has started a comment (``#`` after a space)."""
    return re.search(r"(^|[ \t])#", rest) is not None


def _own(line: str) -> tuple[list[Any], list[tuple[str, int, str]]] | None:
    """The cursor line's own path part and the line's elements (:func:`_elements`), or ``None`` when the cursor
    is not in a value (on a key, in a comment, in text)."""
    m = _KEY_LINE.match(line)
    if m:
        rest = line[m.end() :]
        if _in_comment(rest):
            return None
        own: list[Any] = [m.group("key")]
        flow = re.match(r"^\[([^\[\]{}]*)$", rest)
        if flow:  # typing an item of `key: [a, b`
            own.append(flow.group(1).count(","))
        return own, _elements(line)
    item = _ITEM_LINE.match(line)
    if item and ":" not in line[item.end() :] and not _in_comment(line[item.end() :]):
        return [], _elements(line)
    return None


def _tolerant(text: str, offset: int) -> Path | None:
    got = _lines_before(text, offset)
    if got is None:
        return None
    line, above = got
    own = _own(line)
    if own is None:
        return None
    path, elements = own
    # Climb from the cursor's element (a key at a column, or a list item at a column with its index so far) to
    # the top-level key, one containing element at a time.
    kind, col, _ = elements[0]
    index = 0
    for element in elements[1:] + [e for prev in above for e in _elements(prev)]:
        if kind == "key" and col == 0:
            break
        ekind, ecol, name = element
        if kind == "key":
            if ekind == "key" and ecol < col:
                path.insert(0, name)
                col = ecol
            elif ekind == "item" and ecol < col:
                kind, col, index = "item", ecol, 0
        elif ekind == "item" and ecol == col:
            index += 1  # an earlier item of the same list
        elif ecol < col or (ekind == "key" and ecol == col):
            path.insert(0, index)
            kind, col, index = ekind, ecol, 0
            if ekind == "key":
                path.insert(0, name)
    if kind == "item":
        path.insert(0, index)
    return tuple(path)
