"""Redaction of detected secrets in text that is shown or stored outside the file itself.

Search results, ``proposals show``, upgrade diffs, hovers, MCP answers and the derived index must not repeat a
credential or personal data that a detector found (SPEC §4: never echo the matched text). These helpers replace
the spans of such findings with a fixed marker.

Two sets, because the two kinds of personal data are kept differently:

* :data:`SECRET_CODES` (credentials, high-entropy values, and ``pii_detected``: SSNs, card numbers, IBANs,
  labelled personal values, which Memzoi's capture refuses outright, reference ``memzoi-format.md`` §3.4) are
  never stored anywhere outside the file: not in the ledger, not in the private local plane.
* :data:`REDACTED_CODES` adds ``private_personal_data`` (an e-mail address or phone number in prose). Memzoi keeps
  that class out of the git plane only: ``private-personal-data`` is a sensitivity and a content class the gate
  routes to local memory (reference §3.1, §3.2), so the local plane may hold it. Every text derived from the
  repository's files that is shown or indexed still masks it, as it masks a credential.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from ..base.findings import WRITE_SAFETY, Finding
from .scan import collect_hits, value_hits
from .values import rescanned

#: Detector codes whose matched text is never stored outside the file itself, not even in the local plane
#: (injection, invisible-character and transcript findings are about the text's nature and are not masked).
SECRET_CODES = WRITE_SAFETY | {"pii_detected"}
#: Detector codes whose matched text is masked wherever a file's text is shown or indexed: the secrets, and the
#: e-mail addresses and phone numbers of ``private_personal_data``.
REDACTED_CODES = SECRET_CODES | {"private_personal_data"}
MARK = "[redacted]"


def secret_spans(findings: Iterable[Finding]) -> list[tuple[int, int]]:
    """Merged, sorted ``(start, end)`` spans of the findings in :data:`REDACTED_CODES` (code-point offsets)."""
    spans = sorted((f.start, f.end) for f in findings if f.code in REDACTED_CODES and f.end > f.start)
    merged: list[tuple[int, int]] = []
    for s, e in spans:
        if merged and s <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(merged[-1][1], e))
        else:
            merged.append((s, e))
    return merged


def redact(text: str, spans: list[tuple[int, int]], start: int = 0, end: int | None = None) -> str:
    """``text[start:end]`` with every part that overlaps one of ``spans`` replaced by :data:`MARK`."""
    end = len(text) if end is None else end
    out: list[str] = []
    pos = start
    for s, e in spans:
        if e <= start or s >= end:
            continue
        s, e = max(s, start), min(e, end)
        if s > pos:
            out.append(text[pos:s])
        if not out or out[-1] != MARK:
            out.append(MARK)
        pos = max(pos, e)
    if pos < end:
        out.append(text[pos:end])
    return "".join(out)


def scrub(text: str) -> str:
    """``text`` with every secret or personal datum a detector finds in it (:data:`REDACTED_CODES`) replaced by
    :data:`MARK`: for record values shown outside the file (hovers), where no finding spans are at hand, and the one
    rule for echoing what a caller gave (an argument, an id, a query, a path) in a message, an error or a log line:
    the CLI, the MCP tools and the language server's command replies all pass such text through it."""
    spans = sorted((h.start, h.end) for h in collect_hits(text) if h.code in REDACTED_CODES and h.end > h.start)
    return redact(text, spans) if spans else text


def secret_values(data: bytes | str) -> list[str]:
    """The distinct texts that a detector of :data:`SECRET_CODES` matches in ``data`` (bytes are decoded as
    UTF-8 with invalid sequences replaced), longest first; for a text with frontmatter, also each decoded
    string value or key whose own scan holds such a match (and its scalar's text). Callers use them to keep such text out of what they
    store and must never print them."""
    text = data.decode("utf-8", "replace") if isinstance(data, (bytes, bytearray)) else data
    hits = collect_hits(text)
    found = {text[h.start : h.end] for h in hits if h.code in SECRET_CODES and h.end > h.start}
    found |= _decoded_values(text, hits)
    return sorted(found, key=len, reverse=True)


def _decoded_values(text: str, hits: list[Any]) -> set[str]:
    """For a text with frontmatter: the scalar text and the decoded value of each frontmatter string whose own
    scan holds a secret the text's scan does not (:func:`memzoi.safety.scan.value_hits`)."""
    if not text.lstrip("\ufeff").startswith("---"):
        return set()

    from ..read.document import frame  # noqa: PLC0415 lazy: start-up (a search scrubs its query without YAML)

    doc = frame(text)
    spans = {(h.start, h.end) for h in value_hits(doc, hits) if h.code in SECRET_CODES}
    if not spans:
        return set()
    out = {text[s:e] for s, e in spans}
    out |= {str(sc.node.value) for sc in rescanned(doc) if (sc.node.start, sc.node.end) in spans and sc.node.value}
    return out


def holds_secret(data: bytes | str) -> bool:
    """True when a detector of :data:`SECRET_CODES` (credentials, high-entropy values, SSNs, card numbers and
    labelled personal values) matches anywhere in ``data``: such bytes are never stored outside the file itself
    (ledger, local plane)."""
    return bool(secret_values(data))


def given_secrets(given: Any) -> list[str]:
    """The texts a detector of :data:`SECRET_CODES` matches in the strings of ``given`` (a caller's arguments: a
    string, or a JSON tree of them, keys included), longest first: what an answer must not echo
    (:func:`scrub_echoes`). Empty, the usual case, when no argument holds one."""
    found: set[str] = set()
    for text in _strings(given):
        found.update(secret_values(text))
    return sorted(found, key=len, reverse=True)


def scrub_echoes(value: Any, secrets: list[str]) -> Any:
    """``value`` (a string or a JSON tree) with every occurrence of each of ``secrets`` (:func:`given_secrets`,
    longest first) in its strings, keys included, replaced by :data:`MARK`; ``value`` itself when ``secrets`` is
    empty. This is how an answer that repeats what the caller gave (a query, a path, an id, a task) keeps the
    caller's secret out of it."""
    if not secrets:
        return value
    if isinstance(value, str):
        for secret in secrets:
            value = value.replace(secret, MARK)
        return value
    if isinstance(value, dict):
        return {scrub_echoes(k, secrets): scrub_echoes(v, secrets) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [scrub_echoes(v, secrets) for v in value]
    return value


def _strings(value: Any) -> Iterable[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for k, v in value.items():
            yield from _strings(k)
            yield from _strings(v)
    elif isinstance(value, (list, tuple)):
        for v in value:
            yield from _strings(v)
