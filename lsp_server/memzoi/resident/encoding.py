"""How a resident file's bytes become text and back: UTF-8 with or without a byte order mark, any one line-ending
style (LF, CRLF or CR), and the whitespace around its entries, all kept when memzoi writes the file again.

Zuno reads and writes its resident files as UTF-8 and splits them on ``"\\n§\\n"`` (reference ``zuno-memory.md``
§2). Its files are written by editors on every platform, so memzoi applies that rule to the file's *lines*: the
entries of a CRLF or CR file are the entries of the same file with LF line breaks (:mod:`.format` splits on a line
holding only ``§`` whatever ends it), entries are held with LF breaks, and a write puts back the file's own line
ending, byte order mark and leading and trailing whitespace (:class:`Layout`), so an edit of one entry leaves the
bytes of every other entry as they were and an undo gives back the exact bytes from before.

A file memzoi cannot read as UTF-8 text is refused, never guessed at and never written: a UTF-16 or UTF-32 byte
order mark, NUL bytes in the proportion UTF-16/32 text has (:data:`NUL_SHARE`), or bytes that are not UTF-8.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from ..read.text import RUST_WHITESPACE, rust_trim

BOM = b"\xef\xbb\xbf"
#: Byte order marks of the encodings Zuno cannot read, longest first (UTF-32 LE starts like UTF-16 LE).
FOREIGN_BOMS = (
    (b"\xff\xfe\x00\x00", "UTF-32 (little-endian)"),
    (b"\x00\x00\xfe\xff", "UTF-32 (big-endian)"),
    (b"\xff\xfe", "UTF-16 (little-endian)"),
    (b"\xfe\xff", "UTF-16 (big-endian)"),
)
#: A file at least this share of whose bytes are NUL is taken for UTF-16/32 without a byte order mark (ASCII text
#: in UTF-16 is half NUL bytes, in UTF-32 three quarters; UTF-8 text has none).
NUL_SHARE = 0.2
NEWLINES = {"\n": "LF", "\r\n": "CRLF", "\r": "CR"}
_NEWLINE = re.compile(r"\r\n|\r|\n")


def to_lf(text: str) -> str:
    """``text`` with every CRLF and CR line break made LF (the form entries are held in)."""
    return text.replace("\r\n", "\n").replace("\r", "\n") if "\r" in text else text


def line_endings(text: str) -> set[str]:
    """The line breaks ``text`` uses: a subset of ``{"\\n", "\\r\\n", "\\r"}``."""
    return set(_NEWLINE.findall(text)) if ("\n" in text or "\r" in text) else set()


def mixed_endings(text: str) -> str | None:
    """A description of the mixed line endings of ``text`` (e.g. ``"CRLF and LF"``), or ``None`` when it uses
    one style or none. A write could not keep such a file's bytes, so it is drift (:mod:`.store`)."""
    kinds = line_endings(text)
    if len(kinds) < 2:
        return None
    return " and ".join(sorted(NEWLINES[k] for k in kinds))


@dataclass(frozen=True)
class Layout:
    """What a write keeps of a resident file besides its entries: ``newline`` (``"\\n"``, ``"\\r\\n"`` or
    ``"\\r"``), ``bom`` (a UTF-8 byte order mark first), and the whitespace ``lead`` before the first entry and
    ``trail`` after the last, as they were (a whitespace-only file is all ``trail``). A new file has Zuno's
    layout: LF, no mark, no surrounding whitespace. ``seen`` says whether the file showed its line ending (it
    had a line break) and whether it had entries: what :meth:`fill` completes from a recorded layout."""

    newline: str = "\n"
    bom: bool = False
    lead: str = ""
    trail: str = ""
    seen: frozenset[str] = field(default=frozenset(), compare=False)

    def to_json(self) -> dict[str, Any]:
        """``{"newline", "bom", "lead", "trail"}``: what a candidate records (:meth:`from_json` reads it back)."""
        return {"newline": self.newline, "bom": self.bom, "lead": self.lead, "trail": self.trail}

    @classmethod
    def from_json(cls, data: dict[str, Any] | None) -> Layout | None:
        """The layout :meth:`to_json` recorded, or ``None`` for no (or a malformed) record."""
        if data is None:
            return None
        try:
            out = cls(str(data["newline"]), bool(data["bom"]), str(data["lead"]), str(data["trail"]))
        except (KeyError, TypeError):
            return None
        return out if out.newline in NEWLINES else None

    def fill(self, recorded: Layout | None) -> Layout:
        """This layout completed from ``recorded`` (the layout of the file the last reviewed write wrote) where
        the file no longer shows it: its line ending when it has no line break (a CRLF file reduced to one line),
        and the split of its whitespace into leading and trailing when it has no entries and holds exactly the
        recorded whitespace. The byte order mark and whatever the file shows are its own."""
        if recorded is None:
            return self
        out = self
        if "newline" not in self.seen:
            out = replace(out, newline=recorded.newline)
        if "entries" not in self.seen and not self.lead and self.trail == recorded.lead + recorded.trail:
            out = replace(out, lead=recorded.lead, trail=recorded.trail)
        return out

    def encode(self, serialized: str) -> bytes:
        """The file's bytes for ``serialized`` entries (LF breaks, :func:`.format.serialize`) in this layout."""
        body = serialized.replace("\n", self.newline) if self.newline != "\n" else serialized
        return (BOM if self.bom else b"") + (self.lead + body + self.trail).encode("utf-8")


