"""Threat scan of resident entries with our content detectors (reference ``zuno-memory.md`` §4).

Zuno blocks prompt injection (its ported rule families), invisible and bidirectional characters, and credential
literals before any disk access; one poisoned entry refuses the whole write. Here the same detectors that check
records run over each entry: ``prompt_injection``, ``invisible_character`` and the credential family block a
write (:data:`BLOCKING`); personal data and transcripts are reported in the editor but do not block, as in Zuno.
Messages name the rule and the entry, never the matched text.

One rule for the editor and the write path: both call :func:`threat_findings` with the file's accepted
fingerprints (:attr:`.scope.ResidentFile.accepted`), and a write is refused exactly for the findings
:func:`blocks_write` names, so an entry the editor shows clean is never blocked on write, and the reverse. What an
accepted fingerprint can drop is decided once, in :func:`memzoi.safety.scan.to_findings`: only a
``high_entropy_value`` of our own detectors; a credential, a private key, a match of Memzoi's write-safety floor
(its ``bounded_entropy`` rule included) or a git-plane gate finding is never accepted away.
"""

from __future__ import annotations

from dataclasses import replace

from ..base.findings import Finding
from ..ledger import Refusal
from ..read.document import Document
from ..read.text import rust_trim
from ..safety.scan import SECRET_CODES, collect_hits, to_findings
from .format import entry_spans

BLOCKING = SECRET_CODES | {"prompt_injection", "invisible_character"}


def threat_findings(text: str, accepted: frozenset[str]) -> list[Finding]:
    """Detector findings of a resident file ``text`` (a whole file or one entry) with exact code-point spans,
    each message naming its entry (1-based). ``accepted`` is the file's :attr:`~.scope.ResidentFile.accepted`
    (required, so that no caller forgets it)."""
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


def blocks_write(f: Finding) -> bool:
    """Whether finding ``f`` of :func:`threat_findings` refuses a write (Zuno ``Blocked``)."""
    return f.code in BLOCKING


def refuse_threats(entries: list[str], accepted: frozenset[str], *, where: str | None = None) -> None:
    """Raise :class:`Refusal` ``threat_blocked`` when any entry has a blocking finding (Zuno ``Blocked``: every
    entry of the result is scanned, so one poisoned entry refuses the write). ``accepted`` as for
    :func:`threat_findings`; ``where`` names the place in the message when the texts are not entries (e.g.
    ``"in the reason"``)."""
    for i, entry in enumerate(entries):
        for f in threat_findings(entry, accepted):
            if blocks_write(f):
                message = f.message.replace("in entry 1", where or f"in entry {i + 1}")
                raise Refusal("threat_blocked", f"{f.code}: {message}; nothing was written")


def refuse_secret_ids(**ids: str | None) -> None:
    """Raise :class:`Refusal` ``threat_blocked`` when one of ``ids`` (a session or message id, named by its
    keyword) holds text a credential or personal-data detector matches (:data:`memzoi.safety.redact.SECRET_CODES`).
    These ids are stored as given in the candidate database (reference ``zuno-memory.md`` §6: the delivery and job
    rows are keyed by them), so a secret in one would be kept there. Real ids (UUIDs, ``msg_…``, client session
    ids) match no detector. The message names the id and the detector, never the text."""
    from ..safety.redact import SECRET_CODES as SECRET  # noqa: PLC0415 lazy: start-up

    for name, value in ids.items():
        if not value:
            continue
        code = next((h.code for h in collect_hits(value) if h.code in SECRET and h.end > h.start), None)
        if code is not None:
            raise Refusal(
                "threat_blocked",
                f"{code}: the {name.replace('_', ' ')} holds a credential or personal data, and ids are stored as "
                "given; pass the client's own id; nothing was written",
            )
