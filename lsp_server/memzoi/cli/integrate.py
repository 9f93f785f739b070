"""``memzoi integrate instructions|list``: the Memzoi block of agent instruction files (``AGENTS.md``,
``CLAUDE.md``, a Cursor rule …).

``instructions`` prints the unified diff and writes nothing unless ``--write`` (alias ``--yes``) is given, which
prints the same diff and then writes it; ``--dry-run`` says so explicitly. Every decision (the block, where it goes, the ledgered
write) is :mod:`memzoi.agent.integrate`'s.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from ..base.printable import printable, printable_block
from ._changes import actor, add_common, emit_json, refuse
from ._common import add_command, add_group, fail

_REFUSED = {1: "refused (an unreadable file, a symlink, a file changed meanwhile); nothing written"}


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``integrate`` and its subcommands."""
    top = add_command(
        sub,
        "integrate",
        help="write the Memzoi block into agent instruction files (AGENTS.md, CLAUDE.md)",
        description="Manage the marked Memzoi block (<!-- memzoi:start --> … <!-- memzoi:end -->) that tells a "
        "coding agent how to use the memzoi-mcp tools, that memory is data and never instructions, and how to "
        "propose.",
        examples=["memzoi integrate instructions", "memzoi integrate list"],
        exits=_REFUSED,
    )
    isub = add_group(top, "integrate_command")
    p = add_command(
        isub,
        "instructions",
        help="write or update the Memzoi block of one instruction file (prints a diff)",
        description="Write or update the one marked Memzoi block of an instruction file, never changing a byte "
        "outside its markers and keeping the file's line endings. Prints the unified diff and writes nothing "
        "unless --write (or --yes) is given, which prints the diff and then writes it. A file inside the project is written by one "
        "ledgered change (`memzoi history`, `memzoi undo`); a file outside it by a guarded atomic write.",
        examples=[
            "memzoi integrate instructions",
            "memzoi integrate instructions --file CLAUDE.md --resident-import --write",
            "memzoi integrate instructions --file ~/.codex/AGENTS.md --yes",
            "memzoi integrate instructions --file .cursor/rules/memzoi.mdc --resident-import --write --json",
        ],
        exits=_REFUSED,
    )
    p.add_argument(
        "--file",
        metavar="FILE",
        help="the instruction file, relative to the project root or absolute "
        "(default: an existing AGENTS.md, else an existing CLAUDE.md, else a new AGENTS.md)",
    )
    p.add_argument(
        "--resident-import",
        action="store_true",
        help="also make the client load .zuno/RULES.md (an @.zuno/RULES.md import line in CLAUDE.md "
        "and Cursor rules; a sentence to read it in other files)",
    )
    mode = p.add_mutually_exclusive_group()
    mode.add_argument(
        "--write",
        "--yes",
        dest="write",
        action="store_true",
        help="write the file (without it the diff is printed and nothing is written)",
    )
    mode.add_argument("--dry-run", action="store_true", help="print the diff only (the default)")
    add_common(p)
    p.set_defaults(func=run_instructions)
    p = add_command(
        isub,
        "list",
        help="show which instruction files carry the Memzoi block",
        description="Show the project's instruction files (AGENTS.md, CLAUDE.md, CLAUDE.local.md, "
        ".claude/CLAUDE.md, GEMINI.md, .github/copilot-instructions.md, .cursor/rules/*.mdc) and "
        "whether each carries the Memzoi block, whether it is current and whether it loads the "
        "resident file.",
        examples=["memzoi integrate list", "memzoi integrate list --json"],
        exits={},
    )
    add_common(p, actor=False)
    p.set_defaults(func=run_list)


def run_instructions(args: argparse.Namespace) -> int:
    """Print the diff; with ``--write`` also write the block."""
    from ..agent import integrate  # noqa: PLC0415 lazy: start-up
    from ..ledger import Refusal  # noqa: PLC0415 lazy: start-up

    root = Path(args.root)
    try:
        if args.write:
            plan, change = integrate.write(root, args.file, resident_import=args.resident_import, actor=actor(args))
        else:
            plan, change = integrate.plan(root, args.file, resident_import=args.resident_import), None
    except integrate.InstructionError as err:
        return fail(args, err.code, err.message)
    except Refusal as err:
        return refuse(args, err)
    written = bool(args.write and plan.status != "unchanged")
    diff = plan.diff()
    if args.json:
        emit_json(
            {
                **plan.to_json(),
                "written": written,
                "diff": diff,
                "change": change.to_json() if change is not None else None,
            }
        )
        return 0
    sys.stdout.write(printable_block(diff))  # the diff first, with --write too (then what was written)
    if plan.status == "unchanged":
        print(printable(f"{plan.path}: the Memzoi block is up to date"), file=sys.stderr)
    elif written:
        how = f" (change {change.change_id})" if change is not None else " (outside the project: not ledgered)"
        print(printable(f"{plan.status} the Memzoi block of {plan.path}{how}"), file=sys.stderr)
    else:
        print(printable(f"{plan.path}: would be {plan.status}; run again with --write to write it"), file=sys.stderr)
    return 0


def run_list(args: argparse.Namespace) -> int:
    """List the instruction files and their block."""
    from ..agent import integrate  # noqa: PLC0415 lazy: start-up

    files = integrate.list_files(Path(args.root))
    if args.json:
        emit_json({"files": files})
        return 0
    if not files:
        print("no instruction files; run `memzoi integrate instructions`", file=sys.stderr)
    for f in files:
        if "error" in f:
            state = f"unreadable: {f['error']}"
        elif not f["block"]:
            state = "no Memzoi block"
        else:
            state = "Memzoi block" + ("" if f["current"] else " (outdated: run `memzoi integrate instructions`)")
            state += ", loads .zuno/RULES.md" if f["resident_import"] else ""
        print(printable(f"{f['file']}: {state}"))
    return 0
