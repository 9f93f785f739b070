"""``memzoi handoff [--task T] [--path P…] [--token-budget N] [--include-local] [--include-session] [--json]``:
the pack handed to the next session (Memzoi's ``handoff``, reference §8; :func:`memzoi.agent.context.handoff`):
the context pack, with every open, current checkpoint when ``--include-session`` is given."""

from __future__ import annotations

import argparse
import sys

from ._common import add_command
from .context import add_pack_options, run_pack


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``handoff``."""
    p = add_command(
        sub,
        "handoff",
        help="the context handed to the next session",
        description="The context pack for a task or paths, for the next session; with --include-session every "
        "open, current checkpoint is included (provenance runtime). Give --task or --path.",
        examples=["memzoi handoff --task 'auth middleware' --include-session", "memzoi handoff --path src/auth --json"],
        exits={
            1: "the index is unusable, or a path is outside the project",
            2: "usage error (neither --task nor --path), or not inside a project",
        },
    )
    add_pack_options(p, task_required=False)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Build the handoff pack; exit 0, 1 when refused, 2 without --task or --path or for a bad budget."""
    from ..agent.context import handoff  # noqa: PLC0415 lazy: start-up

    if not args.task.strip() and not args.path:
        print("memzoi handoff: error: give --task or --path", file=sys.stderr)
        return 2
    return run_pack(args, handoff)
