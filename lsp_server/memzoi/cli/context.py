"""``memzoi context --task T [--path P…] [--token-budget N] [--include-local] [--include-session] [--json]``: the
task's context pack, repository records (``provenance: git``) and, only when asked, private runtime rows
(``provenance: runtime``) in a separate section (Memzoi's ``context``, reference §8; rules in
:mod:`memzoi.agent.context`)."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from typing import Any

from ..base.printable import printable, printable_block
from ._changes import add_common, emit_json, project_root, refuse
from ._common import add_command


def add_pack_options(p: argparse.ArgumentParser, *, task_required: bool) -> None:
    """``--task``, ``--path`` (repeatable), ``--token-budget``, ``--include-local``, ``--include-session``."""
    p.add_argument("--task", required=task_required, default="", help="what is about to be done")
    p.add_argument(
        "--path", action="append", default=[], metavar="PATH", help="a repository path the task touches (repeatable)"
    )
    p.add_argument(
        "--token-budget",
        type=int,
        default=2000,
        metavar="N",
        help="upper bound in estimated tokens (UTF-8 bytes / 4; default 2000)",
    )
    p.add_argument("--include-local", action="store_true", help="also private local records (provenance runtime)")
    p.add_argument(
        "--include-session", action="store_true", help="also open, current session checkpoints (provenance runtime)"
    )
    add_common(p, actor=False)


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``context``."""
    p = add_command(
        sub,
        "context",
        help="a task's context pack (git records; runtime rows only when asked)",
        description="The admitted, active, current repository records relevant to --task and --path, cut to "
        "--token-budget. Private local records and session checkpoints are included only with --include-local / "
        "--include-session, in a separate runtime section marked provenance runtime: never repository truth.",
        examples=[
            "memzoi context --task 'refresh tokens' --path src/auth/session.ts",
            "memzoi context --task 'refresh tokens' --include-local --include-session --json",
        ],
        exits={
            1: "the index is unusable, or a path is outside the project",
            2: "usage error (a --token-budget below 1), or not inside a project",
        },
    )
    add_pack_options(p, task_required=True)
    p.set_defaults(func=run)


def emit(args: argparse.Namespace, out: dict[str, Any]) -> int:
    """Print a pack: JSON with ``--json``, else its text blocks under one header line."""
    if args.json:
        emit_json(out)
        return 0
    print(
        f"{len(out['records'])} repository record(s) (provenance git), {len(out['runtime'])} runtime row(s) "
        f"(provenance runtime), {out['tokens_used']}/{out['token_budget']} tokens ({out['token_counting']})\n"
    )
    for e in out["records"]:
        print(printable_block(e["text"]))
    for e in out["runtime"]:
        print(printable_block(e["text"]))
    if out["withheld"]:
        print(printable("withheld: " + ", ".join(f"{w['id']} ({', '.join(w['reasons'])})" for w in out["withheld"])))
    if out["omitted"]:
        print(printable("over the budget: " + ", ".join(out["omitted"])))
    return 0


def run(args: argparse.Namespace) -> int:
    """Build the pack; exit 0, 1 when refused, 2 for a bad budget."""
    from ..agent.context import context_pack  # noqa: PLC0415 lazy: start-up

    return run_pack(args, context_pack)


def run_pack(args: argparse.Namespace, build: Callable[..., dict[str, Any]]) -> int:
    """Build a pack with ``build`` (:func:`memzoi.agent.context.context_pack` or ``handoff``, called with the
    project root, the task and the pack options of ``args``) and print it; exit 0, 1 when refused, 2 for a bad
    budget."""
    from ..ledger import Refusal  # noqa: PLC0415 lazy: start-up

    if args.token_budget < 1:
        print("memzoi: --token-budget must be at least 1", file=sys.stderr)
        return 2
    try:
        out = build(
            project_root(args),
            args.task,
            paths=args.path,
            token_budget=args.token_budget,
            include_local=args.include_local,
            include_session=args.include_session,
        )
    except Refusal as err:
        return refuse(args, err)
    return emit(args, out)
