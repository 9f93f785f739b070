"""The facts blob of a project's verdict cache (:mod:`memzoi.stores.verdictcache`): the cross-file facts of every cached
file of the project in one row, so a check of a few files reads the facts of all the others in one query instead
of one entry (and one JSON payload) per file.

Table ``facts (ctx, blob)`` of the same database, one row per context stamp (other stamps are deleted with their
entries). ``blob`` is the JSON object ``{path key: [size, mtime_ns, ino, ctime_ns, checked_ns, facts, digest]}``: for
each entry, the stat it was made from, its facts as the payload keeps them (:mod:`memzoi.stores.verdictpayload`) and
the hex BLAKE3 digest of those bytes (so that a stored report resting on the item can confirm it by reading, as
for an entry: :func:`memzoi.runs.checkreplay.others_stamp`; an item without one, ``""``, is never confirmed). An item is
used only when the stat vouches for the file by the rule an entry is trusted by without reading
(:func:`memzoi.base.freshness.vouches`); otherwise the file's entry decides, as for any file. So the blob never vouches for bytes the entries would not. Besides the entries'
facts it keeps those of files that get no entry when :func:`memzoi.stores.verdictpayload.kept_facts` allows it (a stale
attestation), so that a check of a few files does not analyse them again; a file with a secret finding, or read
through a symlink, keeps nothing.

The table is added beside ``entries`` (``CREATE TABLE IF NOT EXISTS``) without changing the entries' format: a
reader that does not know it ignores it.

A run that needs the items of a few files (re-judging a few changed files, :mod:`memzoi.runs.checkpartial`) reads
the blob as text (:class:`LazyBlob`): an item is decoded when it is asked for, and the run's changes are written
into the text item by item (:meth:`LazyBlob.spliced`) instead of decoding and encoding every item (at 10,000 files
that was 0.09 s of CPU for one changed file).
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterable, Sequence
from typing import Any

import blake3

FACTS_SCHEMA = (
    "CREATE TABLE IF NOT EXISTS facts (ctx TEXT PRIMARY KEY, blob TEXT NOT NULL, sum BLOB NOT NULL) WITHOUT ROWID"
)

#: key -> [size, mtime_ns, ino, ctime_ns, checked_ns, facts list, digest hex]
Blob = dict[str, list[Any]]
#: After this many items asked for, a :class:`LazyBlob` decodes the whole blob once (a check of a few files asks
#: for every other file's facts).
EAGER_AFTER = 32
_DECODER = json.JSONDecoder()


def _text(conn: sqlite3.Connection, stamp: str) -> str | None:
    """The text of the blob stored under ``stamp`` when its checksum matches. Raises ``sqlite3.Error``."""
    row = conn.execute("SELECT blob, sum FROM facts WHERE ctx = ?", (stamp,)).fetchone()
    if row is None or _sum(stamp, row[0]) != row[1] or not isinstance(row[0], str):
        return None  # none, or damaged or edited: a miss, never facts
    return row[0]


def read_blob(conn: sqlite3.Connection, stamp: str) -> Blob | None:
    """The blob stored under the context ``stamp``, or ``None`` (none stored, unreadable, its checksum does not
    match, or not one we wrote). Never raises for a database problem."""
    try:
        text = _text(conn, stamp)
        blob = json.loads(text) if text is not None else None
    except (sqlite3.Error, ValueError, TypeError):
        return None
    return blob if isinstance(blob, dict) else None


def read_lazy(conn: sqlite3.Connection, stamp: str) -> LazyBlob | None:
    """:func:`read_blob` as a :class:`LazyBlob` (its text; nothing decoded yet). Never raises for a database
    problem."""
    try:
        text = _text(conn, stamp)
    except sqlite3.Error:
        return None
    return LazyBlob(text) if text is not None and text.startswith("{") and text.endswith("}") else None


def _span(text: str, key: str) -> tuple[int, int, list[Any]] | None:
    """Where the item of ``key`` lies in a blob's ``text``: the start of its key, the end of its value and the
    value; ``None`` when it has none. A key is 64 hex digits and facts hold no JSON object, so ``"key":[`` after
    ``{`` or ``,`` is found only where the item is (inside a string a quote is escaped)."""
    needle = f'"{key}":['
    at = text.find(needle)
    while at > 0 and text[at - 1] not in "{,":
        at = text.find(needle, at + 1)
    if at <= 0:
        return None
    try:
        value, end = _DECODER.raw_decode(text, at + len(needle) - 1)
    except ValueError:
        return None
    return (at, end, value) if isinstance(value, list) else None


class LazyBlob:
    """A facts blob kept as its stored text (see the module docstring): :meth:`get` decodes the item asked for
    (every item at once from the :data:`EAGER_AFTER`-th on), :meth:`spliced` gives the text with some items
    replaced, added or removed."""

    def __init__(self, text: str) -> None:
        self.text = text
        self._items: Blob = {}
        self._whole: Blob | None = None

    def whole(self) -> Blob:
        """Every item, decoded (once). Raises ``ValueError`` for a text that is not a blob."""
        if self._whole is None:
            got = json.loads(self.text)
            if not isinstance(got, dict):
                raise ValueError("not a facts blob")
            self._whole = got
        return self._whole

    def get(self, key: str) -> list[Any] | None:
        """The item of ``key`` (``[size, mtime_ns, ino, ctime_ns, checked_ns, facts, digest]``), ``None`` without
        one."""
        if self._whole is None and key not in self._items and len(self._items) >= EAGER_AFTER:
            try:
                self.whole()
            except ValueError:
                return None
        if self._whole is not None:
            return self._whole.get(key)
        if key not in self._items:
            found = _span(self.text, key)
            if found is None:
                return None
            self._items[key] = found[2]
        return self._items[key]

    def spliced(self, put: dict[str, str], drop: Iterable[str]) -> str:
        """The blob's text with the item of each key of ``put`` replaced by its text (:func:`item_text`; ``""``
        removes it) or added, and the items of ``drop`` removed; this object then holds that text. Items are
        written where they were, so the text is what encoding the changed blob gives, but for the order of added
        items."""
        text = self.text
        edits = {**dict.fromkeys(drop, ""), **put}
        found = {key: _span(text, key) for key in edits}
        added = [edits[key] for key, at in found.items() if at is None]
        for start, end, key in sorted(((at[0], at[1], k) for k, at in found.items() if at is not None), reverse=True):
            if edits[key]:
                text = text[:start] + edits[key] + text[end:]
            elif text[start - 1] == ",":  # removed with the comma before it, or (the first item) after it
                text = text[: start - 1] + text[end:]
            else:
                text = text[:start] + text[end + (text[end] == ",") :]
        added = [a for a in added if a]
        if added:
            text = text[:-1] + ("," if text != "{}" else "") + ",".join(added) + "}"
        self.text, self._items, self._whole = text, {}, None
        return text


def _sum(stamp: str, text: object) -> bytes:
    """The checksum stored with a blob: BLAKE3 (16 bytes) of its stamp and text."""
    data = text.encode("utf-8", "surrogatepass") if isinstance(text, str) else b"\xff"
    return blake3.blake3(stamp.encode() + b"\0" + data).digest(16)


def payload_facts(payload: str) -> list[Any]:
    """The facts list of an entry's payload (its sixth value). Raises ``ValueError``, ``TypeError`` or
    ``IndexError`` for a payload that is not one."""
    facts: list[Any] = json.loads(payload)[5]
    return facts


def updated(blob: Blob, put: Iterable[Any], drop: Iterable[str]) -> Blob:
    """``blob`` with the entries ``put`` (:class:`memzoi.stores.verdictcache.Entry`) set and the keys ``drop`` removed
    (changed in place and returned); an entry whose payload cannot be read is removed instead."""
    for key in drop:
        blob.pop(key, None)
    for e in put:
        try:
            facts = payload_facts(e.payload)
            blob[e.key] = [e.size, e.mtime_ns, e.ino, e.ctime_ns, e.checked_ns, facts, e.digest.hex()]
        except (ValueError, TypeError, IndexError):
            blob.pop(e.key, None)
    return blob


def item_text(key: str, stat: Sequence[int], facts: list[Any], digest: str) -> str:
    """One item of a blob's text: ``"key":[size,mtime_ns,ino,ctime_ns,checked_ns,facts,"digest"]`` (``stat`` holds
    the five numbers, ``digest`` the hex BLAKE3 of the bytes), as ``json.dumps`` of the whole blob writes it."""
    numbers = ",".join(str(int(n)) for n in stat)
    return f"{json.dumps(key)}:[{numbers},{json.dumps(facts, separators=(',', ':'))},{json.dumps(digest)}]"


def entry_item(key: str, stat: Sequence[int], payload: str, digest: bytes) -> str:
    """:func:`item_text` of an entry with the facts of its ``payload`` and its ``digest``; ``""`` (left out) when the
    payload cannot be read, as :func:`updated` leaves such an entry out."""
    try:
        return item_text(key, stat, payload_facts(payload), digest.hex())
    except (ValueError, TypeError, IndexError, AttributeError):
        return ""


def put_item(e: Any) -> str:
    """:func:`entry_item` of the entry ``e`` (:class:`memzoi.stores.verdictcache.Entry`)."""
    return entry_item(e.key, (e.size, e.mtime_ns, e.ino, e.ctime_ns, e.checked_ns), e.payload, e.digest)


def facts_item(key: str, item: list[Any]) -> str:
    """:func:`item_text` of a blob ``item`` kept under ``key``."""
    return item_text(key, item[:5], item[5], item_digest(item))


def spliced(blob: LazyBlob, put: Iterable[Any], put_facts: Blob, drop: Iterable[str]) -> str:
    """The text of ``blob`` with the entries ``put`` (:class:`memzoi.stores.verdictcache.Entry`) and the items
    ``put_facts`` set and the keys ``drop`` removed, written item by item (:meth:`LazyBlob.spliced`); an entry whose
    payload cannot be read is removed, as :func:`updated` does."""
    items = {e.key: put_item(e) for e in put}
    items.update({k: facts_item(k, i) for k, i in put_facts.items()})
    return blob.spliced(items, drop)


def item_digest(item: list[Any]) -> str:
    """The hex digest an item keeps (``""`` for one without)."""
    digest = item[6] if len(item) > 6 else ""
    return digest if isinstance(digest, str) else ""


def blob_text(items: Iterable[str]) -> str:
    """The text of a blob made of ``items`` (:func:`item_text`; empty ones are left out)."""
    return "{" + ",".join(i for i in items if i) + "}"


def write_blob(conn: sqlite3.Connection, stamp: str, blob: Blob | str) -> None:
    """Store ``blob`` (or its text, :func:`blob_text`) under ``stamp`` and drop the blobs of other stamps, inside
    the caller's transaction. Raises ``sqlite3.Error``."""
    text = blob if isinstance(blob, str) else json.dumps(blob, separators=(",", ":"))
    conn.execute("INSERT OR REPLACE INTO facts VALUES (?, ?, ?)", (stamp, text, _sum(stamp, text)))
    conn.execute("DELETE FROM facts WHERE ctx != ?", (stamp,))


__all__ = [
    "EAGER_AFTER",
    "FACTS_SCHEMA",
    "Blob",
    "LazyBlob",
    "blob_text",
    "entry_item",
    "facts_item",
    "item_digest",
    "item_text",
    "payload_facts",
    "read_blob",
    "put_item",
    "read_lazy",
    "spliced",
    "updated",
    "write_blob",
]
