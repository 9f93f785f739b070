"""The positioned YAML tree that :mod:`memzoi.read.yaml12` builds: node types with code-point spans, YAML 1.2
core-schema resolution of plain scalars, and walking the tree (:func:`to_python`, :func:`locate`).

Both of the reader's paths (PyYAML's events, and the private fast path for the common block subset) build these
nodes; everything else imports them from :mod:`memzoi.read.yaml12`.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from typing import Any

_NULL = re.compile(r"^(?:~|null|Null|NULL|)$")
_BOOL = {"true": True, "True": True, "TRUE": True, "false": False, "False": False, "FALSE": False}
_INT10 = re.compile(r"^[-+]?[0-9]+$")
_INT8 = re.compile(r"^0o[0-7]+$")
_INT16 = re.compile(r"^0x[0-9a-fA-F]+$")
_FLOAT = re.compile(r"^[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?$")
_INF = re.compile(r"^[-+]?\.(?:inf|Inf|INF)$")
_NAN = re.compile(r"^\.(?:nan|NaN|NAN)$")
#: First characters of every spelling the patterns above accept (the empty string is null too, and so is a lone
#: line break: `$` matches before a final one).
_NON_STR_FIRST = frozenset("~nNtTfF+-.0123456789\n")
#: The union of the patterns above: text it does not match is a string without trying each of them.
_NON_STR = re.compile(
    "|".join(p.pattern for p in (_NULL, _INT10, _INT8, _INT16, _FLOAT, _INF, _NAN)) + "|^(?:" + "|".join(_BOOL) + ")$"
)


class PlainScalar(str):
    """A plain (unquoted) scalar's exact text, carrying its YAML 1.2 core-schema value in ``resolved``.

    It *is* a ``str``, so string fields accept it unchanged (as serde_yaml does for plain scalars), while numeric
    fields look at ``resolved``. Quoted and block scalars are ordinary ``str``.
    """

    __slots__ = ("resolved",)
    resolved: Any

    def __new__(cls, text: str, resolved: Any) -> PlainScalar:
        obj = super().__new__(cls, text)
        obj.resolved = resolved
        return obj


def resolve_plain(text: str) -> Any:
    """Resolve a plain scalar with the YAML 1.2 core schema: ``None``, ``bool``, ``int``, ``float`` or ``str``."""
    if text and text[0] not in _NON_STR_FIRST or not _NON_STR.match(text):
        return text  # no null, bool or number spelling starts with this character, or matches at all
    if _NULL.match(text):
        return None
    if text in _BOOL:
        return _BOOL[text]
    if _INT10.match(text):
        # More digits than any finite float holds stay text (int() would also refuse beyond 4,300 digits).
        return _finite_int(int(text), text) if len(text) <= _MAX_INT_CHARS else text
    if _INT8.match(text):
        return _finite_int(int(text[2:], 8), text)
    if _INT16.match(text):
        return _finite_int(int(text[2:], 16), text)
    if _FLOAT.match(text):
        return float(text)
    if _INF.match(text):
        return -math.inf if text.startswith("-") else math.inf
    if _NAN.match(text):
        return math.nan
    return text


#: Longest decimal integer spelling worth converting: a float's largest finite value has 309 digits.
_MAX_INT_CHARS = 311


def _finite_int(value: int, text: str) -> int | str:
    """``value``, or ``text`` when the integer is beyond the finite float range: it is no usable number (a
    validated float field could not hold it), so, as a float that is not finite, it stays the plain text."""
    return value if value.bit_length() <= 1023 else text  # below 2**1023: float() never overflows


@dataclass(slots=True)
class YScalar:
    """A scalar node: ``value`` is the core-schema value (a :class:`PlainScalar` for non-null plain scalars)."""

    value: Any
    start: int
    end: int
    style: str  # "" plain, "'" or '"' quoted, "|" or ">" block


@dataclass(slots=True)
class YAlias:
    """An alias (``*name``). Never expanded; its value is ``None``."""

    name: str
    start: int
    end: int
    value: Any = None


@dataclass(slots=True)
class YSeq:
    """A sequence node with its item nodes."""

    items: list[YNode]
    start: int
    end: int
    flow: bool = False


@dataclass(slots=True)
class YMap:
    """A mapping node. ``entries`` maps each string key (first occurrence) to ``(key node, value node)``;
    ``order`` keeps every key node in file order, duplicates included."""

    entries: dict[str, tuple[YScalar, YNode]]
    start: int
    end: int
    flow: bool = False
    order: list[YScalar] = field(default_factory=list)


YNode = YScalar | YAlias | YSeq | YMap


def to_python(node: YNode | None) -> Any:
    """Convert a node tree to plain Python (``dict``/``list``/scalars); aliases become ``None``."""
    # Exact type checks and scalars taken in place: this runs once per framed file (the node classes are final).
    if type(node) is YScalar:
        return node.value
    if type(node) is YMap:
        return {k: v.value if type(v) is YScalar else to_python(v) for k, (_, v) in node.entries.items()}
    if type(node) is YSeq:
        return [i.value if type(i) is YScalar else to_python(i) for i in node.items]
    return None


def locate(root: YNode | None, loc: tuple[Any, ...]) -> tuple[YScalar | None, YNode | None]:
    """Walk ``loc`` (mapping keys and sequence indices, as in pydantic error locations) from ``root``.

    Returns ``(key node, value node)`` of the deepest element reached: the key node is that of the last mapping
    key on the path, the value node is the node the full path names, or ``None`` when the path leaves the tree.
    """
    key: YScalar | None = None
    node: YNode | None = root
    for part in loc:
        if isinstance(node, YMap) and isinstance(part, str) and part in node.entries:
            key, node = node.entries[part]
        elif isinstance(node, YSeq) and isinstance(part, int) and 0 <= part < len(node.items):
            node = node.items[part]
        else:
            return key, None
    return key, node


__all__ = [
    "PlainScalar",
    "YAlias",
    "YMap",
    "YNode",
    "YScalar",
    "YSeq",
    "locate",
    "resolve_plain",
    "to_python",
]
