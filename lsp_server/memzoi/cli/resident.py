"""``memzoi resident show|list|propose|approve|reject|undo|reconcile`` (and, in :mod:`.resident_reflection`,
``turn|reflect|jobs|job|state|remove``): Zuno's resident memory from the command line.

Thin wiring over :mod:`memzoi.resident`: every decision (validation, promotion, at-most-once writes) is the core's.
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..base.printable import printable, printable_block
from ..base.vocabulary import RECOVERY_MODES, RESIDENT_ACTIONS, RESIDENT_SCOPES, RESIDENT_SOURCES
from ._changes import actor, add_common, emit_json, project_root, refuse
from ._common import add_command, add_group

if TYPE_CHECKING:
    from ..resident.candidates import Candidate

_REFUSED = {1: "refused (the reason and what to do are printed)"}

_COMMANDS = {
    "show": (
        "print the resident prompt blocks with their usage",
        ["memzoi resident show", "memzoi resident show --json"],
    ),
    "list": (
        "list the candidates of this project's resident files (pending first)",
        ["memzoi resident list", "memzoi resident list --status pending --json"],
    ),
    "propose": (
        "propose a change to a resident file; it goes through [promotion] of .memzoi/config.toml",
        [
            "memzoi resident propose --scope project --action add --content 'Run make lint before pushing.' "
            "--reason 'asked twice in review' --confidence 0.8",
            "memzoi resident propose --scope global --action replace --old-text 'tabs' --content 'Use spaces.' "
            "--reason 'user correction' --confidence 1 --source foreground_tool",
        ],
    ),
    "approve": (
        "apply a pending or failed candidate (at most once), optionally with edited content",
        [
            "memzoi resident approve mem_3f2a",
            "memzoi resident approve mem_3f2a --edit",
            "memzoi resident approve mem_3f2a --content 'Run make lint and make test before pushing.'",
        ],
    ),
    "reject": (
        "reject a pending or failed candidate",
        ["memzoi resident reject mem_3f2a --reason 'one-off task detail'"],
    ),
    "undo": ("restore the entries from before an applied candidate", ["memzoi resident undo mem_3f2a"]),
    "reconcile": (
        "classify candidates interrupted by a crash (never replays); recover uncertain ones",
        ["memzoi resident reconcile", "memzoi resident reconcile --recover mem_3f2a restore-before"],
    ),
}


def _parser(sub: argparse._SubParsersAction[argparse.ArgumentParser], name: str) -> argparse.ArgumentParser:
    summary, examples = _COMMANDS[name]
    p = add_command(
        sub,
        name,
        help=summary,
        description=summary[0].upper() + summary[1:] + ".",
        examples=examples,
        exits={} if name in ("show", "list") else _REFUSED,
    )
    add_common(p, actor=name not in ("show", "list"))
    return p


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``resident`` and its subcommands."""
    top = add_command(
        sub,
        "resident",
        help="Zuno resident memory: capped prompt files changed through reviewed candidates",
        description="Zuno resident memory: the global MEMORY.md and the project's .zuno/RULES.md, pasted into "
        "every agent prompt and changed only through candidates (proposed, promoted or approved, undoable).",
        examples=["memzoi resident show", "memzoi resident list"],
        exits=_REFUSED,
    )
    rsub = add_group(top, "resident_command")
    _parser(rsub, "show").set_defaults(func=run_show)
    p = _parser(rsub, "list")
    p.add_argument("--status", help="only candidates in this status (pending, applied, uncertain, …)")
    p.set_defaults(func=run_list)
    p = _parser(rsub, "propose")
    p.add_argument("--scope", required=True, choices=RESIDENT_SCOPES, help="which resident file")
    p.add_argument(
        "--action", required=True, choices=RESIDENT_ACTIONS, help="add an entry, replace or remove the located one"
    )
    p.add_argument("--content", help="the full new entry text (add, replace)")
    p.add_argument("--old-text", help="the locator: a substring of exactly one distinct entry (replace, remove)")
    p.add_argument("--reason", required=True, help="why the change is worth remembering")
    p.add_argument("--confidence", required=True, type=float, help="confidence from 0 to 1")
    p.add_argument("--source", default="user", choices=[*RESIDENT_SOURCES, "tool"], help="who proposes (default: user)")
    p.add_argument("--session", help="source session id (required for reflection)")
    p.add_argument("--message", help="source message id (required for reflection)")
    p.set_defaults(func=run_propose)
    for name, func in (("approve", run_approve), ("reject", run_reject), ("undo", run_undo)):
        p = _parser(rsub, name)
        p.add_argument("candidate_id", metavar="ID", help="candidate id as printed by propose (or a unique prefix)")
        if name == "reject":
            p.add_argument("--reason", required=True, help="why the candidate is rejected")
        if name == "approve":
            p.add_argument(
                "--edit",
                action="store_true",
                help="edit the content in $VISUAL/$EDITOR first (add, "
                "replace); validated like a proposal, both versions kept",
            )
            p.add_argument("--content", help="the edited content, instead of an editor")
        p.set_defaults(func=func)
    p = _parser(rsub, "reconcile")
    p.add_argument(
        "--recover",
        nargs=2,
        metavar=("ID", "MODE"),
        help=f"settle an uncertain candidate; MODE is one of {', '.join(RECOVERY_MODES)}",
    )
    p.add_argument("--reason", help="why (recorded with the recovery)")
    p.set_defaults(func=run_reconcile)
    from .resident_reflection import register as register_reflection  # noqa: PLC0415 lazy: start-up

    register_reflection(rsub)


