"""Every decoded frontmatter string, key or value, scanned as its own text, as Memzoi scans it.

Memzoi applies its write-safety detectors to every field of a candidate (reference ``memzoi-format.md`` §3.2:
"Detectors run on every field"; the fields are serde_yaml's decoded strings), so each value is a text of its
own. Two things follow that a scan of the file's text alone misses:

* an escape is a character of the value, not of the file: ``"\\u0041KIA…"`` is an AWS key id, ``"\\u200b"`` a
  zero-width space, ``"see\\nTOKEN=abc"`` an environment secret on its own line;
* a value starts a text, so a rule anchored at a line start (``authorization_header``, ``environment_secret``:
  ``(?im)^\\s*…``) matches at the start of ``title: TOKEN=abc``, of a list item ``- TOKEN=abc``, of a flow
  value ``{k: TOKEN=abc}`` and of a key (keys are strings too; Memzoi refuses unknown keys, but the admission scan
  reads the whole file and our own gate must never pass what a rule would match once the key is a value).

:func:`rescanned` picks the string scalars (keys and values, at any depth) whose own scan can find something the
file's scan cannot:

1. the decoded value differs from its source text (an escape, ``''``, line folding, a block scalar's header and
   indentation): the value is scanned whole;
2. the value equals its source text but an anchored rule could match at its start (:data:`HEAD`: after white
   space and list or quote markers, ``export``/``set``/``$env:`` and a name followed by ``=``, or
   ``(proxy-)authorization`` followed by ``:``), and the scalar does not already start its line in the file
   (where the file's scan sees the same line start).

No other scalar can hold a match of its own: its text is a slice of the file bounded by characters that no rule's
token continues over (white space, a quote, a flow indicator, ``:`` or ``#``), every rule but the two anchored ones
has no anchor, and the boundary tests of our own detectors see a non-identifier character before and after the
slice as at the ends of the value. A record without escapes and without an ``=`` or ``authorization`` in its
frontmatter is therefore never rescanned: it pays one walk of its scalars (`tests/safety/test_value_scan.py`
holds the shortcut equal to scanning every scalar).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from ..base.findings import CODES, Finding, Fix
from ..read.yaml_tree import PlainScalar, YMap, YNode, YScalar, YSeq
from .memzoi_rules import needs_plain_search

if TYPE_CHECKING:  # the YAML reader is imported where a document is framed, so scanning a text needs none of it
    from ..read.document import Document

#: What a line-anchored rule (Memzoi's ``authorization_header`` and ``environment_secret``, our keyed
#: ``environment_secret``) needs at the start of a text for a match there: white space and list or quote
#: markers, an optional ``export``/``set``/``$env:``, then a name and ``=`` or ``(proxy-)authorization`` and ``:``.
HEAD = re.compile(
    r"[\s\"'>*-]*(?:(?:export|set)\s+|\$env:)?(?:(?:proxy-)?authorization\s*:|[a-z_][a-z0-9_.-]*\s*=)", re.IGNORECASE
)
#: :data:`HEAD`'s ``match``, when an anchored match is possible at all in the frontmatter.
_Head = Callable[[str], "re.Match[str] | None"]


#: How a frontmatter key that holds a finding is shown in a location or a message (never its text).
KEY_MARK = "<redacted key>"
#: The content detectors' codes: findings about the text itself.
DETECTOR_CODES = frozenset(c for c, (_, group) in CODES.items() if group == "detector")


@dataclass(frozen=True, slots=True)
class Scalar:
    """A string scalar to scan as its own text: its node, whether it is a key, and whether its escapes (a
    backslash or ``''``) make its value differ from its source."""

    node: YScalar
    key: bool
    escaped: bool


def rescanned(doc: Document) -> list[Scalar]:
    """The string scalars of ``doc``'s frontmatter (keys included, any depth, in file order) whose own scan can
    hold a match the scan of the file misses (see the module docstring)."""
    root = doc.yaml_root
    if root is None or doc.fm_start is None or doc.fm_end is None:
        return []
    text = doc.text
    fm = text[doc.fm_start : doc.fm_end]
    head = HEAD.match if _anchor_possible(fm) else None
    if head is None and doc.yaml_one_line and "\\" not in fm and "''" not in fm:
        return []  # every value is its own one-line text, and none can start an anchored match
    out: list[Scalar] = []
    stack: list[YNode] = [root]
    while stack:  # an explicit stack: nesting depth never meets Python's recursion limit
        node = stack.pop()
        if isinstance(node, YMap):
            for k in node.order:
                _check(text, k, True, head, out)
            for _, v in node.entries.values():
                if isinstance(v, YScalar):
                    _check(text, v, False, head, out)
                else:
                    stack.append(v)
        elif isinstance(node, YSeq):
            for v in node.items:
                if isinstance(v, YScalar):
                    _check(text, v, False, head, out)
                else:
                    stack.append(v)
        elif isinstance(node, YScalar):
            _check(text, node, False, head, out)
    out.sort(key=lambda sc: sc.node.start)
    return out


def _anchor_possible(fm: str) -> bool:
    """Whether some scalar of the frontmatter text ``fm`` could open with :data:`HEAD`: a name character right
    before an ``=`` (white space between allowed), or ``authorization`` followed by ``:``, somewhere in the text
    (looked for from each ``=`` and each ``authorization``: C-speed searches, as most frontmatter has neither)."""
    if needs_plain_search(fm):
        return True  # characters that case-insensitive matching folds onto ASCII letters: no shortcut
    i = fm.find("=")
    while i >= 0:
        j = i
        while j > 0 and fm[j - 1].isspace():
            j -= 1
        if j > 0 and fm[j - 1] in _NAME:
            return True
        i = fm.find("=", i + 1)
    low = fm.lower()
    i = low.find("authorization")
    while i >= 0:
        j = i + len("authorization")
        while j < len(low) and low[j].isspace():
            j += 1
        if low.startswith(":", j):
            return True
        i = low.find("authorization", i + 1)
    return False


_NAME = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-")


def _check(text: str, node: YScalar, key: bool, head: _Head | None, out: list[Scalar]) -> None:
    """Append ``node`` to ``out`` when its own scan can find more than the file's (module docstring)."""
    value = node.value
    if not isinstance(value, str) or (isinstance(value, PlainScalar) and not isinstance(value.resolved, str)):
        return
    s, e = (node.start + 1, node.end - 1) if node.style in ('"', "'") else (node.start, node.end)
    if len(value) != e - s or not text.startswith(value, s):  # the decoded value is not its source text
        src = text[s:e]
        out.append(Scalar(node, key, node.style in ('"', "'") and ("\\" in src or "''" in src)))
    elif head is not None and head(value) and not _starts_line(text, s):
        out.append(Scalar(node, key, False))


