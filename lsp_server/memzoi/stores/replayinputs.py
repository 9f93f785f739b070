"""The inputs a stored report of ``memzoi check`` was made from (:class:`Inputs`, :mod:`memzoi.stores.replay`
holds the rule) and their stored form (:func:`encode`, :func:`decode`).

The stored form is read by every replay and written by every partial run, so it is made to be read fast: what
takes most of its room, each file's path and stamp, is not one JSON text to parse but three parts: the paths
(joined by NUL and compressed: they share long prefixes), the stamps' numbers (packed little-endian 64-bit
integers, five per file) and the digests (their 32 bytes each, or joined by NUL where one is not a BLAKE3 hex
digest). The other inputs are a small compressed JSON text. At
10,000 files the JSON text of an earlier layout took some 23 ms to decompress and parse, this one some 8 ms; it is
written a batch of files at a time, never holding the paths' text whole.
"""

from __future__ import annotations

import itertools
import json
import struct
import zlib
from dataclasses import dataclass, field
from typing import Any

from ..base.freshness import stamp_list
from .walklisting import Listing

#: ``path -> [size, mtime_ns, ino, ctime_ns, checked_ns, digest hex]`` of the bytes each file's verdict was made from;
#: a run that made them may hold one packed instead (:func:`memzoi.base.freshness.pack_stamp`, ``stamp_list``).
Stamps = dict[str, list[Any] | bytes]

#: The first bytes of the stored form (a row of another layout is not read: a miss).
MAGIC = b"memzoi-replay-inputs.v3\0"
#: The count of files and the lengths of the four parts after :data:`MAGIC`.
_HEADER = struct.Struct("<5Q")
#: One file's stamp numbers: size (-1 for a file whose bytes are unknown), mtime, inode (unsigned), ctime, checked.
_NUMBERS = struct.Struct("<qqQqq")
#: Files encoded together.
_BATCH = 4096


@dataclass
class Inputs:
    """The inputs a stored report was made from: ``walk`` (:func:`memzoi.stores.replay.walk_digest`), ``projects``
    (:func:`memzoi.stores.replay.project_inputs` of ``roots``: project root → the folders of its checked files),
    ``stamps`` (each file's bytes), ``until_us`` (the earliest retention boundary, microseconds since the epoch;
    ``None`` for none) and ``links``: the cross-file keys (:func:`memzoi.project.crossfile.related_keys`, as
    :func:`memzoi.stores.replay.link_key` stores them) of each file of ``stamps``, in its order
    (:func:`memzoi.stores.replay.pack_links`), so that a run re-judging a few changed files finds the files they
    touch (``None``: not kept, such a run judges every file); ``planes``: for a check of a few files, the
    ``.memzoi`` directories whose other records and packets gave cross-file facts (their listing is part of
    ``walk``, their files are in ``stamps``); ``listing``: the walk's folders as it listed them
    (:mod:`memzoi.stores.walklisting`), when what it found follows from those listings alone."""

    walk: str
    projects: str
    stamps: Stamps
    until_us: int | None
    roots: dict[str, list[str]]
    links: str | None = None
    planes: list[str] = field(default_factory=list)
    listing: Listing | None = None


