"""Threat scan of resident entries with our content detectors (reference ``zuno-memory.md`` §4).

Zuno blocks prompt injection (its ported rule families), invisible and bidirectional characters, and credential
literals before any disk access; one poisoned entry refuses the whole write. Here the same detectors that check
records run over each entry: ``prompt_injection``, ``invisible_character`` and the credential family block a
write (:data:`BLOCKING`); personal data and transcripts are reported in the editor but do not block, as in Zuno.
Messages name the rule and the entry, never the matched text.
"""

from __future__ import annotations

from dataclasses import replace

from ..document import Document
from ..findings import Finding
from ..ledger import Refusal
from ..safety.scan import SECRET_CODES, collect_hits, to_findings
from ..text import rust_trim
from .format import entry_spans

BLOCKING = SECRET_CODES | {"prompt_injection", "invisible_character"}


def threat_findings(text: str, accepted: frozenset[str] = frozenset()) -> list[Finding]:
    """Detector findings of a resident file ``text`` with exact code-point spans, each message naming its entry
    (1-based). ``accepted`` are the ``[safety] accepted_fingerprints`` of the project."""
    if not rust_trim(text):
        return []
    doc = Document(text=text, body_start=0)
    found = to_findings(doc, collect_hits(text), accepted)
    if not found:
        return found
    spans = entry_spans(text)
    out = []
    for f in found:
        number = next((s.index + 1 for s in spans if s.start <= f.start < max(s.end, s.start + 1)), None)
        where = f"in entry {number}" if number else "between entries"
        out.append(replace(f, message=f.message.replace("in the body", where)))
    return out


def refuse_threats(entries: list[str], accepted: frozenset[str] = frozenset(), *, where: str | None = None) -> None:
    """Raise :class:`Refusal` ``threat_blocked`` when any entry has a blocking finding (Zuno ``Blocked``: every
    entry of the result is scanned, so one poisoned entry refuses the write). ``where`` names the place in the
    message when the texts are not entries (e.g. ``"in the reason"``)."""
    for i, entry in enumerate(entries):
        for f in threat_findings(entry, accepted):
            if f.code in BLOCKING:
                message = f.message.replace("in entry 1", where or f"in entry {i + 1}")
                raise Refusal("threat_blocked", f"{f.code}: {message}; nothing was written")
