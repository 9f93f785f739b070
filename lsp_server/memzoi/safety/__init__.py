"""Safety: the git-plane gate and the content detectors, as one call for the analysis pipeline.

Modules, one per concern: :mod:`.memzoi_rules` with :mod:`.memzoi_source`, :mod:`.memzoi_url` and
:mod:`.memzoi_entropy` (Memzoi's write-safety detectors applied exactly: the floor), :mod:`.credentials`,
:mod:`.tokens` and :mod:`.assignments` (our own credential detectors beside it), :mod:`.entropy` (entropy and
value-shape tests), :mod:`.injection` (Zuno's prompt-injection families), :mod:`.invisible` (invisible and
smuggling code points), :mod:`.pii` (personal data and transcripts), :mod:`.decoding` (folding and decoded views),
:mod:`.fingerprint` (finding fingerprints), :mod:`.scan` (hits → findings). The gate itself is
:mod:`memzoi.policy`.
"""

from __future__ import annotations

from ..config import DEFAULT_CONFIG, MemzoiConfig
from ..document import Document
from ..findings import Finding
from ..policy import gate_findings
from ..workspace import Placement
from .fingerprint import fingerprint
from .scan import SECRET_CODES, collect_hits, scan_document

#: Above this many UTF-8 bytes the content scans are skipped (the file gets ``file_too_large``).
MAX_SCAN_BYTES = 512 * 1024


def safety_findings(doc: Document, placement: Placement, config: MemzoiConfig | None = None) -> list[Finding]:
    """Gate findings plus content-detector findings for one framed document. Never raises.

    Every file is scanned, reserved and stray files included (they are committed too); the gate only applies
    to records and pending packets. Content scans are skipped for text over :data:`MAX_SCAN_BYTES` (the gate
    still runs: it reports ``candidate_too_large``).
    """
    config = config or DEFAULT_CONFIG
    out = gate_findings(doc, placement, config)
    text = doc.text
    if len(text) > MAX_SCAN_BYTES or (len(text) * 4 > MAX_SCAN_BYTES and len(text.encode("utf-8", "surrogatepass")) > MAX_SCAN_BYTES):
        return out
    out.extend(scan_document(doc, config.accepted, config.safety.unsigned_jwt))
    return out


__all__ = ["MAX_SCAN_BYTES", "SECRET_CODES", "collect_hits", "fingerprint", "safety_findings", "scan_document"]