def _when(ms: int | None) -> str:
    from ..resident.candidate_write import when  # noqa: PLC0415 lazy: start-up

    return when(ms) or "-"


def describe(c: Candidate) -> str:
    """One line: id, status, scope, action, confidence, source and the content (or locator)."""
    from ..resident.locator import preview  # noqa: PLC0415 lazy: start-up

    what = preview(c.content or c.old_text or c.recovery_mode or "")
    return f"{c.id}  {c.status:9} {c.scope:7} {c.action:7} {c.confidence / 100:5.1f}%  {c.source:15} {what}"


def _guard(args: argparse.Namespace, fn: Callable[[], int]) -> int:
    from ..ledger import Refusal  # noqa: PLC0415 lazy: start-up

    try:
        return fn()
    except Refusal as err:
        return refuse(args, err)


def _reconciled(root: Path) -> None:
    """Classify candidates a dead process left in flight before showing anything (best effort: a busy lock or an
    invalid configuration is reported by the command itself; a memzoi home that cannot be written, read-only or
    full, skips it, since showing must not need write access, and a damaged database is named by the read)."""
    from ..base.runtime_errors import RuntimeStateError  # noqa: PLC0415 lazy: start-up
    from ..ledger import Refusal  # noqa: PLC0415 lazy: start-up
    from ..resident import service  # noqa: PLC0415 lazy: start-up

    try:
        service.reconcile(root)
    except (Refusal, RuntimeStateError):
        pass


def run_show(args: argparse.Namespace) -> int:
    """Print both prompt blocks with their usage (or ``--json``)."""
    from ..resident.projection import shown_paths  # noqa: PLC0415 lazy: start-up
    from ..resident.views import scope_views  # noqa: PLC0415 lazy: start-up

    def go() -> int:
        _reconciled(project_root(args))
        views = scope_views(project_root(args))
        # a resident file's absolute path carries the project folder's (or the home's) names: shown, never raw
        shown = [shown_paths(v.to_json()) for v in views]
        if args.json:
            emit_json({"scopes": shown})
            return 0
        for v, data in zip(views, shown, strict=True):
            print(printable(f"# {v.file.scope}: {data['path']} {data['usage']}"))
            if data["error"]:
                print(printable(f"  cannot read: {data['error']}"))
            print(printable_block(v.block) if v.block else "  (no entries)")
            print()
        return 0

    return _guard(args, go)


def run_list(args: argparse.Namespace) -> int:
    """Print the candidates (or ``--json``)."""
    from ..resident.locator import preview  # noqa: PLC0415 lazy: start-up
    from ..resident.projection import shown_paths  # noqa: PLC0415 lazy: start-up
    from ..resident.views import candidates_for  # noqa: PLC0415 lazy: start-up

    def go() -> int:
        _reconciled(project_root(args))
        cands = [c for c in candidates_for(project_root(args)) if not args.status or c.status == args.status]
        if args.json:
            emit_json({"candidates": [shown_paths(c.to_json()) for c in cands]})
            return 0
        for c in cands:
            print(printable(describe(c)))
            print(
                printable(
                    f"    reason: {preview(c.reason)}   by {c.actor} at {_when(c.time_created)}"
                    + (f"   diagnostic: {c.error}" if c.error else "")
                )
            )
        if not cands:
            print("no resident-memory candidates")
        return 0

    return _guard(args, go)


def _emit(args: argparse.Namespace, c: Candidate, **extra: Any) -> int:
    """Print candidate ``c`` (its JSON with ``extra`` under ``--json``); returns the exit code, 0."""
    if args.json:
        from ..resident.projection import shown_paths  # noqa: PLC0415 lazy: start-up

        emit_json(shown_paths({**c.to_json(), **extra}))
        return 0
    print(printable(f"candidate {c.id} {c.status} ({c.scope} {c.action})"))
    if c.action == "recover" and c.error:  # where the bytes the recovery replaced are kept
        from ..judge.pathsafety import with_shown_paths  # noqa: PLC0415 lazy: start-up

        print(printable(f"  {with_shown_paths(c.error, c.target_path)}"))
    if extra.get("promoted"):
        print(printable(f"  applied at once by promotion: {c.decided_by}"))
    if extra.get("held"):
        print(printable(f"  not promoted: {extra['held']}; approve it with `memzoi resident approve {c.id}`"))
    return 0


