"""``memzoi resident turn|reflect|jobs|job|state|remove``: Zuno's reflection, the WorkStateProjection and the
one-step removal from the command line (issue 34). Thin wiring over :mod:`memzoi.resident.reflection`,
:mod:`memzoi.resident.projection` and :mod:`memzoi.resident.decisions`."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import Any

from ..base.printable import printable
from ..base.vocabulary import RESIDENT_SCOPES
from ._changes import actor, add_common, emit_json, project_root, refuse
from ._common import add_command

_COMMANDS = {
    "turn": (
        "record a delivered assistant message and say whether a reflection review is due",
        [
            "memzoi resident turn --session ses_1 --message msg_42",
            "memzoi resident turn --session ses_1 --message msg_43 --recovered --json",
        ],
        {1: "refused (the reason and what to do are printed)"},
    ),
    "reflect": (
        "review one delivered turn with the configured small model (at most once per message)",
        ["memzoi resident reflect --session ses_1 --transcript turn.jsonl"],
        {
            1: "refused (not_sent: the message's review already ran or is running, and none is sent twice), or "
            "the review failed or is disabled (the reason is printed and recorded)"
        },
    ),
    "jobs": (
        "list this project's reflection jobs and their outcomes",
        ["memzoi resident jobs", "memzoi resident jobs --json"],
        {1: "refused (the reason and what to do are printed)"},
    ),
    "job": (
        "show one reflection job: its request exactly as sent and its outcome (secrets screened)",
        ["memzoi resident job reflection_3f2a", "memzoi resident job reflection_3f2a --json"],
        {1: "no such job"},
    ),
    "state": (
        "print the WorkStateProjection: entries, cap usage, candidates and reflection jobs",
        ["memzoi resident state", "memzoi resident state --json"],
        {1: "refused (the reason is printed)"},
    ),
    "remove": (
        "remove one resident entry as one audited step (a remove candidate recorded and applied together)",
        ["memzoi resident remove --scope project 'make lint'"],
        {1: "refused (the reason is printed)"},
    ),
}


def _parser(sub: argparse._SubParsersAction[argparse.ArgumentParser], name: str) -> argparse.ArgumentParser:
    summary, examples, exits = _COMMANDS[name]
    p = add_command(
        sub, name, help=summary, description=summary[0].upper() + summary[1:] + ".", examples=examples, exits=exits
    )
    add_common(p, actor=name in ("reflect", "remove"))
    return p


def register(rsub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the reflection, projection and removal subcommands to ``memzoi resident``."""
    p = _parser(rsub, "turn")
    p.add_argument("--session", required=True, help="the session id")
    p.add_argument("--message", required=True, help="the delivered assistant message's id")
    p.add_argument("--interrupted", action="store_true", help="the turn was interrupted (not counted)")
    p.add_argument("--negative", action="store_true", help="a negative-learning turn (counted, never reviewed)")
    p.add_argument("--recovered", action="store_true", help="a verified recovery (a review is due at once)")
    p.set_defaults(func=run_turn)
    p = _parser(rsub, "reflect")
    p.add_argument("--session", required=True, help="the session id")
    p.add_argument(
        "--transcript",
        required=True,
        metavar="FILE",
        help="the turn's transcript, JSON Lines ending with the delivered assistant message",
    )
    p.set_defaults(func=run_reflect)
    p = _parser(rsub, "jobs")
    p.add_argument("--session", help="only this session's jobs")
    p.set_defaults(func=run_jobs)
    p = _parser(rsub, "job")
    p.add_argument("job_id", metavar="ID", help="job id as printed by jobs or reflect (or a unique prefix)")
    p.set_defaults(func=run_job)
    _parser(rsub, "state").set_defaults(func=run_state)
    p = _parser(rsub, "remove")
    p.add_argument("locator", metavar="LOCATOR", help="a substring of exactly one distinct entry")
    p.add_argument("--scope", default="project", choices=RESIDENT_SCOPES, help="which resident file (default: project)")
    p.add_argument("--reason", help="why (recorded; default: removed by the user)")
    p.set_defaults(func=run_remove)


def _guard(args: argparse.Namespace, fn: Callable[[], int]) -> int:
    """``fn()``, a refusal printed with its local paths shown (:func:`_shown`)."""
    from ..ledger import Refusal  # noqa: PLC0415 lazy: start-up

    try:
        return fn()
    except Refusal as err:
        err.message, err.path = _shown(args, err.message), _shown(args, err.path)
        return refuse(args, err)


def _shown(args: argparse.Namespace, value: Any) -> Any:
    """``value`` (text or JSON data) with the places of this machine it names (the project's root and runtime
    directory, the memzoi home, Zuno's folder holding the user's configuration and the global file) shown as
    :func:`memzoi.judge.pathsafety.shown_for_projects` shows them. A ``--transcript`` path elsewhere is the user's
    own and stays as given."""
    from ..judge.pathsafety import shown_for_projects  # noqa: PLC0415 lazy: start-up
    from ..ledger import Refusal  # noqa: PLC0415 lazy: start-up

    try:
        roots = [project_root(args)]
    except Refusal:  # no project: the memzoi home and Zuno's folder are still shown
        roots = []
    return shown_for_projects(value, roots)


