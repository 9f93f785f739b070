"""Findings that are properties of a file's bytes on disk, reported on an editor's text of that file.

An editor decodes a file itself (Neovim's ``fileencodings`` reads a Latin-1 record as latin1; VS Code with
``files.autoGuessEncoding``; Emacs coding systems; most strip a byte order mark) and sends the server the decoded
text, which is valid UTF-8 whatever the bytes were. ``memzoi check`` reads the bytes. So that both say the same
thing about the same file (SPEC promise 3), the findings of :data:`BYTE_CODES`, which only the bytes can give, are
taken from the file on disk (:func:`of_bytes`, or :func:`of_findings` from a stored first stage of the same bytes)
and merged into the analysis of the editor's text (:func:`editor_analysis`):

* a disk finding whose code the text's own findings already hold at the same place is not added twice (the text's
  own is kept: its span and quick fix are the editor's);
* a disk finding is placed on check's line of it, at the place of the bad byte in the editor's text of that line:
  after check's decoding of the line's bytes before it (an editor that decoded them as UTF-8, as VS Code does), or
  after their spelling in a one-byte encoding (Latin-1, Windows-1252: Neovim's ``fileencodings`` falls back to
  ``latin1``, where each byte is one character), with or without the byte order mark the editor may have stripped;
  else at check's column when that line has it, else at the start of line 0. It never carries a quick fix, whose
  edits are offsets of check's decoding, not of the editor's text;
* an editor text over :data:`~memzoi.judge.analysis.MAX_FILE_BYTES` (encoded as UTF-8) gets ``file_too_large``
  from the text itself, with or without a file on disk.

Every function is pure and total.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Iterable
from dataclasses import dataclass

import blake3

from ..base.findings import Finding
from ..read.document import bom_finding
from ..read.text import BOM, LineIndex, decode
from .analysis import MAX_FILE_BYTES, Analysis, scan_only, too_large
from .binary import bounded
from .workspace import Placement, Role

#: The codes only a file's bytes give (docs/diagnostics.md, "Framing and YAML"): bytes that are not UTF-8, a UTF-8
#: byte order mark (editors strip it from the text they send), a file over the size limit. Every other code is a
#: property of the text (the same for the same text, however it was decoded) or of the path.
BYTE_CODES = frozenset({"invalid_encoding", "bom", "file_too_large"})

_BOM_BYTES = b"\xef\xbb\xbf"


@dataclass(frozen=True, slots=True)
class Placed:
    """One finding of the bytes on disk with its 0-based ``(line, column)`` (code points) in check's decoding;
    ``before``: check's decoding of that line up to the finding (an ``invalid_encoding`` read from the bytes: all
    valid UTF-8, as the finding is on the first bad byte), ``None`` where not known (a stored first stage)."""

    finding: Finding
    line: int
    column: int
    before: str | None = None


@dataclass(frozen=True, slots=True)
class DiskBytes:
    """The :data:`BYTE_CODES` findings of one file's bytes on disk (``placed``, in file order) and a ``revision``
    string that differs for different bytes (a BLAKE3 digest, or a stored first stage's revision)."""

    revision: str
    placed: tuple[Placed, ...]


def of_bytes(data: bytes) -> DiskBytes:
    """The :data:`BYTE_CODES` findings ``memzoi check`` gives the file of bytes ``data``
    (:func:`memzoi.judge.analysis.analyze_bytes`'s decoding and size limit, :func:`memzoi.read.document.frame`'s
    byte order mark, and :func:`memzoi.judge.binary.bounded`'s wording for a file that is not text) without
    analysing the file. Never raises."""
    decoded = decode(data)
    found = list(decoded.findings)
    if data.startswith(_BOM_BYTES):
        found.append(bom_finding())
    if len(data) > MAX_FILE_BYTES:
        found.append(too_large(len(data), decoded.text))
    found = bounded(decoded.text, found)  # as analyze_bytes gives them for a file that is not text
    end = max((f.end for f in found), default=0)
    head = decoded.text[: end + 1]
    return of_findings(found, LineIndex(head), blake3.blake3(data).hexdigest(), head)


def of_findings(own: Iterable[Finding], lines: LineIndex, revision: str, text: str | None = None) -> DiskBytes:
    """The :data:`BYTE_CODES` findings among ``own`` (the findings of the file's bytes, e.g. a stored first stage's
    ungraded own findings), placed by ``lines`` (the line index of check's decoding of the bytes; one made from
    line starts alone will do). ``revision``: as in :class:`DiskBytes`. ``text``: check's decoding (at least up
    to the findings), which gives an ``invalid_encoding`` its :attr:`Placed.before`."""
    placed = []
    for f in own:
        if f.code in BYTE_CODES:
            line, column = lines.position(f.start)
            before = text[f.start - column : f.start] if text is not None and f.code == "invalid_encoding" else None
            placed.append(Placed(f, line, column, before))
    placed.sort(key=lambda p: (p.line, p.column, p.finding.code))
    return DiskBytes(revision, tuple(placed))


def editor_findings(text: str, found: list[Finding], disk: DiskBytes | None, *, framed: bool = True) -> list[Finding]:
    """``found`` (the findings of the editor's ``text``) with the disk's byte findings and the text's own
    ``file_too_large`` merged in, sorted by position (see the module docstring for the rules). ``framed``: the
    file is read as a record or packet (its frontmatter framed: ``bom`` applies), not only scanned."""
    out = list(found)
    codes = {f.code for f in found}
    if "file_too_large" not in codes and _too_large(text):
        out.append(too_large(len(text.encode("utf-8", "surrogatepass")), text))
        codes.add("file_too_large")
    if disk is not None and disk.placed:
        index = LineIndex(text)
        taken = {(f.code, f.start) for f in out}
        for p in disk.placed:
            f = p.finding
            if f.code == "bom" and not framed:
                continue
            if f.code != "invalid_encoding" and f.code in codes:
                continue  # one per file: the text's own (a BOM the editor kept, a text over the limit)
            start, end = _mapped(index, p, f.end - f.start)
            if (f.code, start) in taken:
                continue
            taken.add((f.code, start))
            out.append(dataclasses.replace(f, start=start, end=end, fixes=()))
    if len(out) == len(found):
        return found
    return sorted(out, key=lambda f: (f.start, f.end, f.code))


def editor_analysis(analysis: Analysis, path: str | os.PathLike[str] | None, disk: DiskBytes | None) -> Analysis:
    """``analysis`` (of an editor's text of the file at ``path``, :func:`memzoi.judge.analysis.analyze_text`) with
    :func:`editor_findings` merged in: the same object when nothing is added, else a copy."""
    text = analysis.text
    framed = not _scanned(text, path, analysis.placement)
    merged = editor_findings(text, analysis.findings, disk, framed=framed)
    if merged is analysis.findings:
        return analysis
    return dataclasses.replace(analysis, findings=merged)


def _scanned(text: str, path: str | os.PathLike[str] | None, placement: Placement) -> bool:
    """True when the file is only scanned, never framed as a record or packet (so check gives it no ``bom``)."""
    return placement.role is Role.RESERVED or scan_only(text, path, placement)


def _too_large(text: str) -> bool:
    """``text`` takes more than :data:`MAX_FILE_BYTES` as UTF-8 (encoded only when its length cannot tell: a code
    point takes one to four bytes)."""
    if len(text) > MAX_FILE_BYTES:
        return True
    if 4 * len(text) <= MAX_FILE_BYTES:
        return False
    return len(text.encode("utf-8", "surrogatepass")) > MAX_FILE_BYTES


def _mapped(index: LineIndex, placed: Placed, width: int) -> tuple[int, int]:
    """``(start, end)`` in the editor's text of a disk finding ``width`` code points wide: on its line, after the
    spelling of :attr:`Placed.before` that the line starts with (:func:`_spellings`), else at its column when that
    line of the text has that column, else at the start of line 0; the end kept within the line."""
    line, column = placed.line, placed.column
    if line >= index.line_count:
        line, column = 0, 0
    else:
        first, end = index.line_span(line)
        shown = index.text[first:end] if index.text is not None else ""
        found = next((len(s) for s in _spellings(placed.before, line == 0) if shown.startswith(s)), None)
        if found is not None:
            column = found
        elif index.offset(line, column) != first + column:
            line, column = 0, 0
    start = index.offset(line, column)
    return start, index.offset(line, column + max(width, 0))


def _spellings(before: str | None, first_line: bool) -> list[str]:
    """How an editor may show ``before`` (check's UTF-8 decoding of a line's bytes up to a bad byte): as decoded
    (VS Code reads a file that is not UTF-8 as UTF-8 with replacement characters), or each byte as one character of
    Latin-1 or Windows-1252 (Neovim's ``latin1`` fallback, an editor's guessed encoding); on the first line also
    without a byte order mark (editors strip it). Most likely first; none for ``None``."""
    if before is None:
        return []
    texts = [before, before[1:]] if first_line and before.startswith(BOM) else [before]
    out: list[str] = []
    for text in texts:
        out.append(text)
        if not text.isascii():  # an ASCII line reads alike in every one of them
            raw = text.encode("utf-8")
            out.append(raw.decode("latin-1"))
            try:
                out.append(raw.decode("cp1252"))
            except UnicodeDecodeError:  # a byte Windows-1252 leaves undefined: not a spelling of it
                pass
    return out


__all__ = ["BYTE_CODES", "DiskBytes", "Placed", "editor_analysis", "editor_findings", "of_bytes", "of_findings"]