def run_propose(args: argparse.Namespace) -> int:
    """Validate and record a candidate; promotion may apply it before returning."""
    from ..resident import service  # noqa: PLC0415 lazy: start-up

    def go() -> int:
        res = service.propose(
            project_root(args),
            scope=args.scope,
            action=args.action,
            content=args.content,
            old_text=args.old_text,
            reason=args.reason,
            confidence=args.confidence,
            source=args.source,
            session_id=args.session,
            message_id=args.message,
            actor=actor(args),
        )
        _emit(args, res.candidate, inserted=res.inserted, promoted=res.promoted, held=res.held)
        return 0

    return _guard(args, go)


def _edited_content(candidate_id: str) -> str:
    """The candidate's content as edited in ``$VISUAL``/``$EDITOR`` (a temporary file, removed after)."""
    import shlex  # noqa: PLC0415 lazy: start-up
    import subprocess  # noqa: PLC0415 lazy: start-up
    import tempfile  # noqa: PLC0415 lazy: start-up

    from ..ledger import Refusal  # noqa: PLC0415 lazy: start-up
    from ..resident.candidate_write import find_candidate  # noqa: PLC0415 lazy: start-up

    editor = os.environ.get("VISUAL") or os.environ.get("EDITOR")
    if not editor:
        raise Refusal("no_editor", "set $EDITOR (or $VISUAL), or give the edited text with --content")
    cand = find_candidate(candidate_id)
    fd, name = tempfile.mkstemp(prefix=f"memzoi-{cand.id}-", suffix=".md")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(cand.content or "")
        if subprocess.run([*shlex.split(editor), name], check=False).returncode != 0:
            raise Refusal("editor_failed", f"the editor ({editor}) exited with an error; nothing was approved")
        with open(name, encoding="utf-8") as fh:
            return fh.read()
    finally:
        os.unlink(name)


def run_approve(args: argparse.Namespace) -> int:
    """Apply a pending or failed candidate, with ``--edit``/``--content`` after editing its content."""
    from ..resident import service  # noqa: PLC0415 lazy: start-up
    from ..resident.decisions import edit_and_apply  # noqa: PLC0415 lazy: start-up

    def go() -> int:
        root = project_root(args)
        if args.content is None and not args.edit:
            _emit(args, service.apply(root, args.candidate_id, actor=actor(args)))
            return 0
        content = args.content if args.content is not None else _edited_content(args.candidate_id)
        _emit(args, edit_and_apply(root, args.candidate_id, content, actor=actor(args)))
        return 0

    return _guard(args, go)


def run_reject(args: argparse.Namespace) -> int:
    """Reject a pending or failed candidate."""
    from ..resident import service  # noqa: PLC0415 lazy: start-up

    return _guard(
        args,
        lambda: _emit(
            args, service.reject(project_root(args), args.candidate_id, actor=actor(args), reason=args.reason)
        ),
    )


def run_undo(args: argparse.Namespace) -> int:
    """Undo an applied candidate."""
    from ..resident import service  # noqa: PLC0415 lazy: start-up

    return _guard(args, lambda: _emit(args, service.undo(project_root(args), args.candidate_id, actor=actor(args))))


def run_reconcile(args: argparse.Namespace) -> int:
    """Reconcile, or run one recovery. Exit 1 while an uncertain candidate waits for a recovery."""
    from ..resident import service  # noqa: PLC0415 lazy: start-up
    from ..resident.views import candidates_for  # noqa: PLC0415 lazy: start-up

    def go() -> int:
        root = project_root(args)
        if args.recover:
            cid, mode = args.recover
            _emit(args, service.recover(root, cid, mode, actor=actor(args), reason=args.reason))
            return 0
        from ..resident.projection import reconcile_jobs  # noqa: PLC0415 lazy: start-up

        outcomes = service.reconcile(root)
        expired = reconcile_jobs()
        for jid in expired:
            print(f"reflection job {jid}: running -> uncertain (its owner disappeared; never re-sent)")
        uncertain = [c.id for c in candidates_for(root) if c.status == "uncertain"]
        if args.json:
            emit_json({"reconciled": [o.__dict__ for o in outcomes], "uncertain": uncertain})
            return 1 if uncertain else 0
        for o in outcomes:
            print(f"{o.candidate_id}: {o.previous} -> {o.status}")
        if not outcomes and not uncertain:
            print("no interrupted or uncertain candidates")
        elif not outcomes:
            print(
                f"no interrupted write to classify; {len(uncertain)} uncertain candidate(s) wait for a recovery "
                "choice (`memzoi check` on the resident file says why)"
            )
        for cid in uncertain:
            print(
                f"{cid} is uncertain: run `memzoi resident reconcile --recover {cid} "
                "restore-before|complete-after|accept`"
            )
        return 1 if uncertain else 0

    return _guard(args, go)
