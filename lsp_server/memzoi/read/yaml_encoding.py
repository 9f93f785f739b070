"""What YAML's escapes can decode to that is no text: lone surrogates (``\\uD800``: an ``invalid_encoding`` on
the value) and code points past U+10FFFF (``\\U00110000``: a ``yaml_syntax`` on the escape), for
:mod:`memzoi.read.yaml12`."""

from __future__ import annotations

import re

from ..base.findings import Finding, finding
from ..base.utf8 import unencodable_span
from .yaml_tree import YMap, YNode, YScalar, YSeq


def unencodable_findings(root: YNode) -> list[Finding]:
    """An ``invalid_encoding`` finding on each key or string value under ``root`` that cannot be encoded as UTF-8:
    it holds a lone surrogate (U+D800–U+DFFF), which a YAML escape such as ``"\\uD800"`` decodes to and which is
    no Unicode character. libyaml, and so Memzoi's reader, refuses such an escape (``found invalid Unicode
    character escape code``); PyYAML accepts it. The span is the value's (or the key's); the message names the
    code point, never the value."""
    out: list[Finding] = []
    stack: list[YNode] = [root]
    while stack:
        node = stack.pop()
        if isinstance(node, YMap):
            for key in node.order:
                stack.append(key)
            stack.extend(v for _, v in node.entries.values())
        elif isinstance(node, YSeq):
            stack.extend(node.items)
        elif isinstance(node, YScalar) and isinstance(node.value, str):
            at = unencodable_span(node.value)
            if at is not None:
                point = ord(node.value[at[0]])
                out.append(
                    finding(
                        "invalid_encoding",
                        f"this value holds U+{point:04X}, a lone surrogate (written as a `\\u` escape), which is not a "
                        "Unicode character and cannot be encoded as UTF-8; Memzoi's YAML reader refuses the file. "
                        "Remove the escape, or write the character it stands for (a pair of surrogates "
                        "is one `\\U` escape with eight digits)",
                        node.start,
                        node.end,
                    )
                )
    out.sort(key=lambda f: (f.start, f.end))
    return out


_BIG_ESCAPE = re.compile(r"\\U([0-9A-Fa-f]{8})")


def escape_out_of_range(source: str, base: int) -> Finding:
    """The ``yaml_syntax`` finding of a ``\\UXXXXXXXX`` escape past U+10FFFF (no character; libyaml, and so
    Memzoi, refuses it as an invalid Unicode escape), on the first such escape of ``source``."""
    m = next((m for m in _BIG_ESCAPE.finditer(source) if int(m.group(1), 16) > 0x10FFFF), None)
    at, end = (base + m.start(), base + m.end()) if m else (base, base)
    return finding(
        "yaml_syntax",
        "YAML escape `\\U` names a code point past U+10FFFF, the last Unicode character "
        "(found invalid Unicode character escape code); fix the escape",
        at,
        end,
    )


__all__ = ["escape_out_of_range", "unencodable_findings"]
