"""``memzoi export [agents-md|claude-md]``: Memzoi's ``AGENTS.memory.md`` / ``CLAUDE.memory.md`` projections of
the active repository records, written under the runtime exports directory (:mod:`memzoi.agent.exports`)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from ..base.printable import printable
from ._changes import actor, add_common, emit_json, refuse
from ._common import add_command, fail


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``export``."""
    from ..agent.exports import TARGETS  # noqa: PLC0415 lazy: start-up

    p = add_command(
        sub,
        "export",
        help="write AGENTS.memory.md / CLAUDE.memory.md projections under the runtime exports folder",
        description="Write Memzoi's instruction projections (AGENTS.memory.md, CLAUDE.memory.md) of the active, "
        "current, admitted repository records of the instruction types (procedure, decision, warning, risk) "
        "under ${MEMZOI_HOME}/projects/<repository-key>/worktrees/<worktree-key>/exports/, never into the "
        "repository unless --output names a place there. Records with an unsafe or error finding are withheld "
        "(listed by id and reason only).",
        examples=[
            "memzoi export",
            "memzoi export agents-md --json",
            "memzoi export claude-md --output docs/CLAUDE.memory.md",
        ],
        exits={
            1: "refused (no index, an --output with `..` or under .memzoi, an existing file export did not "
            "write, a file changed meanwhile)"
        },
    )
    p.add_argument("targets", nargs="*", metavar="TARGET", help=f"what to export: {', '.join(TARGETS)} (default: both)")
    p.add_argument(
        "--output",
        metavar="PATH",
        help="write here instead of the exports folder: a folder (existing, "
        "or ending with /) gets the file names; a file takes one TARGET",
    )
    p.add_argument("--scope-kind", default="repo", help="scope kind of the exported records (default: repo)")
    add_common(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Write the projections and report them."""
    from ..agent.exports import TARGETS, ExportError, export  # noqa: PLC0415 lazy: start-up
    from ..ledger import Refusal  # noqa: PLC0415 lazy: start-up

    unknown = [t for t in args.targets if t not in TARGETS]
    if unknown:
        print(f"memzoi export: unknown TARGET {unknown[0]!r}; one of {', '.join(TARGETS)}", file=sys.stderr)
        return 2
    try:
        out = export(
            Path(args.root),
            list(dict.fromkeys(args.targets)) or None,
            output=args.output,
            scope_kind=args.scope_kind,
            actor=actor(args),
        )
    except ExportError as err:
        return fail(args, err.code, err.message)
    except Refusal as err:
        return refuse(args, err)
    from ..judge.pathsafety import shown_local_path  # noqa: PLC0415 lazy: start-up

    # runtime paths carry the memzoi home's and the project folder's names: shown, never printed raw
    out = {
        **out,
        "exports_dir": shown_local_path(out["exports_dir"]),
        "files": [{**f, "path": shown_local_path(f["path"])} for f in out["files"]],
    }
    if args.json:
        emit_json(out)
        return 0
    for f in out["files"]:
        print(printable(f"{f['status']:9} {f['path']}"))
    from ..agent.bounds import upgrade_hint  # noqa: PLC0415 lazy: start-up

    print(
        f"{len(out['records'])} record(s) exported; {len(out['withheld'])} withheld"
        + "".join(
            "\n"
            + printable(f"  withheld {w['id']}: {', '.join(w['reasons'])}")
            + (f" ({hint})" if (hint := upgrade_hint(w["reasons"])) else "")
            for w in out["withheld"]
        ),
        file=sys.stderr,
    )
    return 0
