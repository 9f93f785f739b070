"""``memzoi`` entry point: builds the argument parser from the command modules and runs one command.

Exit codes: 0 success, 1 findings of error severity or a refused operation, 2 usage errors. Errors are one
line on stderr naming the file and what to do.
"""

from __future__ import annotations

import argparse
import sys
from importlib import import_module

from .. import __version__

#: Command modules, in help order. Each has ``register(subparsers)`` which sets ``func`` on its parser.
COMMANDS = ["init", "check", "upgrade", "proposals", "local", "supersede", "tombstone", "materialize", "reattest", "undo", "history", "reconcile", "resident", "rebuild", "search", "doctor"]


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    """The parser with every command registered, or only the command ``only`` (imports stay lazy, so
    ``memzoi check`` does not pay for the lifecycle modules)."""
    parser = argparse.ArgumentParser(
        prog="memzoi",
        description="Review Memzoi repository memory: check records and proposal packets, and manage their lifecycle.",
    )
    parser.add_argument("--version", action="version", version=f"memzoi {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in COMMANDS:
        if only is None or name == only:
            import_module(f"{__package__}.{name}").register(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    """Run the CLI; returns the process exit code (also used as ``sys.exit`` status by the console script)."""
    argv = sys.argv[1:] if argv is None else list(argv)
    first = next((a for a in argv if not a.startswith("-")), None)
    parser = build_parser(first if first in COMMANDS else None)
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help(sys.stderr)
        return 2
    try:
        return int(args.func(args) or 0)
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
