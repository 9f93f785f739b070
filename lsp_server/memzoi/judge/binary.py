"""Findings of a file that is not text: at most one per code, with a count.

Memzoi reads a record or packet only as UTF-8 (reference §1.1: ``OKF record … is not UTF-8``) and refuses bytes
that are not UTF-8 with ``invalid_encoding`` (its ``utf8`` write-safety detector, §3.3). An image or an archive
dropped below ``.memzoi`` would otherwise get one ``invisible_character`` per control byte, thousands of them, in
``memzoi check``, the editor and the index alike. :func:`bounded` keeps every code (so the verdict, the exit status
and the refusals are what they were) but only its first finding, whose message gives how many there were and where
the first is. :func:`memzoi.judge.analysis.analyze_text` and :func:`~memzoi.judge.analysis.analyze_bytes` apply
it, so every consumer gets the same findings.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import replace

from ..base.findings import Finding
from ..read.text import LineIndex

#: What Memzoi requires, added to the ``invalid_encoding`` of a file that holds NUL bytes or is not UTF-8.
REQUIREMENT = (
    "Memzoi reads records and proposal packets only as UTF-8 Markdown text (an image, an archive or other binary "
    "file does not belong below `.memzoi`)"
)


def not_text(text: str, findings: Sequence[Finding]) -> bool:
    """Whether the file of ``text`` is not text: it holds a NUL (git shows such a file as binary) or its bytes
    were not UTF-8 (an ``invalid_encoding`` finding among ``findings``)."""
    return "\x00" in text or any(f.code == "invalid_encoding" for f in findings)


def bounded(text: str, findings: list[Finding]) -> list[Finding]:
    """``findings`` of ``text`` unchanged when the file is text (:func:`not_text` is false); otherwise at most one
    finding per code: a code's first finding (in the given order), its message ending with the count and the
    1-based ``line:column`` of the first (its quick fixes are the first's) and ``data["count"]`` set. Codes and
    severities are kept, so whatever refused the file still refuses it. The ``invalid_encoding`` finding also says
    what Memzoi requires (:data:`REQUIREMENT`)."""
    if not findings or not not_text(text, findings):
        return findings
    counts = Counter(f.code for f in findings)
    lines: LineIndex | None = None
    out: list[Finding] = []
    seen: set[str] = set()
    for f in findings:
        if f.code in seen:
            continue
        seen.add(f.code)
        n = counts[f.code]
        message = f.message
        if f.code == "invalid_encoding" and REQUIREMENT not in message:
            message = f"{message}; {REQUIREMENT}"
        if n > 1:
            lines = lines or LineIndex(text)
            line, col = lines.position(f.start)
            message = (
                f"{message} ({n} `{f.code}` findings in this file, which is not text: only the first is shown, "
                f"at {line + 1}:{col + 1})"
            )
            f = replace(f, data={**f.data, "count": n})
        out.append(f if message == f.message else replace(f, message=message))
    return out


__all__ = ["REQUIREMENT", "bounded", "not_text"]
