"""``memzoi safety scan (--staged | --range BASE...HEAD | --file PATH) [--json]``: Memzoi's repository safety scan
of the managed memory files (reference §3.3, §8; :mod:`memzoi.runs.safety_scan`). Exit 0 when every blob is allowed, 2
when one is blocked, 1 on an operational failure (Memzoi's codes; also the second pre-commit hook,
``memzoi-safety-scan``, which scans the staged blobs)."""

from __future__ import annotations

import argparse
import sys

from ..base.printable import printable
from ._changes import add_common, emit_json, project_root
from ._common import add_command, add_group, fail


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``safety`` and ``safety scan``."""
    p = add_command(
        sub,
        "safety",
        help="repository safety scan of .memzoi records, proposals and memory",
        description="Memzoi's later-edit safety scanner.",
        examples=["memzoi safety scan --staged"],
        exits={1: "an operational failure", 2: "a blob is blocked, a usage error, or not inside a project"},
    )
    ps = add_group(p, "safety_command")
    sc = add_command(
        ps,
        "scan",
        help="scan staged blobs, a commit range or one file with Memzoi's write-safety gate",
        description="Run Memzoi's write-safety detectors and content-class gate over the managed files "
        "(.memzoi/records, .memzoi/proposals, .memzoi/memory) that are staged, changed in BASE...HEAD, or named. "
        "Matched text is never printed; a blocked file's path is shown as <redacted-path:HEX>.",
        examples=[
            "memzoi safety scan --staged",
            "memzoi safety scan --range origin/main...HEAD --json",
            "memzoi safety scan --file .memzoi/records/use-pnpm.md",
        ],
        exits={
            0: "every scanned blob is allowed (also when there is none)",
            1: "an operational failure (not a git repository, a bad range, an unreadable or outside file)",
            2: "a blob is blocked (or a usage error, or not inside a project)",
        },
    )
    src = sc.add_mutually_exclusive_group(required=True)
    src.add_argument("--staged", action="store_true", help="the staged managed blobs")
    src.add_argument("--range", metavar="BASE...HEAD", help="the managed blobs changed between two revisions")
    src.add_argument("--file", metavar="PATH", help="one managed working-tree file")
    add_common(sc, actor=False)
    sc.set_defaults(func=run_scan)


def run_scan(args: argparse.Namespace) -> int:
    """Scan; exit 0 allowed, 2 blocked, 1 operational failure."""
    from ..runs.safety_scan import ScanError, safety_scan  # noqa: PLC0415 lazy: start-up

    try:
        out = safety_scan(project_root(args), staged=args.staged, range_spec=args.range, file=args.file)
    except ScanError as err:
        return fail(args, "scan_failed", str(err))
    if args.json:
        emit_json(out)
    elif out["allowed"]:
        print(f"repository safety scan allowed {len(out['files'])} blob(s)")
    else:
        print("repository safety scan blocked")
        for f in out["files"]:
            for x in f["report"]["findings"]:
                print(printable(f"{f['path']}: {x['code']} at {x['field']} ({x['fingerprint']})"))
    if not out["allowed"]:
        sys.stdout.flush()
        return 2
    return 0
