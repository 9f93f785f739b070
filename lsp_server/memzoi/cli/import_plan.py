"""``memzoi import plan|apply --from-file MANIFEST``: classified import of an explicit ``memzoi/import`` manifest
(Memzoi's ``import`` commands, reference §8; rules in :mod:`memzoi.lifecycle.import_plan` and
:mod:`memzoi.lifecycle.import_apply`). ``plan`` writes nothing; ``apply`` writes the reviewed plan as one ledgered
change. (The module is not named ``import``, a Python keyword.)"""

from __future__ import annotations

import argparse
from typing import Any

from ..base.printable import printable
from ._changes import add_root_json, emit_json, project_root, read_text_file, refuse
from ._common import add_command, add_group


def _options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--from-file", metavar="FILE", required=True, help="the memzoi/import manifest (YAML; - for stdin)")
    p.add_argument(
        "--actor",
        default="cli",
        help="who imports (default: cli); part of the plan id, so apply with the actor you planned with",
    )
    add_root_json(p)


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``import`` with ``plan`` and ``apply``."""
    p = add_command(
        sub,
        "import",
        help="plan and apply a classified import manifest (repo, local, session, discard, needs_review)",
        description="Import explicit candidates from a memzoi/import manifest. `plan` shows each candidate's "
        "outcome and the plan id without writing; `apply` recomputes the plan, refuses a stale id, and writes "
        "pending packets (repo) and private runtime rows (local, session) as one ledgered change.",
        examples=[
            "memzoi import plan --from-file manifest.yml",
            "memzoi import apply --from-file manifest.yml --plan-id import_0123…",
        ],
        exits={1: "an invalid manifest or a refused apply (nothing written)"},
    )
    ps = add_group(p, "import_command")
    pl = add_command(
        ps,
        "plan",
        help="the mutation-free plan of a manifest",
        description="Print the deterministic plan of the manifest: its plan id and, per candidate, the action "
        "(create_proposal with the packet path, create_runtime, duplicate, no_write, blocked). If any repo "
        "candidate is not repo-safe, every repo candidate is blocked and the unsafe ones show no content.",
        examples=["memzoi import plan --from-file manifest.yml", "memzoi import plan --from-file manifest.yml --json"],
        exits={1: "an invalid manifest"},
    )
    _options(pl)
    pl.set_defaults(func=run_plan)
    ap = add_command(
        ps,
        "apply",
        help="write a reviewed plan (one ledgered change)",
        description="Recompute the plan and, when its id is --plan-id, write its pending packets and runtime rows "
        "as one ledgered change (`memzoi undo` reverts it). Applying the same manifest again replays the outcome.",
        examples=[
            "memzoi import apply --from-file manifest.yml --plan-id import_0123…",
            "memzoi import apply --from-file manifest.yml --plan-id import_0123… --json",
        ],
        exits={1: "an invalid manifest, a stale plan id or another refusal (nothing written)"},
    )
    _options(ap)
    ap.add_argument("--plan-id", required=True, metavar="ID", help="the plan id `memzoi import plan` printed")
    ap.set_defaults(func=run_apply)


def _target(item: dict[str, Any]) -> str:
    action = item["action"]
    if action["kind"] == "create_proposal":
        return str(action["path"])
    if action["kind"] == "create_runtime":
        return str(action["route"])
    if action["kind"] == "duplicate":
        return "of " + ", ".join(f"{m['kind']} {m['id']}" for m in action["matches"])
    codes = f" ({', '.join(action['reasons'])})" if action.get("reasons") else ""
    return str(action.get("reason", "")) + codes


def print_plan(out: dict[str, Any]) -> None:
    """The human-readable plan: one line per candidate (index, destination, action, where it goes or why not)."""
    s = out["summary"]
    print(f"import {out['mode']} {out['plan_id']}")
    print(
        f"  {s['total']} candidate(s): {s['create_proposals']} proposal(s), {s['local_writes']} local, "
        f"{s['session_writes']} session, {s['duplicates']} duplicate, {s['discarded']} discarded, "
        f"{s['needs_review']} blocked"
    )
    for item in out["candidates"]:
        dest = item["classification"]["destination"]
        print(printable(f"  [{item['index']}] {dest:<12} {item['action']['kind']:<15} {_target(item)}".rstrip()))


def _read(args: argparse.Namespace) -> str:
    return read_text_file(args.from_file)


def run_plan(args: argparse.Namespace) -> int:
    """Print the plan."""
    from ..ledger import Refusal  # noqa: PLC0415 lazy: start-up
    from ..lifecycle.import_plan import plan_import  # noqa: PLC0415 lazy: start-up

    try:
        out = plan_import(project_root(args), _read(args), where=args.from_file, actor=args.actor, path=args.from_file)
    except Refusal as err:
        return refuse(args, err)
    if args.json:
        emit_json(out)
    else:
        print_plan(out)
    return 0


def run_apply(args: argparse.Namespace) -> int:
    """Apply the plan."""
    from ..ledger import Refusal  # noqa: PLC0415 lazy: start-up
    from ..lifecycle.import_apply import import_apply  # noqa: PLC0415 lazy: start-up

    try:
        out = import_apply(
            project_root(args),
            _read(args),
            plan_id=args.plan_id,
            where=args.from_file,
            actor=args.actor,
            path=args.from_file,
        )
    except Refusal as err:
        return refuse(args, err)
    if args.json:
        emit_json(out)
        return 0
    print_plan(out)
    again = " (replayed)" if out.get("replayed") else ""
    print(f"applied{again}: " + (f"change {out['change_id']}" if out.get("change_id") else "nothing to write"))
    for w in out["writes"]:
        print(
            printable(
                f"  wrote [{w['index']}] "
                + (w["path"] if w["kind"] == "proposal_file" else f"{w['destination']} {w['record_id']}")
            )
        )
    return 0
