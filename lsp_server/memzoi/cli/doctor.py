"""``memzoi doctor [--json]``: health of the workspace and its index, with repair steps (SPEC §7, §8).

Prints the report of :func:`memzoi.runs.doctor.diagnose` (Memzoi's doctor shape; see there), as text or with
``--json``. Exit 0 when every check is ok, 1 when any check warns or finds an error (a damaged ledger or resident
candidate database).
"""

from __future__ import annotations

import argparse

from ..base.printable import printable
from ._changes import add_common, emit_json, project_root
from ._common import add_command


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``doctor``."""
    p = add_command(
        sub,
        "doctor",
        help="check the workspace, the git plane, the index and the runtime databases; print repair steps",
        description="Report the health of the project: the records root, git, the workspace index (missing, "
        "stale or changed entries, full-text integrity), refused records, the runtime directory, and SQLite's "
        "integrity check of the ledger and the resident candidate database (a damaged one is an error: memzoi "
        "never replaces it, and the next steps say how to keep a copy and export what is readable), with the "
        "next steps, and every change a dead process left in flight or that is uncertain, with what to run "
        "(`memzoi reconcile`, `memzoi reconcile --recover`), and this checkout's ledger kept in another runtime "
        "folder (a moved repository's, or the one kept while git refused it: `memzoi reconcile --adopt`). Never "
        "writes.",
        examples=["memzoi doctor", "memzoi doctor --json --root ../other-repo"],
        exits={
            0: "every check is ok",
            1: "a check warns or finds an error, or a change is in flight or uncertain (see the next steps)",
        },
    )
    add_common(p, actor=False)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Print the report; exit 0 when everything is ok, 1 otherwise (a warning or an error)."""
    from ..runs.doctor import diagnose  # noqa: PLC0415 lazy: start-up

    report = diagnose(project_root(args))
    if args.json:
        emit_json(report)
    else:
        print(printable(f"project: {report['project_root']}"))
        for c in report["checks"]:
            print(printable(f"  {c['status']:7} {c['name']}: {c['message']}"))
        if report["next_steps"]:
            print("next steps:")
            for s in report["next_steps"]:
                print(printable(f"  - {s}"))
    return 0 if report["status"] == "ok" else 1
