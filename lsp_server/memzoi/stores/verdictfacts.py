"""The facts blob of a project's verdict cache (:mod:`memzoi.stores.verdictcache`): the cross-file facts of every cached
file of the project in one row, so a check of a few files reads the facts of all the others in one query instead
of one entry (and one JSON payload) per file.

Table ``facts (ctx, blob)`` of the same database, one row per context stamp (other stamps are deleted with their
entries). ``blob`` is the JSON object ``{path key: [size, mtime_ns, ino, ctime_ns, checked_ns, facts]}``: for each
entry, the stat it was made from and its facts as the payload keeps them (:mod:`memzoi.stores.verdictpayload`). An item is
used only when the stat vouches for the file by the rule an entry is trusted by without reading
(:func:`memzoi.base.freshness.vouches`); otherwise the file's entry decides, as for any file. So the blob never vouches for bytes the entries would not. Besides the entries'
facts it keeps those of files that get no entry when :func:`memzoi.stores.verdictpayload.kept_facts` allows it (a stale
attestation), so that a check of a few files does not analyse them again; a file with a secret finding, or read
through a symlink, keeps nothing.

The table is added beside ``entries`` (``CREATE TABLE IF NOT EXISTS``) without changing the entries' format: a
reader that does not know it ignores it.
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

#: key -> [size, mtime_ns, ino, ctime_ns, checked_ns, facts list]
Blob = dict[str, list[Any]]


def read_blob(conn: sqlite3.Connection, stamp: str) -> Blob | None:
    """The blob stored under the context ``stamp``, or ``None`` (none stored, unreadable, its checksum does not
    match, or not one we wrote). Never raises for a database problem."""
    try:
        row = conn.execute("SELECT blob, sum FROM facts WHERE ctx = ?", (stamp,)).fetchone()
        if row is not None and _sum(stamp, row[0]) != row[1]:
            return None  # damaged or edited: a miss, never facts
        blob = json.loads(row[0]) if row is not None else None
    except (sqlite3.Error, ValueError, TypeError):
        return None
    return blob if isinstance(blob, dict) else None


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
            blob[e.key] = [e.size, e.mtime_ns, e.ino, e.ctime_ns, e.checked_ns, payload_facts(e.payload)]
        except (ValueError, TypeError, IndexError):
            blob.pop(e.key, None)
    return blob


def item_text(key: str, stat: Sequence[int], facts: list[Any]) -> str:
    """One item of a blob's text: ``"key":[size,mtime_ns,ino,ctime_ns,checked_ns,facts]`` (``stat`` holds the five
    numbers), as ``json.dumps`` of the whole blob writes it."""
    numbers = ",".join(str(int(n)) for n in stat)
    return f"{json.dumps(key)}:[{numbers},{json.dumps(facts, separators=(',', ':'))}]"


def entry_item(key: str, stat: Sequence[int], payload: str) -> str:
    """:func:`item_text` of an entry with the facts of its ``payload``; ``""`` (left out) when the payload cannot be
    read, as :func:`updated` leaves such an entry out."""
    try:
        return item_text(key, stat, payload_facts(payload))
    except (ValueError, TypeError, IndexError):
        return ""


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
    "FACTS_SCHEMA",
    "Blob",
    "blob_text",
    "entry_item",
    "item_text",
    "payload_facts",
    "read_blob",
    "updated",
    "write_blob",
]
