"""The canonical writer: records and proposal packets rendered the way Memzoi writes them.

Record key order and scalar quoting follow ``render_okf_record_markdown`` / ``render_memory_record``
(reference §1.5); packets follow ``render_okf_create_proposal_markdown`` (reference §2.2), with ``resolution``
written last on resolved packets. A scalar is written bare only when it is non-empty, made only of ASCII
alphanumerics and ``-_./``, and would read back as the same string under the YAML 1.2 core schema (so ``true``,
``null`` or ``1.5`` as *strings* are quoted); anything else is a JSON string literal, which YAML 1.2 reads back
exactly. Numbers use Rust's ``f64`` Display (``1.0`` → ``1``). Nested blocks are indented two spaces; empty
maps and lists are written ``{}`` and ``[]``. The document is ``---``, the frontmatter, ``---``, a blank line,
``# <title>``, a blank line, the trimmed body and a final line break, in the requested line-ending style.
"""

from __future__ import annotations

import math
import re
from decimal import Decimal
from typing import Any

from .text import rust_trim
from .yaml12 import PlainScalar
from .yaml_quote import quote_string

RECORD_ORDER = (
    "id",
    "kind",
    "profile",
    "type",
    "lane",
    "title",
    "description",
    "timestamp",
    "updated",
    "status",
    "scope",
    "scope_id",
    "visibility",
    "content_class",
    "confidence",
    "source",
    "source_ref",
    "proposal_id",
    "capture",
    "tags",
    "applies_to",
    "supersedes",
    "retention",
    "origin",
    "lineage",
    "materialization",
)
PACKET_ORDER = (
    "id",
    "kind",
    "profile",
    "type",
    "lane",
    "title",
    "description",
    "status",
    "proposal",
    "scope",
    "tags",
    "timestamp",
    "created_by",
    "sources",
    "supersedes",
    "sensitivity",
    "content_class",
    "capture",
    "retention",
    "origin",
    "lineage",
    "resolution",
)
#: Packet keys written even when empty (Memzoi's packet renderer always writes them).
_PACKET_ALWAYS = frozenset({"supersedes"})
_BARE = re.compile(r"^[A-Za-z0-9\-_./]+$")
# Plain scalars the YAML 1.2 core schema resolves to something other than a string.
_CORE_NON_STRING = re.compile(
    r"^(?:~|null|Null|NULL|true|True|TRUE|false|False|FALSE"
    r"|[-+]?[0-9]+|0o[0-7]+|0x[0-9a-fA-F]+"
    r"|[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?"
    r"|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN))$"
)


def rust_float(value: float) -> str:
    """Rust ``f64`` Display: shortest round-trip digits, no exponent, no trailing ``.0`` (``1.0`` → ``1``)."""
    if math.isnan(value) or math.isinf(value):
        raise ValueError("non-finite numbers cannot be written")
    text = format(Decimal(repr(float(value))), "f")
    if "." in text:
        text = text.rstrip("0").rstrip(".")
    return "0" if text in ("-0", "") else text


def scalar(value: Any) -> str:
    """One YAML scalar in Memzoi's style (bare when safe, else a JSON string literal)."""
    if value is None:
        return "null"
    if isinstance(value, PlainScalar) and not isinstance(value.resolved, str):
        # A number, boolean or null read from a file (e.g. inside `capture`): keep its exact plain text so it
        # stays the same YAML value and the same string.
        return str.__str__(value)
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return rust_float(value)
    text = str(value)
    if _BARE.fullmatch(text) and not _CORE_NON_STRING.fullmatch(text) and text != "-":  # not `$`: it admits a final \n
        return text
    return quote_string(text)  # a JSON string literal with what YAML forbids raw escaped


def _emit(key: str, value: Any, indent: int, out: list[str]) -> None:
    pad = " " * indent
    if isinstance(value, dict):
        if not value:
            out.append(f"{pad}{key}: {{}}")
            return
        out.append(f"{pad}{key}:")
        for k, v in value.items():
            if v is not None:
                _emit(k, v, indent + 2, out)
    elif isinstance(value, (list, tuple)):
        if not value:
            out.append(f"{pad}{key}: []")
            return
        out.append(f"{pad}{key}:")
        for item in value:
            _emit_item(item, indent + 2, out)
    else:
        out.append(f"{pad}{key}: {scalar(value)}")


