"""``memzoi upgrade PATH… [--write]``: upgrade legacy records and proposal packets to the current Memzoi profile.

Without ``--write`` it prints a unified diff per legacy file; with ``--write`` it replaces each file
atomically, refusing when the file changed since it was read. Exit 0 when every legacy file was upgraded (or
there was none), 1 when any could not be, 2 on usage errors.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from ..analysis import analyze_bytes, analyze_text
from ..check import UsageError, expand
from ..document import frame
from ..fsutil import atomic_write
from ..legacy import Upgrade, UpgradeError, upgrade_legacy
from ..safety.redact import redact, secret_spans
from ..text import decode



def register(sub: argparse._SubParsersAction) -> None:
    """Add the ``upgrade`` command."""
    p = sub.add_parser("upgrade", help="upgrade legacy records and proposal packets to the current profile (prints a diff)")
    p.add_argument("paths", nargs="+", metavar="PATH", help="record or packet files, or directories")
    p.add_argument("--write", action="store_true", help="write the upgraded files instead of printing a diff")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Run ``upgrade``; returns the exit code."""
    failed = upgraded = 0
    for arg in args.paths:
        try:
            files = expand(arg).files
        except UsageError as err:
            print(f"memzoi: {err}", file=sys.stderr)
            return 2
        for path, display in files:
            status = _upgrade_one(Path(path), display, args.write)
            failed += status < 0
            upgraded += status > 0
    verb = "upgraded" if args.write else "would upgrade"
    print(f"{verb} {upgraded} legacy file(s); {failed} could not be upgraded", file=sys.stderr)
    return 1 if failed else 0


def _upgrade_one(path: Path, display: str, write: bool) -> int:
    """1 when upgraded (or diffed), 0 when not legacy, -1 on failure."""
    try:
        data = path.read_bytes()
    except OSError as err:
        print(f"memzoi: {display}: cannot read: {err.strerror}", file=sys.stderr)
        return -1
    analysis = analyze_bytes(data, path)
    if not analysis.legacy:
        return 0
    decoded = decode(data)
    if decoded.findings:
        print(f"memzoi: {display}: not valid UTF-8; re-save it as UTF-8 first", file=sys.stderr)
        return -1
    try:
        upgrade = upgrade_legacy(frame(decoded.text), analysis.placement)
    except UpgradeError as err:
        print(f"memzoi: {display}: {err}", file=sys.stderr)
        return -1
    after = analyze_text(upgrade.text, path)
    residual = [f for f in after.findings if f.severity == 1]
    if not write:
        # The diff repeats context lines: mask what the detectors found on both sides.
        before_spans, after_spans = secret_spans(analysis.findings), secret_spans(after.findings)
        if before_spans or after_spans:
            shown = Upgrade(redact(upgrade.text, after_spans), upgrade.edits, upgrade.changes)
            sys.stdout.write(shown.diff(redact(decoded.text, before_spans), display))
        else:
            sys.stdout.write(upgrade.diff(decoded.text, display))
    else:
        if path.read_bytes() != data:
            print(f"memzoi: {display}: changed while upgrading; run the command again", file=sys.stderr)
            return -1
        atomic_write(path, upgrade.text.encode("utf-8"))
        print(f"{display}: upgraded ({'; '.join(upgrade.changes)})", file=sys.stderr)
    if residual:
        codes = ", ".join(sorted({f.code for f in residual}))
        print(f"memzoi: {display}: after the upgrade these findings remain: {codes}; run `memzoi check`", file=sys.stderr)
    return 1
