"""Output formats of ``memzoi check``: text (optionally coloured), JSON (SPEC §8), SARIF 2.1.0, GitHub workflow
commands, and per-code statistics.

Every writer prints a file's path through :func:`shown`, the one place a path becomes output. Text, SARIF and
GitHub use 1-based lines and columns, JSON 0-based lines; columns are code points everywhere.
"""

from __future__ import annotations

import os
import re
import unicodedata
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.parse import quote

from blake3 import blake3

from .. import __version__
from ..base import resources
from ..base.findings import CODES
from ..base.printable import lossless, printable
from ..base.resources import diagnostic_sections
from ..judge.pathsafety import REDACTED_PREFIX
from ..runs.checkreport import CheckReport, Located

SARIF_SCHEMA = "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"
#: ``partialFingerprints`` keys: a detector's own fingerprint (Memzoi's, reference §3.3), or a line hash.
FINGERPRINT_KEY = "memzoiFinding/v1"
LINE_HASH_KEY = "memzoiLineHash/v1"

_SARIF_LEVEL = {"error": "error", "warning": "warning", "information": "note", "hint": "note"}
_SECURITY_GROUPS = {"gate", "detector"}
_ANSI = {"error": "31", "warning": "33", "information": "34", "hint": "36", "path": "1", "dim": "2"}


def shown(l: Located) -> str:
    """The path of a located finding as printed: the display path the check made with
    :func:`memzoi.judge.pathsafety.shown_path` (a secret-bearing path is already ``<redacted-path:…>``)."""
    return l.path


def _paint(text: str, style: str, color: bool) -> str:
    return f"\x1b[{_ANSI[style]}m{text}\x1b[0m" if color else text


def text_line(l: Located, color: bool = False) -> str:
    """``path:line:col: code message`` (1-based line and column), coloured by severity when ``color``; control
    characters of the path and message are escaped (:func:`memzoi.base.printable.printable`: also bidi controls and
    the undecodable bytes of a file name, ``caf\\xe9.md``)."""
    where = f"{_paint(printable(shown(l)), 'path', color)}:{l.start[0] + 1}:{l.start[1] + 1}:"
    code = _paint(l.finding.code, l.finding.severity.label, color)
    return f"{where} {code} {printable(l.finding.message)}"


def to_json(report: CheckReport) -> dict[str, Any]:
    """SPEC §8 JSON: ``{"findings": [{path, code, severity, message, range}], "files_checked": N}``. A path that is
    not UTF-8 spells each undecodable byte ``\\xHH`` (:func:`memzoi.base.printable.lossless`), never U+FFFD."""
    return {
        "findings": [
            {
                "path": lossless(shown(l)),
                "code": l.finding.code,
                "severity": l.finding.severity.label,
                "message": l.finding.message,
                "range": {
                    "start": {"line": l.start[0], "character": l.start[1]},
                    "end": {"line": l.end[0], "character": l.end[1]},
                },
            }
            for l in report.findings
        ],
        "files_checked": report.files_checked,
    }


def statistics(report: CheckReport) -> list[dict[str, Any]]:
    """Findings counted per code, most frequent first: ``[{"code", "severity", "count"}]``."""
    counts = Counter((l.finding.code, l.finding.severity.label) for l in report.findings)
    return [{"code": c, "severity": s, "count": n} for (c, s), n in sorted(counts.items(), key=lambda i: (-i[1], i[0]))]


def statistics_text(rows: list[dict[str, Any]], color: bool = False) -> list[str]:
    """Statistics as aligned lines: ``count  code  severity``."""
    width = max((len(str(r["count"])) for r in rows), default=1)
    code_w = max((len(r["code"]) for r in rows), default=1)
    return [
        f"{r['count']:>{width}}  {_paint(r['code'].ljust(code_w), r['severity'], color)}  {r['severity']}" for r in rows
    ]


def _gh_escape(value: str, prop: bool = False) -> str:
    value = value.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")
    if prop:
        value = value.replace(":", "%3A").replace(",", "%2C")
    return value


def to_github(l: Located) -> str:
    """A GitHub Actions workflow command (``::error file=…,line=…::message``), as ruff writes them; path and message
    are escaped as in the text format (:func:`memzoi.base.printable.printable`): CI logs render terminal escapes."""
    level = {"error": "error", "warning": "warning"}.get(l.finding.severity.label, "notice")
    props = (
        f"file={_gh_escape(printable(shown(l)), True)},line={l.start[0] + 1},col={l.start[1] + 1},"
        f"endLine={l.end[0] + 1},endColumn={l.end[1] + 1},title={_gh_escape('memzoi ' + l.finding.code, True)}"
    )
    return f"::{level} {props}::{_gh_escape(printable(l.finding.message))}"


# --- SARIF -------------------------------------------------------------------------------------------------------


def rule_name(code: str) -> str:
    """A rule's human name: the code in words, e.g. ``credential_token`` → ``CredentialToken`` (SARIF §3.49.7
    asks for an identifier an end user understands)."""
    return "".join(part.capitalize() for part in code.split("_"))


