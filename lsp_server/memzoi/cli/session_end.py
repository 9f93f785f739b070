"""``memzoi session-end (--from-file F | --from-checkpoint ID)``: route structured ``{task, candidates[]}`` input to
its destinations as one ledgered change (Memzoi's ``session-end``, reference §8; rules in
:mod:`memzoi.lifecycle.session_end`)."""

from __future__ import annotations

import argparse
from typing import Any

from ..base.printable import printable
from ._changes import actor, add_common, emit_json, project_root, read_text_file, refuse
from ._common import add_command
from .checkpoint import add_operation_options, missing_operation_options


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``session-end``."""
    p = add_command(
        sub,
        "session-end",
        help="route structured session-end candidates (repo, local, session, discard, needs_review)",
        description="Route the explicit candidates of a {task, candidates[]} YAML file (or of a checkpoint made "
        "from such a file): repo becomes a pending packet, local a private local record, session a checkpoint; "
        "discard is skipped and needs_review blocked. If any candidate is not safe for its destination, nothing "
        "is written and the report names only classifications. One ledgered change: `memzoi undo` reverts it.",
        examples=[
            "memzoi session-end --from-file session.yml",
            "memzoi session-end --from-checkpoint ckpt-0123abcd4567",
            "memzoi session-end --from-file session.yml --operation-id op-9 --expected-version 3 --json",
        ],
        exits={
            1: "blocked or refused (nothing written)",
            2: "usage error (--json without --operation-id and --expected-version), or not inside a project",
        },
    )
    src = p.add_mutually_exclusive_group(required=True)
    src.add_argument("--from-file", metavar="FILE", help="the {task, candidates[]} YAML file (- for stdin)")
    src.add_argument("--from-checkpoint", metavar="ID", help="a checkpoint added --from-file with such YAML")
    add_operation_options(
        p, "the checkpoint set version (--from-file) or the checkpoint's version (--from-checkpoint) you observed"
    )
    add_common(p)
    p.set_defaults(func=run)


def _print(out: dict[str, Any]) -> None:
    again = " (replayed)" if out.get("replayed") else ""
    print(
        f"session-end routed{again}"
        + (f": change {out['change_id']}" if out.get("change_id") else ": nothing to write")
    )
    for item in out["candidates"]:
        what = item.get("path") or item.get("local_record") or item.get("checkpoint_id") or ""
        extra = f" ({', '.join(item['reasons'])})" if item.get("reasons") else ""
        print(printable(f"  [{item['index']}] {item['destination']:<12} {item['outcome']}{extra} {what}".rstrip()))


def run(args: argparse.Namespace) -> int:
    """Route the input."""
    from ..ledger import Refusal  # noqa: PLC0415 lazy: start-up
    from ..lifecycle.session_end import BatchBlocked, session_end  # noqa: PLC0415 lazy: start-up

    bad = missing_operation_options(args, "session-end")
    if bad is not None:
        return bad
    try:
        text = read_text_file(args.from_file) if args.from_file is not None else None
        out = session_end(
            project_root(args),
            text=text,
            where=args.from_file or "input",
            checkpoint_id=args.from_checkpoint,
            operation_id=args.operation_id,
            expected_version=args.expected_version,
            actor=actor(args),
        )
    except BatchBlocked as err:
        if args.json:
            emit_json(err.to_json())
            return 1
        refuse(args, err)
        for item in err.report["candidates"]:
            extra = f" ({', '.join(item['reasons'])})" if item.get("reasons") else ""
            print(printable(f"  [{item['index']}] {item['destination']:<12} {item['outcome']}{extra}"))
        return 1
    except Refusal as err:
        return refuse(args, err)
    if args.json:
        emit_json(out)
    else:
        _print(out)
    return 0
