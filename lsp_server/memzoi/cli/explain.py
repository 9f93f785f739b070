"""``memzoi explain [CODE]``: a diagnostic code's section of the diagnostics reference the package ships."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from ._common import add_command


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``explain``."""
    p = add_command(
        sub,
        "explain",
        help="explain a diagnostic code: what it means, an example and the fix",
        description="Print the section of the diagnostics reference (docs/diagnostics.md, shipped with the "
        "package) for CODE, or list every code with its default severity and group.",
        examples=["memzoi explain credential_token", "memzoi explain", "memzoi explain bom --json"],
        exits={1: "the reference is missing from this installation", 2: "usage error (an unknown code)"},
        project="none",
    )
    p.add_argument("code", nargs="?", metavar="CODE", help="a diagnostic code (default: list all codes)")
    p.add_argument(
        "--json", action="store_true", help="print {code, severity, group, markdown, href} (a list without CODE)"
    )
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Print one section, or the list of codes."""
    from ..base.findings import CODES  # noqa: PLC0415 lazy: start-up
    from ..base.resources import diagnostic_sections, diagnostics_href  # noqa: PLC0415 lazy: start-up

    sections = diagnostic_sections()
    if not sections:
        print(
            "memzoi: the diagnostics reference is missing from this installation; reinstall memzoi-lsp", file=sys.stderr
        )
        return 1

    def entry(code: str) -> dict[str, Any]:
        severity, group = CODES[code]
        return {
            "code": code,
            "severity": severity.label,
            "group": group,
            "markdown": sections.get(code, ""),
            "href": diagnostics_href(code),
        }

    if args.code is None:
        if args.json:
            print(json.dumps({"codes": [entry(c) for c in CODES]}, indent=2, ensure_ascii=False))
        else:
            for code, (severity, group) in CODES.items():
                print(f"{code:32} {severity.label:12} {group}")
        return 0
    if args.code not in CODES:
        from ..safety.redact import scrub  # noqa: PLC0415 lazy: start-up - a secret typed here is never echoed

        print(f"memzoi: `{scrub(args.code)}` is not a diagnostic code; `memzoi explain` lists them", file=sys.stderr)
        return 2
    if args.json:
        print(json.dumps(entry(args.code), indent=2, ensure_ascii=False))
    else:
        severity, group = CODES[args.code]
        print(f"{args.code} ({severity.label}, {group})\n\n{sections.get(args.code, '')}")
    return 0
