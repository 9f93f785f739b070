"""The nesting limit of every structured value we read (YAML frontmatter, JSON artifacts and token headers).

Memzoi's formats nest fewer than 8 levels deep (a record's ``retention``/``origin``/``lineage`` blocks, a
proposal's ``proposal.targets[]`` entries, a materialization plan's steps). Deeper input is refused with a
finding or an error at the first container past :data:`NESTING_LIMIT`, so no reader, converter, validator or
detector ever recurses more than that many levels, whatever a file contains (a 1 KB ``x: [[[[…]]]]`` must not
exhaust the interpreter's stack).
"""

from __future__ import annotations

#: Containers (mappings and sequences, or JSON objects and arrays) that may enclose each other; the outermost
#: one is level 1.
NESTING_LIMIT = 64


def json_too_deep(text: str | bytes, limit: int = NESTING_LIMIT) -> int | None:
    """Offset of the first ``[`` or ``{`` of ``text`` (JSON) that opens a container deeper than ``limit``, else
    ``None``. Strings are skipped (brackets inside them do not count); no recursion, one pass."""
    if isinstance(text, bytes):
        text = text.decode("utf-8", "replace")
    if text.count("[") + text.count("{") <= limit:
        return None  # too few openers to nest that deep: the common case costs two counts
    depth = 0
    in_string = False
    escaped = False
    for i, c in enumerate(text):
        if in_string:
            if escaped:
                escaped = False
            elif c == "\\":
                escaped = True
            elif c == '"':
                in_string = False
        elif c == '"':
            in_string = True
        elif c in "[{":
            depth += 1
            if depth > limit:
                return i
        elif c in "]}":
            depth -= 1
    return None


def nesting_message(limit: int = NESTING_LIMIT) -> str:
    """The explanation shared by the YAML finding and JSON refusals."""
    return (
        f"nested more than {limit} levels deep; Memzoi's formats need fewer than 8, so this cannot be a valid "
        "record, packet or artifact: flatten the value"
    )


__all__ = ["NESTING_LIMIT", "json_too_deep", "nesting_message"]
