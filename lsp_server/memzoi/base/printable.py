"""How a file-derived string (a path, an id, a title, a message quoting a file) is printed: the one place that
decides which characters a terminal line may hold and how the others are spelled.

A committed file name can hold anything but ``/`` and NUL: ESC sequences that clear the screen or set the
terminal's title (``ESC ] 0 ; … BEL``, ``ESC [ 2 J``), a newline that splits one entry over two lines, bidi
controls that reorder what the reviewer reads (Trojan Source, CVE-2021-42574), and bytes that are not UTF-8, which
Python's file-system calls decode as lone surrogates (``surrogateescape``: byte ``0xe9`` becomes U+DCE9).

The spelling, shared by every human output of the CLI (:func:`printable`):

* ``\\xHH`` — an ASCII control character (C0 and DEL, ``\\x1b``, ``\\x0a``), or, for HH ≥ 80, a byte of a file
  name that is not UTF-8 (``caf\\xe9.md`` names the file whose name holds byte 0xe9), as Python's ``bytes`` repr;
* ``\\uHHHH`` / ``\\UHHHHHHHH`` — any other character that is not printable (:meth:`str.isprintable`): C1
  controls (``\\u0085``), the bidi controls of :data:`BIDI_CONTROLS` (``\\u202e``), line and paragraph separators,
  zero-width and other format characters, spaces other than U+0020, private-use and unassigned code points;
* ``\\\\`` — a backslash that would otherwise read as the start of one of these escapes (it precedes ``\\``,
  ``x``, ``u``, ``U`` or an escaped character); every other backslash is printed as it is.

Every printable character (letters of every script, accents, emoji) is printed as it is. The spelling is lossless:
:func:`unescaped` gives back the original string. Machine formats (JSON, SARIF) escape control characters their own
way and give bidi controls as the code point (a JSON consumer sees the character, not a reordered line); only
the undecodable bytes of a path need a spelling there, :func:`lossless` (the same ``\\xHH``; a URI percent-encodes
the raw bytes instead).

This module imports only :mod:`memzoi.base.utf8`, so every core module may use it.
"""

from __future__ import annotations

import re

from .utf8 import encodable

#: The bidirectional formatting characters (Unicode UAX #9): ALM, LRM, RLM, LRE…RLO, LRI…PDI. All are format
#: characters (category Cf), so :func:`printable` escapes them; named here for the docs and tests.
BIDI_CONTROLS = frozenset("\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")

# Patterns, compiled on first use (re's cache), never at import (0.5 ms): printable text never needs them, and
# every command module imports this one to build its parser.
#: Candidates: a backslash, or any character outside printable ASCII (the callback decides).
_CANDIDATE = r"[^\x20-\x5b\x5d-\x7e]"
#: Any character outside printable ASCII (a block's backslashes are kept as they are).
_NON_ASCII_PRINTABLE = r"[^\x20-\x7e\t]"
#: Only what a machine format cannot carry: a backslash or a lone surrogate.
_LOSSLESS_CANDIDATE = "[\\\\\ud800-\udfff]"
#: The escapes :func:`unescaped` reads back.
_ESCAPE = r"\\(?:\\|x[0-9a-f]{2}|u[0-9a-f]{4}|U[0-9a-f]{8})"
_BACKSLASH_NEXT = frozenset("\\xuU")


def _spelled(c: str) -> str:
    o = ord(c)
    if o < 0x80:
        return f"\\x{o:02x}"
    if 0xDC80 <= o <= 0xDCFF:  # surrogateescape: the undecodable byte itself
        return f"\\x{o - 0xDC00:02x}"
    return f"\\u{o:04x}" if o <= 0xFFFF else f"\\U{o:08x}"


def _terminal(m: re.Match[str]) -> str:
    c = m.group()
    if c == "\\":
        nxt = m.string[m.end() : m.end() + 1]
        return "\\\\" if nxt in _BACKSLASH_NEXT or (nxt and not nxt.isprintable()) else "\\"
    return c if c.isprintable() else _spelled(c)


def _control(m: re.Match[str]) -> str:
    c = m.group()
    return c if c.isprintable() else _spelled(c)


def _machine(m: re.Match[str]) -> str:
    c = m.group()
    if c == "\\":
        nxt = m.string[m.end() : m.end() + 1]
        return "\\\\" if nxt in _BACKSLASH_NEXT or (nxt and "\ud800" <= nxt <= "\udfff") else "\\"
    return _spelled(c)


def printable(text: str) -> str:
    """``text`` (a path, id, title or one-line message) as one line of a terminal: every character that is not
    printable — C0 and C1 controls, DEL, line separators, bidi and other format characters, undecodable bytes of
    a file name — written as an escape (module docstring: ``\\x1b``, ``caf\\xe9``, ``\\u202e``), so a file name can
    neither drive the terminal nor split or reorder an entry. Lossless (:func:`unescaped`); never raises. Text
    that is printable and holds no backslash, the usual case, is returned as it is after two C-level scans."""
    if text.isprintable() and "\\" not in text:
        return text
    return re.sub(_CANDIDATE, _terminal, text)


def printable_block(text: str) -> str:
    """``text`` of several lines (a record's body, a diff) for a terminal: its characters spelled as
    :func:`printable` spells them, but line breaks (``\\n``) and tabs kept and backslashes left as they are (a
    block is read, not parsed back: a diff of ``\\\\`` must show ``\\\\``). A carriage return, which would let a
    line overwrite the one it follows, is escaped."""
    if text.replace("\n", "").replace("\t", "").isprintable():
        return text
    return "\n".join(re.sub(_NON_ASCII_PRINTABLE, _control, line) for line in text.split("\n"))


def lossless(text: str) -> str:
    """``text`` (a path) as a machine format (JSON) gives it: unchanged when it holds no lone surrogate, else
    each undecodable byte of a file name written ``\\xHH`` (and a backslash before an escape doubled), as
    :func:`printable` writes them, so the path names the real file instead of one with U+FFFD; control and bidi
    characters stay as they are (JSON escapes them its own way). Lossless for a string that holds a lone surrogate
    (:func:`unescaped`); a valid UTF-8 path is given as it is. Never raises."""
    if encodable(text):
        return text
    return re.sub(_LOSSLESS_CANDIDATE, _machine, text)


def unescaped(text: str) -> str:
    """The string :func:`printable` (or :func:`lossless`) spelled as ``text``: each escape read back, ``\\xHH`` of
    HH ≥ 80 as the undecodable byte (a lone surrogate, as ``os.fsdecode`` gives it), so ``os.fsencode`` of the
    result is the file name's bytes. Text without escapes is returned unchanged."""
    if "\\" not in text:
        return text

    def one(m: re.Match[str]) -> str:
        e = m.group()
        if e == "\\\\":
            return "\\"
        o = int(e[2:], 16)
        if o > 0x10FFFF:  # no code point: not an escape printable writes, kept as written
            return e
        return chr(0xDC00 + o if e[1] == "x" and o >= 0x80 else o)

    return re.sub(_ESCAPE, one, text)


__all__ = ["BIDI_CONTROLS", "lossless", "printable", "printable_block", "unescaped"]
