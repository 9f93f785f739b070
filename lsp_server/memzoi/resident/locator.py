"""Operations on resident entries and how a locator selects an entry (reference ``zuno-memory.md`` §2, §4).

An operation is ``add`` (append ``content``), ``replace`` (swap the located entry for ``content`` in place) or
``remove`` (delete the located entry). The locator (``old_text``) is a plain, case-sensitive substring: no entry
containing it is ``no_match`` (the entries are listed); two or more *different* entries containing it is
``ambiguous_locator``; identical duplicates are not ambiguous and the first is used. Adding an entry that already
exists changes nothing. Every failure is a :class:`~memzoi.ledger.Refusal` raised before any file is touched.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..base.utf8 import encodable
from ..base.vocabulary import RESIDENT_ACTIONS as ACTIONS
from ..ledger import Refusal
from ..read.text import rust_trim
from .encoding import to_lf
from .format import DELIMITER, char_count, parse, serialize

_PREVIEW = 80


@dataclass(frozen=True)
class Operation:
    """A validated operation: ``content`` and ``old_text`` trimmed; ``None`` where the action takes none."""

    action: str
    content: str | None = None
    old_text: str | None = None


def parse_operation(action: str, content: str | None, old_text: str | None) -> Operation:
    """Validate one operation (Zuno ``Operation::parse``); raises :class:`Refusal` ``malformed_operation``.

    ``add`` needs ``content``; ``replace`` needs ``old_text`` and ``content``; ``remove`` needs ``old_text``
    (its ``content`` is ignored). Texts are trimmed as Rust trims (Unicode White_Space) and their CRLF and CR
    line breaks made LF, the form entries are held in (:mod:`.encoding`; a write puts back the file's own line
    ending). Content with a line holding only ``§`` (the delimiter) is refused with that reason.
    """
    body = to_lf(rust_trim(content or "")) or None
    locator = to_lf(rust_trim(old_text or "")) or None
    refuse_unencodable(action=action, content=body, old_text=locator)
    if action not in ACTIONS:
        raise Refusal("malformed_operation", f"unknown action `{action}`; use add, replace, or remove")
    if action in ("replace", "remove") and locator is None:
        raise Refusal("malformed_operation", f"{action}: old_text is required to locate the entry")
    if action == "add" and body is None:
        raise Refusal("malformed_operation", "add: content is required")
    if action == "replace" and body is None:
        raise Refusal("malformed_operation", "replace: content is required; use action 'remove' to delete an entry")
    if body is not None and action != "remove":
        _refuse_delimiter_lines(action, body)
    if action == "add":
        return Operation("add", body, None)
    return Operation(action, body if action == "replace" else None, locator)


def refuse_unencodable(**values: str | None) -> None:
    """Refuse with ``invalid_encoding`` when one of ``values`` (named by its keyword) holds a lone surrogate (a
    JSON ``\\ud800`` escape from a client): Zuno's files and its candidate database hold UTF-8, which cannot
    encode it."""
    for name, value in values.items():
        if value is not None and not encodable(value):
            raise Refusal(
                "invalid_encoding",
                f"`{name}` holds a lone surrogate (U+D800–U+DFFF, no Unicode "
                "character), which cannot be written as UTF-8; remove it or write the character it stands for",
            )


def _refuse_delimiter_lines(action: str, content: str) -> None:
    """Refuse content with a line holding only ``§``: that line is the entry delimiter (reference §2), so the
    entry would be split in two, or merged with its neighbour, the next time the file is read."""
    delimiter = DELIMITER.strip("\n")
    for number, line in enumerate(content.split("\n"), 1):
        if line == delimiter:
            raise Refusal(
                "malformed_operation",
                f"{action}: line {number} of the content holds only §, which is the "
                "delimiter between resident entries (a line holding only § separates entries), so the "
                "entry would not read back as written; keep § inside a line (e.g. `see § 4`) or remove "
                "that line",
            )


def preview(entry: str) -> str:
    """An entry shortened to one line for messages (entries never hold secrets: they passed the scan)."""
    line = " ".join(entry.split())
    return line if len(line) <= _PREVIEW else line[: _PREVIEW - 1] + "\u2026"


def _listing(entries: list[str]) -> str:
    if not entries:
        return "the file has no entries"
    return "entries: " + "; ".join(f"[{i + 1}] {preview(e)}" for i, e in enumerate(entries))


def locate(entries: list[str], old_text: str) -> int:
    """Index of the entry ``old_text`` selects (Zuno ``store.rs`` ``locate``).

    Raises :class:`Refusal` ``no_match`` (entries listed) or ``ambiguous_locator`` (the distinct matches listed).
    """
    hits = [i for i, e in enumerate(entries) if old_text in e]
    if not hits:
        raise Refusal("no_match", f"no entry contains the locator `{preview(old_text)}`; {_listing(entries)}")
    distinct = list(dict.fromkeys(entries[i] for i in hits))
    if len(distinct) > 1:
        raise Refusal(
            "ambiguous_locator",
            f"the locator `{preview(old_text)}` matches {len(distinct)} different entries; be more specific: "
            + "; ".join(f"[{i + 1}] {preview(entries[i])}" for i in hits),
        )
    return hits[0]


def project(entries: list[str], op: Operation) -> list[str]:
    """The entries after ``op`` (a new list; ``entries`` is not changed). Raises :class:`Refusal` for a locator
    that selects nothing or is ambiguous."""
    out = list(entries)
    content = op.content  # parse_operation gives add and replace their content; checked again here
    if op.action == "add":
        if content is None:
            raise Refusal("malformed_operation", "add: content is required")
        if content in out:
            return out
        out.append(content)
    else:
        index = locate(out, op.old_text or "")
        if op.action == "replace":
            if content is None:
                raise Refusal(
                    "malformed_operation", "replace: content is required; use action 'remove' to delete an entry"
                )
            out[index] = content
        else:
            del out[index]
    if parse(serialize(out)) != out:
        # Zuno refuses content that would not read back as written (its RoundTrip signal, before any write)
        raise Refusal(
            "malformed_operation",
            "the content would not read back as one entry: a line holding only "
            "§ separates entries; write § inside a line instead",
        )
    return out


def check_cap(scope: str, entries: list[str], cap: int, current: list[str]) -> None:
    """Refuse (``cap_exceeded``, the ``current`` entries listed) when the serialized ``entries`` exceed ``cap``
    characters. Nothing is ever evicted (Zuno ``CapExceeded``)."""
    used = char_count(entries)
    if used > cap:
        raise Refusal(
            "cap_exceeded",
            f"the {scope} resident memory would hold {used:,} characters, over its cap of {cap:,}; nothing is "
            f"evicted: remove or shorten an entry first (a replace can consolidate); {_listing(current)}",
        )
