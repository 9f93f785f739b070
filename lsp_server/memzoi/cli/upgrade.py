"""``memzoi upgrade [PATH…] [--write | --check] [--diff]``: upgrade legacy records and proposal packets to the
current Memzoi profile.

Without ``--write`` it prints a unified diff per legacy file (``--check``: only the names, exit 1 when anything
would change, as ``ruff format --check``; ``--diff``: the diffs, exit 1 when anything would change, as ``ruff
format --diff``); with ``--write`` it replaces each file atomically over exactly the bytes it read (mode and owner
kept; a read-only file or one that changed meanwhile is refused). Exit 0 when every legacy file was upgraded (or
there was none), 1 when any could not be (or, with ``--check``/``--diff``, would be), 2 on usage errors.

Paths are printed through :func:`memzoi.judge.pathsafety.shown_path` (a secret-bearing one as ``<redacted-path:…>``);
without a path argument they are relative to the current directory. Diff headers name each file relative to the
current directory when it lies below it, else relative to the project root (``a/.memzoi/records/x.md``), so
``git apply`` takes the diff.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import Any

from ..base.printable import printable, printable_block
from ._common import NOT_A_PROJECT, add_command, add_root_json, below_cwd, project_root


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the ``upgrade`` command."""
    p = add_command(
        sub,
        "upgrade",
        help="upgrade legacy records and proposal packets to the current profile (prints a diff)",
        description="Upgrade legacy records and proposal packets (profile memzoi/v0|v1, a version key, no profile, status: current, "
        "confidence labels, expires) to the current profile, keeping title, body, provenance and timestamps byte "
        "for byte. Prints a unified diff (detected secrets masked) unless --write or --check.",
        examples=[
            "memzoi upgrade",
            "memzoi upgrade .memzoi/records --write",
            "memzoi upgrade --check",
            "memzoi upgrade --diff > upgrade.patch && git apply upgrade.patch",
        ],
        exits={
            0: "nothing failed (with --check or --diff: nothing would change)",
            1: "a legacy file could not be upgraded, or with --check or --diff one would change",
            2: "usage error (a missing path), or no PATH and not inside a project",
        },
        project="optional",
    )
    p.add_argument(
        "paths",
        nargs="*",
        metavar="PATH",
        help="record or packet files, or directories (default: the project's .memzoi)",
    )
    mode = p.add_mutually_exclusive_group()
    mode.add_argument("--write", action="store_true", help="write the upgraded files instead of printing a diff")
    mode.add_argument(
        "--check", action="store_true", help="print only which files would change, and exit 1 when any would"
    )
    p.add_argument(
        "--diff",
        action="store_true",
        help="print the diffs (git apply takes them) and exit 1 when any file would change; with --check "
        "also the names",
    )
    add_root_json(p, json_help="print {files: [{path, status, changes, diff?}], upgraded, failed} instead")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Run ``upgrade``; returns the exit code."""
    from ..judge.pathsafety import shown_path  # noqa: PLC0415 lazy: start-up
    from ..runs.check import UsageError, expand  # noqa: PLC0415 lazy: start-up

    paths = args.paths
    if not paths:
        root = project_root(args)
        if not (root / ".memzoi").is_dir():
            print(NOT_A_PROJECT.format(root=root), file=sys.stderr)
            return 2
        paths = [below_cwd(str(root / ".memzoi"))]
    show_diff = args.diff or not (args.check or args.write)
    results: list[dict[str, Any]] = []
    for arg in paths:
        try:
            files = expand(arg).files
        except UsageError as err:
            print(f"memzoi: {err}", file=sys.stderr)
            return 2
        for path, display in files:
            display = shown_path(display)  # a secret-bearing path is never printed
            result = _upgrade_one(Path(path), display, args.write)
            if result is None:
                continue
            results.append(result)
            if not args.json:
                if show_diff and result.get("diff"):
                    sys.stdout.write(printable_block(result["diff"]))
                if args.check and result["status"] == "would_upgrade":
                    print(printable(f"would upgrade {display} ({'; '.join(result['changes'])})"))
    failed = sum(r["status"] == "failed" for r in results)
    changed = len(results) - failed
    if args.json:
        for r in results:
            if not show_diff:
                r.pop("diff", None)
        print(
            json.dumps(
                {"files": results, "upgraded" if args.write else "would_upgrade": changed, "failed": failed},
                indent=2,
                ensure_ascii=False,
            )
        )
    else:
        verb = "upgraded" if args.write else "would upgrade"
        print(f"{verb} {changed} legacy file(s); {failed} could not be upgraded", file=sys.stderr)
    pending = changed and not args.write
    return 1 if failed or ((args.check or args.diff) and pending) else 0


def _upgrade_one(path: Path, display: str, write: bool) -> dict[str, Any] | None:
    """The upgrade of one file: ``None`` when it is not legacy, else ``{path, status: upgraded|would_upgrade|failed,
    changes, diff?, message?}``; problems are also reported on stderr."""
    from ..base.fsutil import ExternalChange, ReadOnlyTarget, swap_file  # noqa: PLC0415 lazy: start-up
    from ..judge.analysis import analyze_bytes, analyze_text  # noqa: PLC0415 lazy: start-up
    from ..judge.legacy import Upgrade, UpgradeError, upgrade_legacy  # noqa: PLC0415 lazy: start-up
    from ..read.document import frame  # noqa: PLC0415 lazy: start-up
    from ..read.text import decode  # noqa: PLC0415 lazy: start-up
    from ..safety.redact import redact, secret_spans  # noqa: PLC0415 lazy: start-up

    def failed(message: str) -> dict[str, Any]:
        print(printable(f"memzoi: {display}: {message}"), file=sys.stderr)
        return {"path": display, "status": "failed", "changes": [], "message": message}

    try:
        data = path.read_bytes()
    except OSError as err:
        return failed(f"cannot read: {err.strerror}")
    analysis = analyze_bytes(data, path)
    if not analysis.legacy:
        return None
    decoded = decode(data)
    if decoded.findings:
        return failed("not valid UTF-8; re-save it as UTF-8 first")
    try:
        upgrade = upgrade_legacy(frame(decoded.text), analysis.placement)
    except UpgradeError as err:
        return failed(str(err))
    after = analyze_text(upgrade.text, path)
    residual = [f for f in after.findings if f.severity == 1]
    result = {"path": display, "status": "upgraded" if write else "would_upgrade", "changes": list(upgrade.changes)}
    if not write:
        # The diff repeats context lines: mask what the detectors found on both sides.
        before_spans, after_spans = secret_spans(analysis.findings), secret_spans(after.findings)
        if before_spans or after_spans:
            shown = Upgrade(redact(upgrade.text, after_spans), upgrade.edits, upgrade.changes)
            result["diff"] = shown.diff(redact(decoded.text, before_spans), _patch_path(path))
        else:
            result["diff"] = upgrade.diff(decoded.text, _patch_path(path))
    else:
        try:
            # Written only over the exact bytes read above; mode and owner are kept.
            swap_file(path, data, upgrade.text.encode("utf-8"))
        except ExternalChange:
            return failed("changed while upgrading, so it was not written; run the command again")
        except ReadOnlyTarget as err:
            return failed(f"{err.strerror}, so it was not written; {err.advice} and run the command again")
        except OSError as err:
            return failed(
                f"cannot write ({err.strerror or err}); the file is unchanged or fully upgraded, never "
                "half-written: check the disk and permissions and run the command again"
            )
        print(printable(f"{display}: upgraded ({'; '.join(upgrade.changes)})"), file=sys.stderr)
    if residual:
        codes = ", ".join(sorted({f.code for f in residual}))
        print(
            printable(f"memzoi: {display}: after the upgrade these findings remain: {codes}; run `memzoi check`"),
            file=sys.stderr,
        )
    return result


def _patch_path(path: Path) -> str:
    """The name of ``path`` in diff headers: relative to the current directory when the file lies below it (what
    ``git apply`` run there expects), else relative to the project root (``.memzoi/…``); redacted when it bears a
    secret (such a diff names no applicable file: rename the file first)."""
    from ..judge.pathsafety import repository_path, shown_path  # noqa: PLC0415 lazy: start-up

    absolute = os.path.abspath(path)
    rel = below_cwd(absolute)
    if rel == absolute:
        rel = repository_path(absolute) or absolute
    return shown_path(rel.replace(os.sep, "/"))
