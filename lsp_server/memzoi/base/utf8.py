"""Total UTF-8 encoding of any decoded string: the one place that says how a string that cannot be encoded is
hashed, stored or shown.

A Python string can hold lone surrogates (U+D800–U+DFFF): YAML's ``\\uD800`` escape decodes to one (PyYAML does
not refuse it, where libyaml and Memzoi's YAML reader refuse the file), a client may send one in JSON, and a
file name that is not UTF-8 is decoded with ``surrogateescape``. Strict UTF-8 encoding of such a string raises,
so every hash, database row, JSON document and printed message uses these functions instead:

* :func:`utf8_bytes` — bytes to hash or measure (``surrogatepass``: a lone surrogate becomes its 3-byte
  generalized UTF-8 form; two different strings never give the same bytes).
* :func:`storable` — a string that encodes as strict UTF-8 (SQLite columns, JSON written with
  ``ensure_ascii=False``, finding messages, terminal output): each lone surrogate becomes the six characters of its
  escape, ``\\ud800``, as YAML and JSON write it.
* :func:`unencodable_span` — where the first lone surrogate of a string is (for an ``invalid_encoding`` finding).

A file name printed for a person or given as a JSON path spells an undecodable byte as ``\\xHH`` instead
(:mod:`memzoi.base.printable`): the byte, not its surrogate, so the path names the real file.

This module imports nothing of memzoi, so every core module may use it.
"""

from __future__ import annotations

import re
from typing import Any

_SURROGATE = re.compile("[\ud800-\udfff]")


def utf8_bytes(value: str) -> bytes:
    """``value`` as UTF-8 bytes, lone surrogates passed through (``surrogatepass``); never raises. Use it for every
    hash and byte count of a string that came from a file, a client or a file name."""
    try:
        return value.encode("utf-8")
    except UnicodeEncodeError:
        return value.encode("utf-8", "surrogatepass")


def encodable(value: str) -> bool:
    """True when ``value`` encodes as strict UTF-8 (holds no lone surrogate)."""
    return value.isascii() or _SURROGATE.search(value) is None


def storable(value: str) -> str:
    """``value`` itself when it encodes as strict UTF-8, else with each lone surrogate written as its escape
    (``\\ud800``, lower-case hex, as :func:`memzoi.read.yaml12.quote_string` and JSON write it); never raises. The
    result can be stored in SQLite, written as JSON or printed."""
    if encodable(value):
        return value
    return _SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", value)


def unencodable_span(value: str) -> tuple[int, int] | None:
    """The code-point span ``(start, end)`` of the first lone surrogate in ``value``, or ``None`` when it has none."""
    if value.isascii():
        return None
    m = _SURROGATE.search(value)
    return (m.start(), m.end()) if m else None


def storable_tree(value: Any) -> Any:
    """``value`` (a JSON-like tree of dicts, lists, tuples and scalars) with every string in it, key or value, made
    :func:`storable`: the same object when every string already encodes, else a copy; other values (numbers,
    ``None``, objects) are kept as they are."""
    if isinstance(value, str):
        return storable(value)
    if type(value) is dict:
        items = [(storable_tree(k), storable_tree(v)) for k, v in value.items()]
        return value if all(a is k and b is v for (a, b), (k, v) in zip(items, value.items())) else dict(items)
    if type(value) in (list, tuple):
        out = [storable_tree(v) for v in value]
        return value if all(a is b for a, b in zip(out, value)) else type(value)(out)
    return value


__all__ = ["encodable", "storable", "storable_tree", "unencodable_span", "utf8_bytes"]
