"""``memzoi checkpoint add|continue|close|list``: session checkpoints, explicit task continuity kept in the runtime
plane (Memzoi's ``checkpoint`` commands, reference §8; rules in :mod:`memzoi.lifecycle.checkpoints`)."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from ..base.printable import printable
from ._changes import actor, add_common, emit_json, project_root, read_text_file, refuse
from ._common import add_command, add_group


def add_operation_options(p: argparse.ArgumentParser, version_help: str) -> None:
    """``--operation-id`` and ``--expected-version`` (both required with ``--json``)."""
    p.add_argument(
        "--operation-id",
        metavar="OP",
        help="caller-controlled operation id: an identical retry replays "
        "the recorded outcome; other parameters with the same id fail (required with --json)",
    )
    p.add_argument("--expected-version", metavar="V", type=int, help=version_help + " (required with --json)")


def missing_operation_options(args: argparse.Namespace, command: str) -> int | None:
    """Exit 2 (a usage error, nothing written) when ``--json`` lacks ``--operation-id`` or
    ``--expected-version`` (Memzoi: "required with --json"); ``None`` otherwise."""
    if args.json and (args.operation_id is None or args.expected_version is None):
        print(
            f"memzoi {command}: error: --json requires --operation-id and --expected-version (read the current "
            "version with `memzoi checkpoint list --json`)",
            file=sys.stderr,
        )
        return 2
    return None


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``checkpoint`` and its subcommands."""
    p = add_command(
        sub,
        "checkpoint",
        help="session checkpoints: explicit task continuity in the runtime plane",
        description="Session checkpoints (type episode, lane session) live only in the runtime database, never "
        "under .memzoi/ and never in git. They store only the --note or --from-file content you give.",
        examples=[
            "memzoi checkpoint add --task 'Auth middleware' --note 'Stopped at token refresh'",
            "memzoi checkpoint list",
        ],
        exits={1: "a refused write or an unknown id"},
    )
    ps = add_group(p, "checkpoint_command")
    ad = add_command(
        ps,
        "add",
        help="store a checkpoint from a note or a file (one ledgered change)",
        description="Store a session checkpoint holding exactly the --note text or the --from-file content. "
        "--successor-of names a closed or expired checkpoint whose lineage the new one continues.",
        examples=[
            "memzoi checkpoint add --task 'Auth middleware' --note 'Stopped at token refresh'",
            "memzoi checkpoint add --task 'Auth middleware' --from-file notes.md",
            "memzoi checkpoint add --task 'Auth middleware' --note 'Day 2' --successor-of ckpt-0123abcd4567",
            "memzoi checkpoint add --task T --note N --operation-id op-1 --expected-version 0 --json",
        ],
        exits={
            1: "refused (a secret in the note, an open predecessor, a version or operation-id conflict)",
            2: "usage error (--json without --operation-id and --expected-version), or not inside a project",
        },
    )
    ad.add_argument("--task", required=True, help="the task the checkpoint belongs to")
    body = ad.add_mutually_exclusive_group(required=True)
    body.add_argument("--note", help="the checkpoint note (stored as given)")
    body.add_argument("--from-file", metavar="FILE", help="file whose content is the checkpoint (- for stdin)")
    ad.add_argument("--successor-of", metavar="ID", help="a closed or expired checkpoint this one succeeds")
    add_operation_options(ad, "the checkpoint set version you observed (`checkpoint list --json`: version)")
    add_common(ad)
    ad.set_defaults(func=run_add)
    for name, verb, text in (
        ("continue", run_continue, "record a continuation of an open, current checkpoint"),
        ("close", run_close, "close a checkpoint (terminal; closing twice is a no-op)"),
    ):
        c = add_command(
            ps,
            name,
            help=text,
            description=text[0].upper() + text[1:] + ".",
            examples=[
                f"memzoi checkpoint {name} ckpt-0123abcd4567",
                f"memzoi checkpoint {name} ckpt-0123abcd4567 --operation-id op-2 --expected-version 1 --json",
            ],
            exits={
                1: "refused (unknown id, closed or expired checkpoint, a version or operation-id conflict)",
                2: "usage error (--json without --operation-id and --expected-version), or not inside a project",
            },
        )
        c.add_argument("id", metavar="ID", help="checkpoint id (see `memzoi checkpoint list`)")
        add_operation_options(c, "the checkpoint's version you observed")
        add_common(c, actor=False)
        c.set_defaults(func=verb)
    ls = add_command(
        ps,
        "list",
        help="list checkpoints, newest first",
        description="List the session checkpoints of this project, newest first, with the checkpoint "
        "set version (the --expected-version of `checkpoint add`).",
        examples=["memzoi checkpoint list", "memzoi checkpoint list --json"],
        exits={},
    )
    add_common(ls, actor=False)
    ls.set_defaults(func=run_list)


