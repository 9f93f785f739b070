"""Minimal rewrites of an existing record or packet: a lifecycle writer edits only what it owns.

A lifecycle change that rewrites a file (a retired target's ``status`` and ``updated``, a resolved packet's
``status`` and ``resolution``, a re-attested record's ``materialization``) changes only those top-level keys and,
when it changes them, the H1 title and the body. Every other byte is carried through in place and in order:
comments, blank lines, fields the profile accepts and ignores (a hand-written ``description``), the body, trailing
blank lines and each line's own line ending. SPEC §3 (a writer keeps the document's line-ending style) and the
project's promise that a hand edit is never overwritten.

* A changed key's lines are replaced by the canonical writer's lines (:func:`memzoi.read.render.key_lines`); a comment
  at the end of its first line is carried to the end of the new first line.
* A removed key's lines are deleted.
* A new key is inserted after the nearest key that precedes it in the canonical order (Memzoi's renderer order,
  :data:`memzoi.read.render.RECORD_ORDER`), else before the nearest key that follows it.

Where that is impossible, :func:`rewrite` raises :class:`HandEditConflict` naming the line (its 1-based number and
what kind of line it is, never its text): a comment or blank line inside the lines of a key that must be replaced
or removed, a comment after a removed key, a key written twice or away from column 0, or a frontmatter that is not
a block mapping.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from .document import Document
from .render import key_lines
from .text import rust_trim
from .yaml12 import YMap, YNode, YSeq

_LINE = re.compile(r"([^\r\n]*)(\r\n|\n|\r)?")


class HandEditConflict(Exception):
    """A line the writer does not own sits where the rewrite must change lines: ``line`` (1-based), ``kind``
    (``"a comment"``, ``"a blank line"`` …) and the owned ``key`` it sits in, if any. Carries no file text."""

    def __init__(self, line: int, kind: str, key: str | None = None) -> None:
        self.line, self.kind, self.key = line, kind, key
        super().__init__(self.describe())

    def describe(self) -> str:
        """``line 12 is a comment inside `materialization```: safe to show (names only the writer's own keys)."""
        where = f" inside `{self.key}`" if self.key else ""
        return f"line {self.line} is {self.kind}{where}"


@dataclass(frozen=True, slots=True)
class _Line:
    start: int  # offset of the first character
    stop: int  # offset after the content (before the line break)
    end: int  # offset after the line break

    def eol(self, text: str) -> str:
        return text[self.stop : self.end]


@dataclass(slots=True)
class _Field:
    key: str
    first: int  # index of the key's line
    last: int  # index of the line holding the key's last scalar character
    spans: list[tuple[int, int]]  # every scalar of the key and its value (code-point offsets)


def _split(text: str) -> list[_Line]:
    out, pos, n = [], 0, len(text)
    while pos < n:
        m = _LINE.match(text, pos)
        assert m is not None
        out.append(_Line(pos, m.end(1), m.end()))
        pos = m.end()
    return out


def _scalars(node: YNode | None, out: list[tuple[int, int]]) -> None:
    if isinstance(node, YMap):
        for k in node.order:
            out.append((k.start, k.end))
        for _, value in node.entries.values():
            _scalars(value, out)
    elif isinstance(node, YSeq):
        for item in node.items:
            _scalars(item, out)
    elif node is not None:
        out.append((node.start, node.end))


class _Frontmatter:
    """The top-level fields of ``doc``'s frontmatter, located by line."""

    def __init__(self, doc: Document) -> None:
        self.text = doc.text
        self.lines = _split(doc.text)
        self.starts = [ln.start for ln in self.lines]
        root = doc.mapping
        if root is None or doc.fm_start is None or doc.fm_close is None:
            raise HandEditConflict(1, "the start of a frontmatter that is not a YAML mapping")
        if root.flow:
            raise HandEditConflict(self.index(root.start) + 1, "the start of a frontmatter written as a flow mapping")
        self.close = doc.fm_close[0]
        self.fields: dict[str, _Field] = {}
        self.repeated: dict[str, int] = {}  # a key written twice: the line of its second occurrence
        for knode in root.order:
            name = knode.value if isinstance(knode.value, str) else str(knode.value)
            first = self.index(knode.start)
            if name in self.fields:
                self.repeated.setdefault(name, first + 1)
                continue
            spans: list[tuple[int, int]] = [(knode.start, knode.end)]
            _scalars(root.entries[knode.value][1] if knode.value in root.entries else None, spans)
            last_char = max(max(s, e - 1) for s, e in spans)
            self.fields[name] = _Field(name, first, max(first, self.index(last_char)), spans)
            if self.lines[first].start != knode.start:
                self.fields[name].first = -1 - first  # not at column 0: cannot be edited line by line

    def index(self, offset: int) -> int:
        """Index of the line holding ``offset``."""
        return max(0, bisect.bisect_right(self.starts, offset) - 1)

    def masked(self, i: int, spans: list[tuple[int, int]]) -> str:
        """Line ``i``'s content with every scalar character replaced by ``x`` (what is left is YAML syntax,
        whitespace and comments)."""
        ln = self.lines[i]
        chars = list(self.text[ln.start : ln.stop])
        for s, e in spans:
            for at in range(max(s, ln.start), min(e, ln.stop)):
                chars[at - ln.start] = "x"
        return "".join(chars)

    def covered(self, offset: int, spans: list[tuple[int, int]]) -> bool:
        return any(s <= offset < e for s, e in spans)


def _check_inner(fm: _Frontmatter, f: _Field, *, removing: bool) -> str:
    """The comment tail of ``f``'s key line to carry (``""`` when none); raises :class:`HandEditConflict` for a
    line inside ``f`` that replacing (or, with ``removing``, deleting) its lines would lose."""
    tail = ""
    for i in range(f.first, f.last + 1):
        ln = fm.lines[i]
        masked = fm.masked(i, f.spans)
        if i > f.first and not masked.strip() and not fm.covered(ln.start, f.spans):
            raise HandEditConflict(i + 1, "a blank line", f.key)
        hash_at = masked.find("#")
        if hash_at < 0:
            continue
        if i > f.first or removing:
            kind = "a comment line" if not masked[:hash_at].strip() else "a line with a comment"
            raise HandEditConflict(i + 1, kind, f.key)
        raw = fm.text[ln.start : ln.stop]
        tail = raw[len(raw[:hash_at].rstrip()) :]
    return tail


def _anchor(fm: _Frontmatter, key: str, order: tuple[str, ...]) -> int:
    """The offset where a new ``key`` goes: after the nearest existing key before it in ``order``, else before the
    nearest existing key after it, else before the closing ``---``."""
    at = order.index(key)
    for prev in reversed(order[:at]):
        f = fm.fields.get(prev)
        if f is not None and f.first >= 0:
            return fm.lines[f.last].end
    for nxt in order[at + 1 :]:
        f = fm.fields.get(nxt)
        if f is not None and f.first >= 0:
            return fm.lines[f.first].start
    return fm.close


def _neighbour_eol(fm: _Frontmatter, offset: int, fallback: str) -> str:
    i = fm.index(max(0, offset - 1))
    return fm.lines[i].eol(fm.text) if i < len(fm.lines) and fm.lines[i].eol(fm.text) else fallback


def _field_edits(
    fm: _Frontmatter, changes: Mapping[str, Any], order: tuple[str, ...], newline: str
) -> list[tuple[int, int, str]]:
    edits: list[tuple[int, int, str]] = []
    inserts: dict[int, list[tuple[int, str]]] = {}
    for key, value in changes.items():
        f = fm.fields.get(key)
        if key in fm.repeated:
            raise HandEditConflict(fm.repeated[key], "a second occurrence of the key", key)
        if f is not None and f.first < 0:
            raise HandEditConflict(-f.first, "a key that does not start at column 0", key)
        if f is None:
            if value is not None:
                anchor = _anchor(fm, key, order)
                inserts.setdefault(anchor, []).append(
                    (
                        order.index(key),
                        "".join(line + _neighbour_eol(fm, anchor, newline) for line in key_lines(key, value)),
                    )
                )
            continue
        start, end = fm.lines[f.first].start, fm.lines[f.last].end
        if value is None:
            _check_inner(fm, f, removing=True)
            edits.append((start, end, ""))
            continue
        new = key_lines(key, value)
        old = [fm.text[fm.lines[i].start : fm.lines[i].stop] for i in range(f.first, f.last + 1)]
        if new == old:
            continue
        tail = _check_inner(fm, f, removing=False)
        new[0] += tail
        eol = fm.lines[f.first].eol(fm.text) or newline
        edits.append((start, end, "".join(line + eol for line in new)))
    for anchor, items in inserts.items():
        edits.append((anchor, anchor, "".join(text for _, text in sorted(items))))
    return edits


def _body_edits(doc: Document, title: str | None, body: str | None, newline: str) -> list[tuple[int, int, str]]:
    if doc.body_start is None:
        return []
    new_body = None if body is None else rust_trim(body.replace("\r\n", "\n").replace("\r", "\n"))
    body_changed = new_body is not None and new_body != doc.body.replace("\r\n", "\n").replace("\r", "\n")
    title_changed = title is not None and rust_trim(title) != doc.h1_text
    if not body_changed and not title_changed:
        return []
    lo, hi = doc.body_span
    if doc.h1 is None or (body_changed and lo >= hi):
        # Nothing of a body to edit in place: write the document part as the canonical writer does.
        t = rust_trim(title if title is not None else doc.h1_text or "")
        b = new_body if new_body is not None else doc.body
        part = f"\n# {t}\n\n{b}\n" if b else f"\n# {t}\n"
        return [(doc.body_start, len(doc.text), part.replace("\n", newline))]
    edits = []
    if title_changed:
        h_lo, h_hi = doc.h1
        h_text = doc.text[h_lo:h_hi]
        # Keep the spacing around the heading text as written.
        lead = len(h_text) - len(h_text.lstrip())
        trail = len(h_text.rstrip())
        edits.append((h_lo + lead, h_lo + max(lead, trail), rust_trim(title or "")))
    if body_changed and new_body is not None:
        edits.append((lo, hi, new_body.replace("\n", newline)))
    return edits


def rewrite(
    doc: Document,
    changes: Mapping[str, Any],
    order: tuple[str, ...],
    *,
    title: str | None = None,
    body: str | None = None,
) -> str:
    """``doc.text`` with each top-level key of ``changes`` set to its value (``None`` removes the key) and, when
    ``title`` or ``body`` is given and differs from the document's, the H1 text and the body (Memzoi's trimmed
    body, replaced in place so the text around it stays) replaced. Keys of ``changes`` must be in ``order``.

    Everything else is kept byte for byte (see the module docstring). Raises :class:`HandEditConflict` where a
    line the writer does not own would be lost."""
    fm = _Frontmatter(doc)
    newline = doc.newline
    unknown = [k for k in changes if k not in order]
    if unknown:
        raise ValueError(f"keys not in the canonical order: {sorted(unknown)}")
    edits = sorted(
        _field_edits(fm, changes, order, newline) + _body_edits(doc, title, body, newline), key=lambda e: (e[0], e[1])
    )
    out, pos = [], 0
    for start, end, new in edits:
        if start < pos:
            raise HandEditConflict(fm.index(start) + 1, "a line two edits would both change")
        out.append(doc.text[pos:start])
        out.append(new)
        pos = end
    out.append(doc.text[pos:])
    return "".join(out)
