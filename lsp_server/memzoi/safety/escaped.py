"""Quoted YAML scalars whose value is not their source text: where escapes hide what a detector would match.

Memzoi scans the decoded field values (serde_yaml's strings), so ``title: "\\u0041KIA…"`` is an AWS key id to it,
``"\\x2d----BEGIN PRIVATE KEY-----"`` a private key header, and ``"see\\nTOKEN=abc"`` an environment secret on its
own line, while the file's text shows none of them. :func:`escaped_scalars` finds the scalars whose decoded value
differs from their source, so the scan (:func:`memzoi.safety.scan.scan_document`) can run the detectors on the
value too and report on the scalar's span.

Only escapes can make a value hold a match its source lacks. A double-quoted scalar's escapes all start with a
backslash; a single-quoted one has only ``''`` (one quote, which no rule's token contains). Line folding, the
other way a quoted value differs from its text, turns a line break and the next line's indentation into one space
(or keeps the break for an empty line): words stay apart and no new line start appears, so every match of the
value is already one of the text. A frontmatter without a backslash or ``''`` is therefore never walked: the usual
record pays one substring search.
"""

from __future__ import annotations

from collections.abc import Iterator

from ..document import Document
from ..yaml12 import YMap, YNode, YScalar, YSeq


def escaped_scalars(doc: Document) -> list[YScalar]:
    """The quoted scalars of ``doc``'s frontmatter (keys and values, at any depth) whose decoded string value
    differs from the text between their quotes, in file order."""
    root = doc.yaml_root
    if root is None or doc.fm_start is None or doc.fm_end is None:
        return []
    text = doc.text
    if text.find("\\", doc.fm_start, doc.fm_end) < 0 and text.find("''", doc.fm_start, doc.fm_end) < 0:
        return []
    out = [node for node in _scalars(root)
           if node.style in ('"', "'") and isinstance(node.value, str)
           and text[node.start + 1 : node.end - 1] != node.value]
    return sorted(out, key=lambda n: n.start)


def _scalars(root: YNode) -> Iterator[YScalar]:
    """Every scalar node below ``root``, keys included (an explicit stack: nesting depth never meets Python's)."""
    stack: list[YNode] = [root]
    while stack:
        node = stack.pop()
        if isinstance(node, YScalar):
            yield node
        elif isinstance(node, YMap):
            stack.extend(node.order)  # every key node, duplicates included
            stack.extend(v for _, v in node.entries.values())
        elif isinstance(node, YSeq):
            stack.extend(node.items)


__all__ = ["escaped_scalars"]