def _emit_item(item: Any, indent: int, out: list[str]) -> None:
    pad = " " * indent
    if isinstance(item, dict) and item:
        first = True
        for k, v in item.items():
            if v is None:
                continue
            sub: list[str] = []
            _emit(k, v, indent + 2, sub)
            if first:
                sub[0] = f"{pad}- {sub[0][indent + 2 :]}"
                first = False
            out.extend(sub)
        if first:
            out.append(f"{pad}- {{}}")
    elif isinstance(item, (list, tuple)) and item:
        raise ValueError("nested lists are not part of the Memzoi formats")
    else:
        out.append(f"{pad}- {'{}' if item == {} else '[]' if item == [] else scalar(item)}")


def key_lines(key: str, value: Any) -> list[str]:
    """The frontmatter lines (no line breaks) the canonical writer gives top-level ``key`` with ``value``, as
    :func:`frontmatter` writes them (an empty list or map is ``[]`` / ``{}``). Used by :mod:`memzoi.read.rewrite`."""
    out: list[str] = []
    _emit(key, value, 0, out)
    return out


def frontmatter(data: dict[str, Any], order: tuple[str, ...], always: frozenset[str] = frozenset()) -> str:
    """The YAML lines of ``data`` in ``order`` (keys not in ``order`` are an error); ``None`` values are
    omitted except for list keys in ``always``, written ``[]``."""
    unknown = set(data) - set(order)
    if unknown:
        raise ValueError(f"keys not in the canonical order: {sorted(unknown)}")
    out: list[str] = []
    for key in order:
        if key not in data:
            continue
        value = data[key]
        if value is None:
            if key in always:
                out.append(f"{key}: []")
            continue
        _emit(key, value, 0, out)
    return "\n".join(out) + "\n"


def first_line(body: str) -> str:
    """The first non-empty line of ``body``, trimmed (Memzoi's rendered ``description``)."""
    for line in body.splitlines():
        if line.strip():
            return rust_trim(line)
    return ""


#: Longest ``description`` this project writes, in characters.
DESCRIPTION_LIMIT = 200


def description_of(body: str) -> str:
    """The ``description`` written for ``body``: its first line (as Memzoi renders it), cut to
    :data:`DESCRIPTION_LIMIT` characters with ``…``. Uncut, a one-line body would be in the file twice and double
    its size past Memzoi's limit for one file."""
    line = first_line(body)
    return line if len(line) <= DESCRIPTION_LIMIT else rust_trim(line[: DESCRIPTION_LIMIT - 1]) + "…"


def _document(fm: str, title: str, body: str, newline: str) -> str:
    body = rust_trim(body.replace("\r\n", "\n").replace("\r", "\n"))
    text = f"---\n{fm}---\n\n# {rust_trim(title)}\n\n{body}\n" if body else f"---\n{fm}---\n\n# {rust_trim(title)}\n"
    return text if newline == "\n" else text.replace("\n", newline)


def render_record(data: dict[str, Any], body: str, *, newline: str = "\n") -> str:
    """A record file: ``data`` is the frontmatter as plain Python (keys of :data:`RECORD_ORDER`), ``body`` the
    record body without its H1. ``description`` defaults to the first body line, as Memzoi writes it."""
    data = dict(data)
    if not data.get("description"):
        data["description"] = description_of(body) or None
    return _document(frontmatter(data, RECORD_ORDER), str(data["title"]), body, newline)


def render_packet(data: dict[str, Any], body: str, *, newline: str = "\n") -> str:
    """A proposal packet file (pending or resolved): ``data`` keys of :data:`PACKET_ORDER`; ``supersedes`` is
    always written (``[]`` when empty)."""
    data = {**{k: None for k in _PACKET_ALWAYS}, **data}
    return _document(frontmatter(data, PACKET_ORDER, _PACKET_ALWAYS), str(data["title"]), body, newline)
