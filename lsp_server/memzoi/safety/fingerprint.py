"""Finding fingerprints: stable, domain-separated BLAKE3 digests that never contain the matched text.

Construction follows Memzoi's write-safety findings (reference §3.3, ``projection.rs``)::

    fingerprint = hex blake3("memzoi.repository-write.finding.v1\\0" ‖ P(code) ‖ P(field) ‖ P(blake3(value)))

where ``P(x)`` is the u64 little-endian length of ``x`` followed by its bytes. The value enters only as its own
BLAKE3 digest, so the fingerprint reveals nothing about it beyond equality. ``field`` is the logical location
(``body``, ``frontmatter.<key path>``), not a line number, so a fingerprint survives edits elsewhere in the file.
"""

from __future__ import annotations

import struct

from blake3 import blake3

DOMAIN = b"memzoi.repository-write.finding.v1\0"


def _p(data: bytes) -> bytes:
    return struct.pack("<Q", len(data)) + data


def fingerprint(code: str, field: str, value: str) -> str:
    """64 lower-case hex characters identifying ``(code, field, value)``; equal inputs give equal output."""
    inner = blake3(value.encode("utf-8", "surrogatepass")).digest()
    h = blake3(DOMAIN)
    h.update(_p(code.encode()) + _p(field.encode("utf-8", "surrogatepass")) + _p(inner))
    return h.hexdigest()
