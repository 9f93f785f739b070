"""Materialization commands (``workspace/executeCommand``): plan, decide and apply one materialization from the
candidate / plan / decision artifacts beside each other (:mod:`memzoi.lifecycle.artifacts`), as the code actions
on those JSON files offer them. Plan and decide write the next artifact beside the candidate and show it; apply
is one ledgered change of the core (:func:`memzoi.lifecycle.materialize.materialize_apply`) that writes the
decided record with its attestation.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from .commandids import MATERIALIZE, MATERIALIZE_DECIDE, MATERIALIZE_PLAN
from .commanding import (
    CommandError,
    CommandGroup,
    command,
    previewed_of,
    refuse_if_dirty,
    run_change,
    show_document,
)
from .documents import uri_to_path

# A real import (not TYPE_CHECKING): pygls resolves command handlers' annotations at call time.
from .session import CommandSession


def _artifact_path(ls: CommandSession, arg: dict[str, Any]) -> Path:
    uri = arg.get("uri")
    path = uri_to_path(uri) if isinstance(uri, str) else None
    if path is None:
        raise CommandError("invalid_arguments", "this command needs the artifact's `uri`")
    refuse_if_dirty(ls, path)
    return path


def _wrote(ls: CommandSession, path: Path, operation: str, verb: str) -> str:
    """Tell the client about an artifact the server wrote (``memzoi/changed``); returns the one-line message."""
    from . import changes  # noqa: PLC0415 lazy: start-up

    message = f"{verb} -> {path.name}"
    changes.after_write(ls, [path], change_id=None, operation=operation, message=message)
    return message


@command(MATERIALIZE_PLAN)
async def materialize_plan(ls: CommandSession, arg: dict[str, Any]) -> dict[str, Any]:
    """Derive the plan of the candidate (``uri``) and write it beside it as ``X.plan.json``."""
    from memzoi.lifecycle.artifacts import artifact_set, write_artifact  # noqa: PLC0415 lazy: start-up
    from memzoi.lifecycle.materialize import derive_plan, load_artifact  # noqa: PLC0415 lazy: start-up
    from memzoi.lifecycle.materialize_candidate import validate_candidate  # noqa: PLC0415 lazy: start-up

    files = artifact_set(_artifact_path(ls, arg))
    candidate = load_artifact(files["candidate"])
    validate_candidate(candidate)
    plan = derive_plan(candidate)
    write_artifact(files["plan"], plan, same_ok=True)
    message = _wrote(ls, files["plan"], "materialize_plan", "Planned the materialization")
    await show_document(ls, files["plan"])
    return {
        "message": message,
        "detail": f"plan {plan['plan_id']}",
        "plan_id": plan["plan_id"],
        "path": str(files["plan"]),
    }


@command(MATERIALIZE_DECIDE)
async def materialize_decide(ls: CommandSession, arg: dict[str, Any]) -> dict[str, Any]:
    """Record the explicit decision (now) to write the plan beside the candidate, as ``X.decision.json``."""
    from memzoi.lifecycle.artifacts import artifact_set, write_artifact  # noqa: PLC0415 lazy: start-up
    from memzoi.lifecycle.materialize import (  # noqa: PLC0415 lazy: start-up
        decision_now,
        derive_decision,
        derive_plan,
        load_artifact,
    )
    from memzoi.lifecycle.materialize_candidate import validate_candidate  # noqa: PLC0415 lazy: start-up

    files = artifact_set(_artifact_path(ls, arg))
    candidate = load_artifact(files["candidate"])
    validate_candidate(candidate)
    plan = load_artifact(files["plan"])
    if plan != derive_plan(candidate):
        raise CommandError("materialization_candidate_plan_mismatch", "the plan was not derived from this candidate")
    decision = derive_decision(plan, decision_now())
    write_artifact(files["decision"], decision, same_ok=True)
    message = _wrote(ls, files["decision"], "materialize_decide", "Decided to write the plan")
    await show_document(ls, files["decision"])
    return {
        "message": message,
        "detail": f"decision {decision['decision_id']}",
        "decision_id": decision["decision_id"],
        "path": str(files["decision"]),
    }


@command(MATERIALIZE)
async def materialize(ls: CommandSession, arg: dict[str, Any]) -> dict[str, Any]:
    """Write the decided record with its attestation (one ledgered change) and open it; refused when the record
    changed since the preview ``previewed`` (when given) was shown."""
    from memzoi.judge.workspace import find_project_root  # noqa: PLC0415 lazy: start-up
    from memzoi.lifecycle import default_actor  # noqa: PLC0415 lazy: start-up
    from memzoi.lifecycle.artifacts import artifact_set  # noqa: PLC0415 lazy: start-up
    from memzoi.lifecycle.materialize import load_artifact, materialize_apply  # noqa: PLC0415 lazy: start-up

    path = _artifact_path(ls, arg)
    files = artifact_set(path)
    candidate, plan, decision = (load_artifact(files[k]) for k in ("candidate", "plan", "decision"))
    root = sorted(ls.projects)[0] if len(ls.projects) == 1 else find_project_root(path)
    actor = arg.get("actor") or default_actor()
    previewed = previewed_of(arg)
    return await run_change(
        ls,
        root,
        lambda: materialize_apply(root, candidate, plan, decision, actor=actor, source="editor", previewed=previewed),
        show_created=True,
    )


HANDLERS = [materialize_plan, materialize_decide, materialize]


#: The materialization commands, a feature the server composes (:class:`.commanding.CommandGroup`).
FEATURE = CommandGroup.of("materialization", HANDLERS)