def _starts_line(text: str, start: int) -> bool:
    """True when only spaces and tabs precede ``start`` on its line (a ``^\\s*`` of the file's scan is there)."""
    line = text.rfind("\n", 0, start) + 1
    return not text[line:start].strip(" \t")


def scalars(root: YNode) -> Iterator[tuple[YScalar, bool]]:
    """Every scalar node below ``root`` with whether it is a key (keys and duplicates included); an explicit
    stack, so nesting depth never meets Python's recursion limit."""
    stack: list[tuple[YNode, bool]] = [(root, False)]
    while stack:
        node, key = stack.pop()
        if isinstance(node, YScalar):
            yield node, key
        elif isinstance(node, YMap):
            stack.extend((k, True) for k in node.order)
            stack.extend((v, False) for _, v in node.entries.values())
        elif isinstance(node, YSeq):
            stack.extend((item, False) for item in node.items)


def key_spans(doc: Document) -> list[tuple[int, int]]:
    """Spans of every key node of ``doc``'s frontmatter (any depth), sorted."""
    root = doc.yaml_root
    if root is None:
        return []
    return sorted((n.start, n.end) for n, key in scalars(root) if key)


def double_quoted(value: str) -> str:
    """``value`` as a YAML double-quoted scalar: printable characters as they are (``"`` and ``\\`` escaped),
    every other one as a ``\\u``/``\\U`` escape. Used by the quick fix that rewrites an escaped value."""
    out = ['"']
    for c in value:
        if c in '"\\':
            out.append("\\" + c)
        elif c.isprintable() or c == " ":
            out.append(c)
        elif ord(c) <= 0xFFFF:
            out.append(f"\\u{ord(c):04x}")
        else:
            out.append(f"\\U{ord(c):08x}")
    out.append('"')
    return "".join(out)


__all__ = [
    "DETECTOR_CODES",
    "HEAD",
    "KEY_MARK",
    "Scalar",
    "double_quoted",
    "key_spans",
    "rescanned",
    "scalars",
    "unprinted_keys",
]


def unprinted_keys(doc: Document, findings: list[Finding]) -> list[Finding]:
    """``findings`` with no message or data repeating text a content detector matched in the frontmatter.

    Messages never print a value, but some print a key (``unknown_key``, ``duplicate_key``, ``non_string_key``,
    a schema path): when a detector finding lies on a key, or anywhere in the frontmatter, its matched text (the
    raw span, and a key's decoded text) is replaced by :data:`KEY_MARK` in every other finding's message and
    string data. Detector findings themselves never print matched text (:mod:`.scan`)."""
    if doc.fm_start is None or doc.fm_end is None:
        return findings
    detected = [f for f in findings if f.code in DETECTOR_CODES and f.start < doc.fm_end and f.end > f.start]
    if not detected:
        return findings
    text = doc.text
    hidden = {text[f.start : f.end] for f in detected}
    root = doc.yaml_root
    if root is not None:
        for k, key in scalars(root):
            if key and any(f.start < k.end and k.start < f.end for f in detected):
                hidden.update((text[k.start : k.end], str(k.value)))
    # a message may quote the matched text cut differently (a YAML error names its line's key up to the `:`):
    # every run of 6+ token characters inside matched text is hidden too
    hidden.update(m.group(0) for w in list(hidden) for m in _TOKEN_RUN.finditer(w))
    words = sorted((w for w in hidden if w.strip()), key=len, reverse=True)
    return [f if f.code in DETECTOR_CODES else _scrubbed(f, words) for f in findings]


_TOKEN_RUN = re.compile(r"[A-Za-z0-9_+/=.-]{6,}")


def _scrubbed(f: Finding, words: list[str]) -> Finding:
    def clean_text(value: str) -> str:
        for w in words:
            if w in value:
                value = value.replace(w, KEY_MARK)
        return value

    def clean(value: object) -> object:
        if isinstance(value, str):
            return clean_text(value)
        if isinstance(value, list):
            return [clean(v) for v in value]
        return value

    message = clean_text(f.message)
    data = {k: clean(v) for k, v in f.data.items()}
    fixes = tuple(Fix(clean_text(x.title), x.edits) for x in f.fixes)
    if message == f.message and data == f.data and fixes == f.fixes:
        return f
    return replace(f, message=message, data=data, fixes=fixes)
