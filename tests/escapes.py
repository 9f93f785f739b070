"""Records and proposal packets with YAML escapes in one field, for the escape property tests and the fuzz script.

Every value is a YAML double-quoted scalar built from pieces: literal text, every escape YAML 1.2 allows
(``\\0 \\a \\b \\t \\<TAB> \\n \\v \\f \\r \\e \\<space> \\" \\/ \\\\ \\N \\_ \\L \\P``) and hexadecimal escapes
(``\\xXX``, ``\\uXXXX``, ``\\UXXXXXXXX``) of chosen code points: lone surrogates first (what Memzoi's reader
refuses and PyYAML decodes), controls, invisible and bidi characters, noncharacters and values past U+10FFFF.
The escaped scalar goes into one field of a record or packet written by :mod:`tests.builders` (ids, references,
targets, tags, paths, titles, bodies' keys, ...), or becomes a key. Everything is a pure function of its
parameters, so hypothesis draws (and shrinks) them in the test suite and the fuzz script draws them from a
seeded ``random.Random``.
"""

from __future__ import annotations

from typing import Any

from tests import builders

#: YAML 1.2's one-character escapes (PyYAML decodes each of them).
SIMPLE = (
    "\\0",
    "\\a",
    "\\b",
    "\\t",
    "\\\t",
    "\\n",
    "\\v",
    "\\f",
    "\\r",
    "\\e",
    "\\ ",
    '\\"',
    "\\/",
    "\\\\",
    "\\N",
    "\\_",
    "\\L",
    "\\P",
)
#: Code points for the hexadecimal escapes: lone surrogates (high, low, and a pair that is still two escapes),
#: controls, NEL/LS/PS, BOM, zero-width and bidi characters, noncharacters, the last code point, and values past
#: it (which no decoder may turn into a character).
POINTS = (
    0xD800,
    0xDBFF,
    0xDC00,
    0xDFFF,
    0xDABC,
    0x0,
    0x1,
    0x1B,
    0x7F,
    0x85,
    0xA0,
    0x2028,
    0x2029,
    0xFEFF,
    0x200B,
    0x200D,
    0x202E,
    0x2066,
    0xFFFE,
    0xFFFF,
    0x1F600,
    0x10FFFF,
    0x110000,
    0xFFFFFFFF,
    0x41,
    0xE9,
)
#: Literal pieces between escapes (kept inside a double-quoted scalar).
LITERALS = ("a", "use-pnpm", "é", "x y", "#", ": ", "redacted-identity-", "prop_", "-", "日本")

#: Where the escaped value goes: a key path into the builder's fields (an ``int`` is a list position), or
#: ``("<key>",)`` for a new key made of the escaped text.
RECORD_FIELDS: tuple[tuple[Any, ...], ...] = (
    ("id",),
    ("title",),
    ("description",),
    ("type",),
    ("lane",),
    ("timestamp",),
    ("status",),
    ("scope",),
    ("visibility",),
    ("content_class",),
    ("supersedes",),
    ("proposal_id",),
    ("lineage", "predecessor_id"),
    ("tags", 0),
    ("origin", "origin_key"),
    ("origin", "route"),
    ("scope_id",),
    ("source_ref",),
    ("updated",),
    ("applies_to", 0),
    ("retention", "class"),
    ("<key>",),
)
PACKET_FIELDS: tuple[tuple[Any, ...], ...] = (
    ("id",),
    ("title",),
    ("description",),
    ("status",),
    ("type",),
    ("lane",),
    ("proposal", "action"),
    ("proposal", "target"),
    ("proposal", "reason"),
    ("proposal", "proposed_by"),
    ("proposal", "proposed_at"),
    ("scope", "kind"),
    ("scope", "id"),
    ("supersedes", 0),
    ("sensitivity",),
    ("content_class",),
    ("origin", "origin_key"),
    ("timestamp",),
    ("tags", 0),
    ("<key>",),
)
#: (kind, folder or path builder) of the escaped file.
KINDS = ("record", "supersede", "tombstone", "create", "applied", "rejected")

_MARK = "zzescapedvaluezz"


def piece(kind: int, value: int) -> str:
    """One piece of an escaped scalar: ``kind`` 0 literal, 1 one-character escape, 2 ``\\x``, 3 ``\\u``,
    4 ``\\U``; ``value`` picks the literal, escape or code point (modulo their counts)."""
    kind %= 5
    if kind == 0:
        return LITERALS[value % len(LITERALS)]
    if kind == 1:
        return SIMPLE[value % len(SIMPLE)]
    point = POINTS[value % len(POINTS)]
    if kind == 2:
        return f"\\x{point & 0xFF:02X}"
    if kind == 3:
        return f"\\u{point & 0xFFFF:04X}"
    return f"\\U{point:08X}"


def scalar(pieces: list[tuple[int, int]]) -> str:
    """The YAML double-quoted scalar of ``pieces`` (see :func:`piece`), quotes included."""
    return '"' + "".join(piece(k, v) for k, v in pieces) + '"'