def run_turn(args: argparse.Namespace) -> int:
    """Count a delivered message; print whether a review is due (exit 0 either way)."""
    from ..resident.projection import shown_paths  # noqa: PLC0415 lazy: start-up
    from ..resident.reflection import record_turn  # noqa: PLC0415 lazy: start-up
    from ..resident.reflection_config import reflection_settings  # noqa: PLC0415 lazy: start-up

    def go() -> int:
        settings = reflection_settings()
        adm = record_turn(
            args.session,
            args.message,
            interrupted=args.interrupted,
            negative=args.negative,
            recovered_=args.recovered,
            settings=settings,
            project_root=project_root(args),
        )
        if args.json:
            emit_json(_shown(args, shown_paths({**adm.to_json(), "disabled": settings.disabled})))
            return 0
        if adm.state == "not_counted":
            print(f"not counted: an interrupted turn ({adm.count} delivered messages in session {args.session})")
        elif adm.state == "already_recorded":
            print(
                f"already recorded as message {adm.ordinal}"
                + (f"; job {adm.job.id} is {adm.job.status}" if adm.job else "; no review for it")
            )
        elif adm.job is not None:
            print(
                f"message {adm.ordinal}: review due ({adm.job.trigger}), job {adm.job.id}; run `memzoi resident "
                f"reflect --session {args.session} --transcript FILE`"
            )
        else:
            print(
                f"message {adm.ordinal}: no review due (nudge_interval {adm.interval}"
                + (", a negative-learning turn is never reviewed" if args.negative else "")
                + ")"
                + (f"; {_shown(args, settings.disabled)}" if settings.disabled else "")
            )
        return 0

    return _guard(args, go)


#: The states of a ``reflect`` that did not review the turn it was asked to: exit 1, as ``--help`` says.
_NOT_REVIEWED = ("failed", "disabled", "not_sent")


def run_reflect(args: argparse.Namespace) -> int:
    """Run one review; exit 1 when it failed or is disabled, or was not sent (``not_sent``: the message's job
    already ran or is running, and a review is never sent twice), with ``--json`` too."""
    from ..resident.projection import shown_paths  # noqa: PLC0415 lazy: start-up
    from ..resident.reflection import reflect  # noqa: PLC0415 lazy: start-up

    def go() -> int:
        res = reflect(project_root(args), args.session, args.transcript)
        if args.json:
            emit_json(_shown(args, shown_paths(res.to_json())))
        else:
            job = f"job {res.job.id}: " if res.job and res.job.id not in res.message else ""
            print(f"{res.state}: {job}{_shown(args, res.message)}")
            for cid in res.candidates:
                print(f"  proposed candidate {cid} (see `memzoi resident list`)")
        return 1 if res.state in _NOT_REVIEWED else 0

    return _guard(args, go)


def run_jobs(args: argparse.Namespace) -> int:
    """List reflection jobs of this project (newest first)."""
    from ..resident.projection import reconcile_jobs_before_read, work_state  # noqa: PLC0415 lazy: start-up

    def go() -> int:
        reconcile_jobs_before_read()
        rows = [
            j
            for j in work_state(project_root(args))["reflection_jobs"]
            if not args.session or j["session_id"] == args.session
        ]
        if args.json:
            emit_json({"jobs": rows})
            return 0
        for j in rows:
            out = j["outcome"] or {}
            print(
                f"{j['id']}  {j['status']:9} {j['trigger']:17} session {j['session_id']} message "
                f"{j['source_message_id']}"
                + (f"  candidates: {', '.join(out['candidates'])}" if out.get("candidates") else "")
                + (f"\n    {j['error']}" if j["error"] else "")
            )
        if not rows:
            print("no reflection jobs")
        return 0

    return _guard(args, go)


def run_job(args: argparse.Namespace) -> int:
    """Show one job's request and outcome."""
    from ..resident.projection import job_detail, job_text  # noqa: PLC0415 lazy: start-up

    def go() -> int:
        detail = job_detail(args.job_id)
        if args.json:
            emit_json(detail)
        else:
            print(job_text(detail))
        return 0

    return _guard(args, go)


def run_state(args: argparse.Namespace) -> int:
    """Print the WorkStateProjection."""
    from ..resident.projection import reconcile_jobs_before_read, work_state  # noqa: PLC0415 lazy: start-up

    def go() -> int:
        reconcile_jobs_before_read()
        state = work_state(project_root(args))  # its paths shown (projection.shown_paths), never raw
        if args.json:
            emit_json(state)
            return 0
        for f in state["files"]:
            where = f"# {f['scope']}: {f['path']} {f['usage']}"
            print(printable(where + (f" (cannot read: {f['error']})" if f["error"] else "")))
            for e in f["entries"]:
                print(printable(f"  § {e}"))
        for c in state["memory_candidates"]:
            job = f"  (job {c['job']})" if c["job"] else ""
            what = c["content"] or c["locator"]
            print(printable(f"{c['glyph']} {c['id']} {c['status']} {c['scope']} {c['action']}: {what}{job}"))
        for j in state["reflection_jobs"]:
            print(f"reflection {j['id']} {j['status']} ({j['trigger']}) message {j['source_message_id']}")
        return 0

    return _guard(args, go)


def run_remove(args: argparse.Namespace) -> int:
    """Remove one entry in one audited step."""
    from ..resident.decisions import remove_entry  # noqa: PLC0415 lazy: start-up
    from ..resident.projection import shown_paths  # noqa: PLC0415 lazy: start-up

    def go() -> int:
        c = remove_entry(project_root(args), args.scope, args.locator, actor=actor(args), reason=args.reason)
        if args.json:
            emit_json(shown_paths(c.to_json()))
        else:
            print(
                f"candidate {c.id} {c.status} ({c.scope} remove): removed `{c.old_text}`; undo with "
                f"`memzoi resident undo {c.id}`"
            )
        return 0

    return _guard(args, go)
