"""Shared plumbing of the lifecycle commands: common options, the project root, and printing a change result
or a refusal (SPEC §8: ``{"change_id", "status", "files"}`` / ``{"error": {"code", "message"}}`` and exit 1).

Imports of the core are made where they are used: the commands' parsers are built from this module for
``memzoi --help``, which must not load the ledger (SQLite, the detectors)."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

# Re-exported (re-exported for the commands).
from ..base.printable import printable
from ._common import (
    add_root_json as add_root_json,
    project_root as project_root,
    require_project as require_project,
)

if TYPE_CHECKING:
    from ..ledger import ChangeResult, Refusal


def add_common(p: argparse.ArgumentParser, *, actor: bool = True) -> None:
    """``--json``, ``--root`` and (for writes) ``--actor``."""
    add_root_json(p)
    if actor:
        p.add_argument("--actor", help="who makes the change (default: $MEMZOI_ACTOR or the login name)")


def actor(args: argparse.Namespace) -> str:
    """``--actor`` or the default actor."""
    from ..lifecycle.common import default_actor  # noqa: PLC0415 lazy: start-up

    return (getattr(args, "actor", None) or "").strip() or default_actor()


def emit_json(value: Any) -> None:
    """Print ``value`` as indented JSON."""
    sys.stdout.write(json.dumps(value, indent=2, ensure_ascii=False) + "\n")


def refuse(args: argparse.Namespace, err: Refusal) -> int:
    """Print a refusal (JSON on stdout with ``--json``, else one line on stderr), a secret of the command line
    ``[redacted]`` where its message repeats it (:func:`memzoi.cli._common.unechoed`); returns exit code 1."""
    from ._common import unechoed  # noqa: PLC0415 lazy: start-up

    err.message = unechoed(args, err.message)
    if getattr(args, "json", False):
        emit_json(err.to_json())
    else:
        from ..base.runtime_errors import after_code  # noqa: PLC0415 lazy: start-up

        print(printable(f"memzoi: {err.code}: {after_code(err.code, err.message)}"), file=sys.stderr)
    return 1


def emit_change(args: argparse.Namespace, result: ChangeResult) -> None:
    """Print a change result (JSON or a short text summary: each file worded by
    :attr:`~memzoi.ledger.FileChange.change`)."""
    if args.json:
        emit_json(result.to_json())
        return
    print(printable(f"change {result.change_id} {result.status} ({result.operation})"))
    # An undo's result already states what the undo did (memzoi.ledger.undo_change): no swap here
    for f in result.files:
        print(printable(f"  {f.change:8} {f.path}"))


def run_write(args: argparse.Namespace, op: Callable[[Path, str], ChangeResult]) -> int:
    """Run a write ``op(root, actor)`` and print its result; a refusal exits 1."""
    from ..ledger import Refusal  # noqa: PLC0415 lazy: start-up

    try:
        result = op(project_root(args), actor(args))
    except Refusal as err:
        return refuse(args, err)
    emit_change(args, result)
    return 0


def read_body(args: argparse.Namespace) -> str:
    """The body from ``--body`` or ``--body-file`` (``-`` = stdin); ``""`` when neither is given.

    Raises :class:`Refusal` (``unreadable``) when the file cannot be read or is not UTF-8 text (the message says
    which byte), so :func:`run_write` reports it like any other refusal.
    """
    if getattr(args, "body", None) is not None:
        return str(args.body)
    path = getattr(args, "body_file", None)
    return "" if path is None else read_text_file(path)


def read_text_file(path: str) -> str:
    """The UTF-8 text of ``path`` (``-`` = stdin). Raises :class:`Refusal` (``unreadable``, :func:`unreadable`) when
    it cannot be read or is not UTF-8 text (the message says which byte)."""
    try:
        data = sys.stdin.buffer.read() if path == "-" else Path(path).read_bytes()
        return data.decode("utf-8")
    except (OSError, UnicodeDecodeError) as err:
        raise unreadable(path, err) from err


def unreadable(path: str, err: OSError | UnicodeDecodeError) -> Refusal:
    """The ``unreadable`` refusal of the input file ``path``: named as
    :func:`~memzoi.judge.pathsafety.shown_local_path` shows it, with what went wrong (an ``OSError``'s strerror,
    never its text, which repeats the name; the offset of a byte that is not UTF-8)."""
    from ..judge.pathsafety import shown_local_path  # noqa: PLC0415 lazy: start-up
    from ..ledger import Refusal  # noqa: PLC0415 lazy: start-up

    if isinstance(err, UnicodeDecodeError):
        problem = f"not UTF-8 text (invalid byte at offset {err.start}); re-save it as UTF-8"
    else:
        problem = err.strerror or type(err).__name__
    return Refusal("unreadable", f"{shown_local_path(path)}: cannot read ({problem})")