def _set(data: dict[str, Any], path: tuple[Any, ...], value: Any) -> None:
    node: Any = data
    for i, key in enumerate(path[:-1]):
        nxt = path[i + 1]
        if isinstance(node, dict):
            if not isinstance(node.get(key), (dict, list)):
                node[key] = [] if isinstance(nxt, int) else {}
            node = node[key]
    last = path[-1]
    if isinstance(last, int):
        node[:] = [value]
    else:
        node[last] = value


def escaped_file(
    kind: str, field: tuple[Any, ...], pieces: list[tuple[int, int]], rid: str = "escaped"
) -> tuple[str, str]:
    """``(project-relative path, text)`` of a ``kind`` file (a record, or a packet: ``create``, ``supersede``,
    ``tombstone`` pending, ``applied`` or ``rejected`` resolved) whose ``field`` holds :func:`scalar` of ``pieces``
    (the rest valid, from :mod:`tests.builders`)."""
    lit = scalar(pieces)
    key = field == ("<key>",)
    if kind == "record":
        data = builders.record_fields(rid)
        if not key:
            _set(data, field, _MARK)
        fields = {k: v for k, v in data.items() if k != "id"}
        text = builders.record(data["id"], extra=f"{lit}: x\n" if key else "", **fields)
        rel = builders.record_path(rid)
    else:
        action = kind if kind in ("create", "supersede", "tombstone") else "create"
        status = {"applied": "applied", "rejected": "rejected"}.get(kind, "proposed")
        target = None if action == "create" else "target-record"
        data = builders.packet_fields(rid, action=action, target=target, status=status)
        if not key:
            _set(data, field, _MARK)
        fields = {k: v for k, v in data.items() if k != "id"}
        text = builders.packet(data["id"], extra=f"{lit}: x\n" if key else "", **fields)
        folder = {"applied": "resolved/applied", "rejected": "resolved/rejected"}.get(kind, "pending")
        rel = builders.packet_path(rid, folder)
    if not key:
        quoted = f'"{_MARK}"'
        text = text.replace(quoted, lit, 1) if quoted in text.split("\n---\n", 1)[0] else text.replace(_MARK, lit, 1)
    return rel, text


def fields_of(kind: str) -> tuple[tuple[Any, ...], ...]:
    """The fields :func:`escaped_file` can put an escaped value in for ``kind``."""
    return RECORD_FIELDS if kind == "record" else PACKET_FIELDS


__all__ = [
    "KINDS",
    "PACKET_FIELDS",
    "POINTS",
    "RECORD_FIELDS",
    "SIMPLE",
    "escaped_file",
    "fields_of",
    "piece",
    "scalar",
]


# -- the pipeline an escaped file goes through ---------------------------------------------------------------------

#: The clean file written beside every escaped one: its finding must be in every report.
SENTINEL = ("sentinel-record", "missing_key")


def workspace(root) -> None:
    """A project at ``root`` (a ``Path``): a valid record named ``target-record`` (what the packets target) and
    the sentinel record, which lacks its ``lane`` (a ``missing_key`` every check must report)."""
    builders.write(root, builders.record_path("target-record"), builders.record("target-record"))
    builders.write(root, builders.record_path(SENTINEL[0]), builders.record(SENTINEL[0], lane=None))


def decoded_surrogate(pieces: list[tuple[int, int]]) -> bool:
    """Whether :func:`scalar` of ``pieces`` decodes to a string holding a lone surrogate (so the file must get an
    ``invalid_encoding``), and no escape past U+10FFFF stops the parse first."""
    codes = []
    for kind, value in pieces:
        point = POINTS[value % len(POINTS)]
        if kind % 5 == 4:
            if point > 0x10FFFF:
                return False
            codes.append(point)
        elif kind % 5 == 3:
            codes.append(point & 0xFFFF)
    return any(0xD800 <= c <= 0xDFFF for c in codes)


def check_outputs(report) -> list[str]:
    """Render ``report`` (a :class:`memzoi.runs.check.CheckReport`) in every format ``memzoi check`` writes and encode
    each as strict UTF-8, as a file or pipe would take it; returns the problems (format names that failed)."""
    import json

    from memzoi.cli import formats

    problems = []
    for name, render in (
        ("text", lambda: "".join(formats.text_line(l, False) + "\n" for l in report.findings)),
        ("github", lambda: "".join(formats.to_github(l) + "\n" for l in report.findings)),
        ("json", lambda: json.dumps(formats.to_json(report), ensure_ascii=False)),
    ):
        try:
            render().encode("utf-8")
        except Exception as err:  # noqa: BLE001 - reported, never raised
            problems.append(f"{name} output: {type(err).__name__}")
    return problems


def decoded(pieces: list[tuple[int, int]]) -> str:
    """The string :func:`scalar` of ``pieces`` decodes to (PyYAML's own parser, which keeps lone surrogates);
    an escape past U+10FFFF, which decodes to nothing, is dropped first."""
    import yaml

    kept = [(k, v) for k, v in pieces if not (k % 5 == 4 and POINTS[v % len(POINTS)] > 0x10FFFF)]
    return yaml.load(scalar(kept) if kept else '""', Loader=yaml.SafeLoader)