def encode(inputs: Inputs) -> bytes:
    """The stored form of ``inputs`` (see the module docstring). Raises ``ValueError`` for inputs it cannot keep: a
    path or digest holding a NUL, a stamp number outside 64 bits, a stamp that is not six values."""
    fields = [inputs.walk, inputs.projects, inputs.until_us, inputs.roots, inputs.links, inputs.planes, inputs.listing]
    head = zlib.compress(json.dumps(fields, separators=(",", ":")).encode("utf-8", "surrogateescape"), 1)
    squeeze = zlib.compressobj(1)
    paths = bytearray()
    numbers = bytearray()
    digests: list[bytes] = []
    items = iter(inputs.stamps.items())
    first = True
    try:
        while batch := [(p, stamp_list(v)) for p, v in itertools.islice(items, _BATCH)]:
            if any(len(s) != 6 for _, s in batch):
                raise ValueError("a stamp is six values")
            names = "\0".join([p for p, _ in batch])
            hexes = "\0".join([s[5] for _, s in batch])
            if names.count("\0") != len(batch) - 1 or hexes.count("\0") != len(batch) - 1:
                raise ValueError("a path or digest holds a NUL")
            paths += squeeze.compress((b"" if first else b"\0") + names.encode("utf-8", "surrogateescape"))
            digests.append((b"" if first else b"\0") + hexes.encode("utf-8", "surrogateescape"))
            numbers += b"".join([_NUMBERS.pack(*s[:5]) for _, s in batch])
            first = False
    except (struct.error, TypeError) as err:
        raise ValueError(f"a stamp cannot be stored: {err}") from None
    paths += squeeze.flush()
    digest = b"".join(digests)
    raw = _raw_digests(digest, len(inputs.stamps))
    if raw is not None:  # every digest is 64 lower-case hex digits (BLAKE3): kept as their 32 bytes
        digest = _RAW + raw
    elif digest[:1] == _RAW:
        raise ValueError("a digest starts with an undecodable byte")
    n = len(inputs.stamps)
    return b"".join(
        [MAGIC, _HEADER.pack(n, len(head), len(paths), len(numbers), len(digest)), head, paths, numbers, digest]
    )


#: The first byte of the digests part when it holds each digest's 32 bytes (a NUL-joined text never starts so).
_RAW = b"\xff"
_HEX = frozenset("0123456789abcdef")


def _raw_digests(joined: bytes, n: int) -> bytes | None:
    """The bytes of ``n`` NUL-joined digests when each is 64 lower-case hex digits, else ``None``."""
    if n == 0 or len(joined) != 65 * n - 1:
        return None
    text = joined.replace(b"\0", b"").decode("ascii", "replace")
    if len(text) != 64 * n or not set(text) <= _HEX:
        return None
    return bytes.fromhex(text)


def _digests(part: bytes, n: int) -> list[str]:
    """The ``n`` digests of a stored digests part: their 32 bytes each (after :data:`_RAW`) or NUL-joined text."""
    if not n:
        return []
    if part[:1] == _RAW:
        text = part[1:].hex()
        return [text[i : i + 64] for i in range(0, len(text), 64)]
    return part.decode("utf-8", "surrogateescape").split("\0")


def decode(data: bytes) -> Inputs:
    """:func:`encode`'s ``data`` read back. Raises ``ValueError`` (``zlib.error``, ``struct.error`` included) or
    ``TypeError`` for data it did not write."""
    if not data.startswith(MAGIC):
        raise ValueError("not stored inputs of this layout")
    at = len(MAGIC)
    n, lh, lp, ln, ld = _HEADER.unpack_from(data, at)
    at += _HEADER.size
    if at + lh + lp + ln + ld != len(data) or ln != n * _NUMBERS.size:
        raise ValueError("stored inputs of another length")
    walk, projects, until, roots, links, planes, listing = json.loads(
        zlib.decompress(data[at : at + lh]).decode("utf-8", "surrogateescape")
    )
    at += lh
    if not isinstance(roots, dict) or not isinstance(links, str | None) or not isinstance(planes, list):
        raise TypeError("inputs")
    if not isinstance(listing, list | None):
        raise TypeError("listing")
    paths = zlib.decompress(data[at : at + lp]).decode("utf-8", "surrogateescape").split("\0") if n else []
    at += lp
    numbers = _NUMBERS.iter_unpack(data[at : at + ln])
    at += ln
    digests = _digests(data[at : at + ld], n)
    if len(paths) != n or len(digests) != n:
        raise ValueError("stored inputs of another count")
    stamps: Stamps = {p: [*s, d] for p, s, d in zip(paths, numbers, digests, strict=True)}
    if len(stamps) != n:
        raise ValueError("a path stored twice")
    return Inputs(walk, projects, stamps, until, roots, links, planes, listing)


__all__ = ["Inputs", "Stamps", "decode", "encode"]