def _line(cp: dict[str, Any]) -> str:
    state = cp["status"] if cp["status"] == "closed" else ("current" if cp["current"] else "expired")
    lineage = f"  after {cp['lineage']['predecessor_id']}" if cp["lineage"]["predecessor_id"] else ""
    return (
        f"{cp['id']}  {state}  v{cp['version']}  until {cp['retention_decision']['effective_boundary']}  "
        f"{cp['task']}{lineage}"
    )


def _emit(args: argparse.Namespace, out: dict[str, Any], verb: str) -> int:
    if args.json:
        emit_json(out)
        return 0
    again = " (replayed)" if out.get("replayed") else ""
    print(f"checkpoint {out['checkpoint']['id']} {verb}{again}")
    print(printable("  " + _line(out["checkpoint"])))
    return 0


def run_add(args: argparse.Namespace) -> int:
    """Add a checkpoint."""
    from ..ledger import Refusal  # noqa: PLC0415 lazy: start-up
    from ..lifecycle.checkpoints import add_checkpoint  # noqa: PLC0415 lazy: start-up

    bad = missing_operation_options(args, "checkpoint add")
    if bad is not None:
        return bad
    try:
        body, kind = (args.note, "note") if args.note is not None else (read_text_file(args.from_file), "file")
        out = add_checkpoint(
            project_root(args),
            task=args.task,
            body=body,
            source_kind=kind,
            successor_of=args.successor_of,
            operation_id=args.operation_id,
            expected_version=args.expected_version,
            actor=actor(args),
        )
    except Refusal as err:
        return refuse(args, err)
    return _emit(args, out, "added")


def _transition(args: argparse.Namespace, name: str) -> int:
    from ..ledger import Refusal  # noqa: PLC0415 lazy: start-up
    from ..lifecycle import checkpoint_transitions as transitions  # noqa: PLC0415 lazy: start-up

    bad = missing_operation_options(args, f"checkpoint {name}")
    if bad is not None:
        return bad
    fn = transitions.continue_checkpoint if name == "continue" else transitions.close_checkpoint
    try:
        out = fn(project_root(args), args.id, operation_id=args.operation_id, expected_version=args.expected_version)
    except Refusal as err:
        return refuse(args, err)
    verb = {"continue": "continued", "close": "closed" if out["changed"] else "was already closed"}[name]
    return _emit(args, out, verb)


def run_continue(args: argparse.Namespace) -> int:
    """Continue a checkpoint."""
    return _transition(args, "continue")


def run_close(args: argparse.Namespace) -> int:
    """Close a checkpoint."""
    return _transition(args, "close")


def run_list(args: argparse.Namespace) -> int:
    """List checkpoints."""
    from ..base.clock import utc_now  # noqa: PLC0415 lazy: start-up
    from ..lifecycle.checkpoints import list_checkpoints  # noqa: PLC0415 lazy: start-up

    now = utc_now()
    version, items = list_checkpoints(project_root(args))
    rows = [c.to_json(now) for c in items]
    if args.json:
        emit_json({"version": version, "checkpoints": rows})
        return 0
    print(f"checkpoint set version {version}")
    if not rows:
        print("no checkpoints")
    for cp in rows:
        print(printable(_line(cp)))
    return 0