def layout_of(text: str, bom: bool = False) -> Layout:
    """The :class:`Layout` of decoded ``text`` (without its byte order mark; ``bom`` says whether it had one).

    The line ending is the one the entries use; when they span no line, the one of the surrounding whitespace;
    LF when the file has none (or mixes several: such a file is refused as drift before any write)."""
    core = rust_trim(text)
    seen = frozenset(["newline"] if line_endings(text) else []) | frozenset(["entries"] if core else [])
    if not core:
        return Layout(_style(text), bom, "", text, seen)
    start = len(text) - len(text.lstrip(RUST_WHITESPACE))
    return Layout(
        _style(core) if line_endings(core) else _style(text), bom, text[:start], text[start + len(core) :], seen
    )


def _style(text: str) -> str:
    kinds = line_endings(text)
    return next(iter(kinds)) if len(kinds) == 1 else "\n"


def wide_encoding(data: bytes) -> str | None:
    """Why ``data`` is taken for UTF-16 or UTF-32 text (its byte order mark, or its share of NUL bytes), or
    ``None``."""
    for mark, name in FOREIGN_BOMS:
        if data.startswith(mark):
            return f"it starts with a {name} byte order mark"
    nuls = data.count(0)
    if nuls and nuls >= NUL_SHARE * len(data):
        return f"{nuls:,} of its {len(data):,} bytes are NUL, as in UTF-16 or UTF-32 text"
    return None


def foreign_encoding(data: bytes) -> str | None:
    """Why ``data`` is not UTF-8 text Zuno can read (:func:`wide_encoding`, or ``"it is not valid UTF-8 (invalid
    byte at offset N)"``), or ``None`` when it is."""
    wide = wide_encoding(data)
    if wide is not None:
        return wide
    try:
        data.decode("utf-8")
    except UnicodeDecodeError as err:
        return f"it is not valid UTF-8 (invalid byte at offset {err.start})"
    return None


def decode(data: bytes, path: Path) -> tuple[str, Layout]:
    """``(text, layout)`` of resident file bytes: the text without its UTF-8 byte order mark, line breaks as in
    the file. Raises :class:`Refusal` ``unreadable`` naming ``path``, why, and to re-save it as UTF-8, for bytes
    :func:`foreign_encoding` refuses (Zuno's ``Unreadable``: never read as empty, never written)."""
    from ..ledger import Refusal  # noqa: PLC0415 lazy: start-up - here: the format module imports this one, and the server loads it at start

    why = foreign_encoding(data)
    if why is not None:
        raise Refusal.of_local_path(
            "unreadable",
            f"{path}: {why}; Zuno reads resident memory only as UTF-8, so memzoi neither "
            "reads nor writes the file and leaves it as it is: re-save it as UTF-8 (with or without a "
            "byte order mark, any line endings) and retry",
            path,
        )
    bom = data.startswith(BOM)
    text = data[len(BOM) :].decode("utf-8") if bom else data.decode("utf-8")
    return text, layout_of(text, bom)