def _plain(markdown: str) -> str:
    """Markdown of a reference section as one paragraph of text (fenced examples dropped)."""
    text = re.sub(r"(?ms)^```.*?^```[ \t]*$", " ", markdown)
    text = text.replace("`", "").replace("*", "")
    return " ".join(text.split())


def _first_sentence(text: str) -> str:
    m = re.search(r"(?<!e\.g)(?<!i\.e)(?<!etc)\.(?:\s|$)", text)
    return text[: m.start() + 1] if m else text


def sarif_rule(code: str) -> dict[str, Any]:
    """The SARIF ``reportingDescriptor`` of ``code``: name, descriptions and help from ``docs/diagnostics.md``
    (shipped with the package; GitHub code scanning shows ``help``), default level and tags. ``helpUri`` only when
    the project publishes the reference (:func:`memzoi.base.resources.public_diagnostics_href`): the shipped copy's
    ``file:`` URI would be a dead link wherever the SARIF file is read."""
    severity, group = CODES[code]
    markdown = diagnostic_sections().get(code, "")
    full = _plain(markdown)
    # The reference starts each section with the severity ("Error.", "Warning, …."); the description follows it.
    body = re.sub(r"^(?:Error|Warning|Information|Hint)[^.]*\.\s*", "", full) or code.replace("_", " ")
    tags = ["memzoi", group] + (["security"] if group in _SECURITY_GROUPS else [])
    rule = {
        "id": code,
        "name": rule_name(code),
        "shortDescription": {"text": _first_sentence(body)},
        "fullDescription": {"text": body},
        "help": {"text": full or body, "markdown": f"**{code}**\n\n{markdown}" if markdown else body},
        "defaultConfiguration": {"level": _SARIF_LEVEL[severity.label]},
        "properties": {"tags": tags},
    }
    href = resources.public_diagnostics_href(code)
    if href is not None:
        rule["helpUri"] = href
    return rule


def _line_hash(code: str, uri: str, line_text: str) -> str:
    """Stable hash of a finding without a detector fingerprint: code, path and the whitespace-normalised text of
    its line, so the alert survives lines moving (the text itself never leaves this function)."""
    normal = " ".join(unicodedata.normalize("NFC", line_text).split())
    return blake3(f"{code}\0{uri}\0{normal}".encode("utf-8", "surrogatepass")).hexdigest()[:32]


def _artifact(path: str, srcroot: Path | None) -> dict[str, Any]:
    if path == "-":  # stdin without --stdin-filename: no file of the repository, so no %SRCROOT% base
        return {"uri": "-", "description": {"text": "standard input (no --stdin-filename was given)"}}
    if path.startswith(REDACTED_PREFIX):  # a secret-bearing path stays redacted (percent-encoded to be a URI)
        return {"uri": quote(path, safe="")}
    absolute = Path(os.path.abspath(path))
    if srcroot is not None:
        try:
            rel = absolute.relative_to(srcroot)
        except ValueError:
            pass
        else:
            # the raw bytes of the name, percent-encoded: a name that is not UTF-8 stays the real file's
            return {"uri": quote(os.fsencode(rel.as_posix())), "uriBaseId": "%SRCROOT%"}
    return {"uri": absolute.as_uri()}


def to_sarif(report: CheckReport, srcroot: Path | None, line_of: Callable[[Located], str]) -> dict[str, Any]:
    """SARIF 2.1.0 for GitHub code scanning: locations relative to ``%SRCROOT%`` (``srcroot``, given in
    ``originalUriBaseIds``; a file outside it gets a ``file:`` URI), one rule per code used, code-point columns
    and ``partialFingerprints`` (the detector's fingerprint, else a hash of code, path and the text of the finding's
    line, which ``line_of`` returns)."""
    used = sorted({l.finding.code for l in report.findings})
    index = {code: i for i, code in enumerate(used)}
    results = []
    for l in report.findings:
        artifact = _artifact(shown(l), srcroot)
        fp = l.finding.data.get("fingerprint") if l.finding.data else None
        prints = (
            {FINGERPRINT_KEY: fp} if fp else {LINE_HASH_KEY: _line_hash(l.finding.code, artifact["uri"], line_of(l))}
        )
        results.append(
            {
                "ruleId": l.finding.code,
                "ruleIndex": index[l.finding.code],
                "level": _SARIF_LEVEL[l.finding.severity.label],
                "message": {"text": l.finding.message},
                "locations": [
                    {
                        "physicalLocation": {
                            "artifactLocation": artifact,
                            "region": {
                                "startLine": l.start[0] + 1,
                                "startColumn": l.start[1] + 1,
                                "endLine": l.end[0] + 1,
                                "endColumn": l.end[1] + 1,
                            },
                        }
                    }
                ],
                "partialFingerprints": prints,
            }
        )
    run: dict[str, Any] = {
        "tool": {
            "driver": {
                "name": "memzoi",
                "version": __version__,
                "semanticVersion": __version__,
                "rules": [sarif_rule(code) for code in used],
            }
        },
        "columnKind": "unicodeCodePoints",
        "results": results,
    }
    if srcroot is not None:
        run["originalUriBaseIds"] = {"%SRCROOT%": {"uri": srcroot.as_uri().rstrip("/") + "/"}}
    return {"$schema": SARIF_SCHEMA, "version": "2.1.0", "runs": [run]}
