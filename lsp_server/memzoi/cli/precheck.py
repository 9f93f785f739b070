"""``memzoi precheck [--path P] [--action TEXT] [--command TEXT] [--scope-kind K] [--json]``: the risks, warnings
and failed attempts to read before editing a path, taking an action or running a command (Memzoi's ``precheck``,
reference §8; rule in :mod:`memzoi.agent.precheck`). ``--json`` prints Memzoi's shape ``{path, action, command,
warnings: [{id, record_id, message, severity, citations, suggested_next_step}]}`` (plus ``path_score``,
``lexical`` and ``withheld``); every citation carries ``provenance: git``."""

from __future__ import annotations

import argparse

from ..base.printable import printable
from ._changes import add_common, emit_json, project_root, refuse
from ._common import add_command


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``precheck``."""
    p = add_command(
        sub,
        "precheck",
        help="risks, warnings and failed attempts for a path, an action or a command",
        description="Memzoi's precheck: the active, current risk, warning and failed_attempt records whose "
        "applies_to matches --path (exact 5, trailing /** 4, ancestor folder 3, descendant 2) or whose text matches "
        "--action/--command (with a path, text hits must match the path too). At most 25, best first. Reads only.",
        examples=[
            "memzoi precheck --path src/auth/session.ts",
            "memzoi precheck --path config/keys.toml --action 'rotate signing keys' --json",
            "memzoi precheck --command 'npm install'",
        ],
        exits={1: "the index is unusable, or the path is outside the project"},
    )
    p.add_argument("--path", help="repository-relative path about to be changed")
    p.add_argument("--action", help="the planned action, in words")
    p.add_argument("--command", help="the planned shell command")
    p.add_argument("--scope-kind", choices=["repo", "project"], help="only records of this scope")
    add_common(p, actor=False)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Run the precheck; exit 0 (also with no warning), 1 when refused."""
    from ..agent.precheck import precheck  # noqa: PLC0415 lazy: start-up
    from ..ledger import Refusal  # noqa: PLC0415 lazy: start-up

    try:
        out = precheck(
            project_root(args), path=args.path, action=args.action, command=args.command, scope_kind=args.scope_kind
        )
    except Refusal as err:
        return refuse(args, err)
    if args.json:
        emit_json(out)
        return 0
    if not out["warnings"]:
        print("no risks, warnings or failed attempts apply")
    for w in out["warnings"]:
        cite = w["citations"][0]
        where = f"path {cite['path']} (score {w['path_score']})" if w["path_score"] else "text match"
        print(printable(f"[{w['severity']}] {w['record_id']}: {w['message']}"))
        print(printable(f"    {where}, provenance {cite['provenance']}, {cite['file']}"))
        print(printable(f"    {w['suggested_next_step']}"))
    for h in out["withheld"]:
        print(printable(f"withheld {h['id']}: {', '.join(h['reasons'])}"))
    return 0
