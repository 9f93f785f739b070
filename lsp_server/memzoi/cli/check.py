"""``memzoi check [PATH…] [--format text|json|sarif|github]`` (SPEC §8).

Prints the findings the language server publishes. Exit 1 when any finding is an error, 0 otherwise, 2 on
usage errors. Text, SARIF and GitHub formats use 1-based lines and columns; JSON uses 0-based lines and
code-point characters, as SPEC §8 fixes.
"""

from __future__ import annotations

import argparse
import json
import sys

from .. import __version__
from ..check import CheckReport, Located, UsageError, check_paths
from ..config import load_config
from ..findings import CODES
from ..workspace import find_project_root

DOCS_URL = "https://github.com/memzoi-lsp/memzoi-lsp/blob/main/docs/diagnostics.md"


def register(sub: argparse._SubParsersAction) -> None:
    """Add the ``check`` command."""
    p = sub.add_parser("check", help="check records and proposal packets for format, schema and safety findings")
    p.add_argument("paths", nargs="*", metavar="PATH", help="files or directories (default: the project's .memzoi)")
    p.add_argument("--format", choices=["text", "json", "sarif", "github"], default="text", help="output format")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Run ``check``; returns the exit code."""
    paths = args.paths
    if not paths:
        root = find_project_root(".")
        memzoi = root / ".memzoi"
        if not memzoi.is_dir():
            print(f"memzoi: no .memzoi directory found at or above {root}; pass the paths to check", file=sys.stderr)
            return 2
        paths = [str(memzoi)]
    try:
        report = check_paths(paths)
    except UsageError as err:
        print(f"memzoi: {err}", file=sys.stderr)
        return 2
    # A config that cannot be read silently falls back to defaults in the analysis; say so once per folder.
    for display, why in report.skipped:
        if why.startswith("unreadable directory"):
            print(f"memzoi: {display}: {why}; nothing below it was checked", file=sys.stderr)
    config_errors = False
    given = [display for display, why in report.skipped if why.startswith("project configuration")]
    for memzoi_dir in sorted(report.memzoi_dirs, key=str):
        for error in load_config(memzoi_dir).errors:
            config_errors = True
            # When the configuration was the thing checked, "the rest used the defaults" would be noise.
            print(f"memzoi: {error}" + ("" if given else "; checked with the default settings"), file=sys.stderr)
    if given and not config_errors:
        print(f"memzoi: {', '.join(given)}: the settings are valid", file=sys.stderr)
    out = sys.stdout
    if args.format == "json":
        out.write(json.dumps(to_json(report), indent=2, ensure_ascii=False) + "\n")
    elif args.format == "sarif":
        out.write(json.dumps(to_sarif(report), indent=2, ensure_ascii=False) + "\n")
    elif args.format == "github":
        for loc in report.findings:
            out.write(to_github(loc) + "\n")
    else:
        for loc in report.findings:
            out.write(f"{loc.path}:{loc.start[0] + 1}:{loc.start[1] + 1}: {loc.finding.code} {loc.finding.message}\n")
    if args.format in ("text", "github"):
        counts = {s: sum(1 for l in report.findings if l.finding.severity.label == s) for s in ("error", "warning")}
        print(
            f"{report.files_checked} file(s) checked: {counts['error']} error(s), {counts['warning']} warning(s), "
            f"{len(report.findings) - counts['error'] - counts['warning']} other",
            file=sys.stderr,
        )
    # A configuration given by name is checked for itself: its errors fail the check.
    return 1 if report.has_errors or (given and config_errors) else 0


def to_json(report: CheckReport) -> dict:
    """SPEC §8 JSON: ``{"findings": [{path, code, severity, message, range}], "files_checked": N}``."""
    return {
        "findings": [
            {
                "path": l.path,
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


_SARIF_LEVEL = {"error": "error", "warning": "warning", "information": "note", "hint": "note"}


def to_sarif(report: CheckReport) -> dict:
    """SARIF 2.1.0 with one rule per code used and code-point columns (``columnKind: unicodeCodePoints``)."""
    used = sorted({l.finding.code for l in report.findings})
    rules = [
        {
            "id": code,
            "name": code,
            "helpUri": f"{DOCS_URL}#{code}",
            "shortDescription": {"text": code.replace("_", " ")},
            "defaultConfiguration": {"level": _SARIF_LEVEL[CODES[code][0].label]},
        }
        for code in used
    ]
    results = [
        {
            "ruleId": l.finding.code,
            "ruleIndex": used.index(l.finding.code),
            "level": _SARIF_LEVEL[l.finding.severity.label],
            "message": {"text": l.finding.message},
            "locations": [
                {
                    "physicalLocation": {
                        "artifactLocation": {"uri": l.path.replace("\\", "/")},
                        "region": {
                            "startLine": l.start[0] + 1,
                            "startColumn": l.start[1] + 1,
                            "endLine": l.end[0] + 1,
                            "endColumn": l.end[1] + 1,
                        },
                    }
                }
            ],
        }
        for l in report.findings
    ]
    return {
        "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
        "version": "2.1.0",
        "runs": [
            {
                "tool": {"driver": {"name": "memzoi", "version": __version__, "informationUri": DOCS_URL, "rules": rules}},
                "columnKind": "unicodeCodePoints",
                "results": results,
            }
        ],
    }


def _gh_escape(value: str, prop: bool = False) -> str:
    value = value.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")
    if prop:
        value = value.replace(":", "%3A").replace(",", "%2C")
    return value


def to_github(l: Located) -> str:
    """A GitHub Actions workflow command (``::error file=…,line=…::message``)."""
    level = {"error": "error", "warning": "warning"}.get(l.finding.severity.label, "notice")
    props = (
        f"file={_gh_escape(l.path, True)},line={l.start[0] + 1},col={l.start[1] + 1},"
        f"endLine={l.end[0] + 1},endColumn={l.end[1] + 1},title={_gh_escape('memzoi ' + l.finding.code, True)}"
    )
    return f"::{level} {props}::{_gh_escape(l.finding.message)}"
