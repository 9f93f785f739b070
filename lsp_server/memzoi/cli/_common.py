"""Conventions every ``memzoi`` command follows, in one place (a test walks the parser and holds each to them):

* ``--help`` gives a description, examples and the exit codes (:func:`add_command`);
* every argument has help text;
* every command that works on a project takes ``--root`` and ``--json`` (:func:`add_root_json`); commands that
  never touch a project (``schema``, ``explain``, ``completion``) say so with ``project="none"``;
* outside a project, every command that needs one exits 2 with :data:`NOT_A_PROJECT` before doing anything, so
  nothing is created (the dispatcher calls :func:`require_project`).

Kept free of heavy imports: ``memzoi --version`` and ``memzoi check`` load only what they use.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import textwrap
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pathlib import Path

#: ``project=`` values of :func:`add_command`: the dispatcher requires a project (``required``), the command
#: finds it itself because paths may replace it (``optional``), creates one (``creates``) or never uses one.
PROJECT_MODES = ("required", "optional", "creates", "none")

NOT_A_PROJECT = (
    "memzoi: no .memzoi directory at {root}; run `memzoi init` there to start one, or run inside a "
    "project or pass --root PROJECT"
)

_EXIT_DEFAULTS = {0: "success", 2: "usage error, or not inside a project (nothing is written)"}


def add_command(
    sub: argparse._SubParsersAction[argparse.ArgumentParser],
    name: str,
    *,
    help: str,
    description: str,
    examples: list[str],
    exits: dict[int, str],
    project: str = "required",
) -> argparse.ArgumentParser:
    """Add subcommand ``name`` with its one-line ``help`` (shown in the parent's list), a ``description``,
    ``examples`` (command lines) and ``exits`` (exit code → meaning; codes 0 and 2 get default meanings)."""
    if project not in PROJECT_MODES:
        raise ValueError(f"project must be one of {PROJECT_MODES}")
    codes = {**_EXIT_DEFAULTS, **exits}
    if project == "none":
        codes[2] = exits.get(2, "usage error")
    epilog = (
        "examples:\n"
        + "".join(f"  {e}\n" for e in examples)
        + "\nexit status:\n"
        + "".join(f"  {code}  {text}\n" for code, text in sorted(codes.items()))
    )
    p = sub.add_parser(
        name,
        help=help,
        description=textwrap.fill(description, 100),
        epilog=epilog,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.set_defaults(project=project)
    return p


def add_group(p: argparse.ArgumentParser, dest: str) -> argparse._SubParsersAction[argparse.ArgumentParser]:
    """Subcommands of a command group (``proposals``, ``local``, ``materialize``)."""
    return p.add_subparsers(dest=dest, metavar="SUBCOMMAND", required=True, title="subcommands")


def add_root_json(
    p: argparse.ArgumentParser,
    *,
    json_help: str = "print JSON instead of text",
    root_help: str = "project root (default: found from the current directory)",
) -> None:
    """``--root DIR`` and ``--json`` (``root_help`` for a command whose root is not discovered: ``init``)."""
    p.add_argument("--root", metavar="DIR", help=root_help)
    p.add_argument("--json", action="store_true", help=json_help)


def project_root(args: argparse.Namespace) -> Path:
    """The project root from ``--root`` or the current directory (Memzoi's discovery, reference §7.2)."""
    from pathlib import Path  # noqa: PLC0415 lazy: start-up

    from ..judge.projectroot import root_of  # noqa: PLC0415 lazy: start-up

    return Path(root_of(getattr(args, "root", None)))


def below_cwd(path: str) -> str:
    """``path`` relative to the current directory when it lies below it, else unchanged: how ruff prints the
    paths of a run without path arguments (``.memzoi/records/x.md``, not the machine's absolute path)."""
    try:
        rel = os.path.relpath(path)
    except ValueError:  # another drive (Windows)
        return path
    return path if rel == os.pardir or rel.startswith(os.pardir + os.sep) else rel


def require_project(args: argparse.Namespace) -> Path | None:
    """The project root, or ``None`` after printing :data:`NOT_A_PROJECT` when it has no ``.memzoi`` folder."""
    root = project_root(args)
    if not (root / ".memzoi").is_dir():
        print(NOT_A_PROJECT.format(root=root), file=sys.stderr)
        return None
    return root


def unechoed(args: argparse.Namespace, message: str) -> str:
    """``message`` with each text a secret detector flags in the command line (``args.given``, the arguments
    :func:`memzoi.cli.main.main` parsed) replaced by ``[redacted]`` wherever it repeats it
    (:func:`memzoi.safety.redact.scrub_echoes`): a message may quote an argument (``no change ID``). Only what the
    caller gave is masked, so the runtime paths a message names stay readable."""
    given = getattr(args, "given", None)
    if not given:
        return message
    from ..safety.redact import given_secrets, scrub_echoes  # noqa: PLC0415 lazy: start-up

    shown: str = scrub_echoes(message, given_secrets(list(given)))
    return shown


def fail(args: argparse.Namespace, code: str, message: str) -> int:
    """Report a failed command: ``{"error": {"code", "message"}}`` on stdout with ``--json``, else one line
    ``memzoi: CODE: MESSAGE`` on stderr (as refusals), a secret of the command line ``[redacted]`` where
    ``message`` repeats it (:func:`unechoed`); returns exit code 1."""
    message = unechoed(args, message)
    if getattr(args, "json", False):
        sys.stdout.write(json.dumps({"error": {"code": code, "message": message}}, indent=2, ensure_ascii=False) + "\n")
    else:
        from ..base.printable import printable  # noqa: PLC0415 lazy: start-up
        from ..base.runtime_errors import after_code  # noqa: PLC0415 lazy: start-up

        print(printable(f"memzoi: {code}: {after_code(code, message)}"), file=sys.stderr)
    return 1


def refuse_linked_plane(args: argparse.Namespace, root: Path) -> int | None:
    """Exit 1 with a ``canonical_path`` error when a git-plane folder of ``root`` (``.memzoi``, its ``records``
    or ``proposals``) is a symlink, which nothing reads through (as ``memzoi check`` reports); ``None`` otherwise."""
    from ..judge.workspace import linked_plane, linked_plane_message  # noqa: PLC0415 lazy: start-up

    linked = linked_plane(root / ".memzoi")
    return fail(args, "canonical_path", linked_plane_message(linked)) if linked else None
