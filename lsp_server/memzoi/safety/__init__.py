"""Safety: the git-plane gate and the content detectors, as one call for the analysis pipeline.

Modules, one per concern: :mod:`.memzoi_rules` with :mod:`.memzoi_source`, :mod:`.memzoi_url` and
:mod:`.memzoi_entropy` (Memzoi's write-safety detectors applied exactly: the floor), :mod:`.credentials`,
:mod:`.tokens` and :mod:`.assignments` (our own credential detectors beside it), :mod:`.entropy` (entropy and
value-shape tests), :mod:`.injection` (Zuno's prompt-injection families), :mod:`.invisible` (invisible and
smuggling code points), :mod:`.pii` (personal data and transcripts), :mod:`.decoding` (folding and decoded views),
:mod:`.fingerprint` (finding fingerprints), :mod:`.values` (each decoded frontmatter string as its own text; keys
never printed), :mod:`.scan` (hits → findings). The gate itself is
:mod:`memzoi.policy`.

Layer 2 of the core (judge = models = safety): The content detectors and the git-plane gate's scan.

May import: base, read, judge, models, safety.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..document import Document
from ..findings import Finding
from ..workspace import Placement
from .fingerprint import fingerprint
from .scan import SECRET_CODES, collect_hits, scan_document

#: Above this many UTF-8 bytes only Memzoi's write-safety rules run (the floor, linear in the text); our own
#: detectors, which refine them and add PII, transcript, prompt-injection and invisible-character findings, are
#: skipped (the file gets ``file_too_large``). Memzoi refuses any projected file this large anyway.
MAX_SCAN_BYTES = 512 * 1024

if TYPE_CHECKING:
    from ..config import MemzoiConfig
# The configuration (pydantic) and the gate are imported by safety_findings: a caller that only scans a short
# text (`memzoi search` scrubbing its query, path names) does not load them.


def scan_complete(text: str) -> bool:
    """Whether every content detector runs on ``text`` (at most :data:`MAX_SCAN_BYTES` of UTF-8). When not, only
    Memzoi's rules do, and a writer must refuse the text: an absent finding of ours proves nothing about it."""
    return len(text) * 4 <= MAX_SCAN_BYTES or (
        len(text) <= MAX_SCAN_BYTES and len(text.encode("utf-8", "surrogatepass")) <= MAX_SCAN_BYTES)


def safety_findings(doc: Document, placement: Placement, config: MemzoiConfig | None = None, *,
                    legacy: bool = False, memory: bool = True) -> list[Finding]:
    """Gate findings plus content-detector findings for one framed document. Never raises.

    Every file is scanned, reserved and stray files included (they are committed too); the gate only applies
    to records and pending packets. Memzoi's write-safety rules run on every file whatever its size; the rest of
    the detectors only where :func:`scan_complete` holds (the gate reports ``candidate_too_large`` above it).
    ``legacy``: the file is in a legacy profile (:func:`memzoi.policy.gate_findings`). ``memory`` false: the file
    is not a memory (``config.toml``, another non-Markdown file), and messages are worded for a plain file.
    """
    from ..config import DEFAULT_CONFIG
    from ..policy import gate_findings

    config = config or DEFAULT_CONFIG
    out = gate_findings(doc, placement, config, legacy=legacy)
    out.extend(scan_document(doc, config.accepted, config.safety.unsigned_jwt, floor_only=not scan_complete(doc.text),
                               memory=memory))
    return out


__all__ = ["MAX_SCAN_BYTES", "SECRET_CODES", "collect_hits", "fingerprint", "safety_findings", "scan_complete",
           "scan_document"]
