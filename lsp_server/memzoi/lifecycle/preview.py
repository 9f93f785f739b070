"""Preview of a lifecycle change: the planned before/after text of every file, computed by the same ``plan_*``
function the change itself runs (:func:`~memzoi.ledger.dry_run`: under the lock, nothing recorded or written).

Editors show it as a diff before the user applies, supersedes, tombstones, materializes or re-attests. A
re-attestation's diff is the hand edit it accepts: from the attested revision's text (the ledger's last write of
the record, else the committed version carrying an attestation) to the file the re-attestation writes.
"""

from __future__ import annotations

import functools
import os
from pathlib import Path
from typing import Any

from ..judge import analysis
from ..ledger import ChangePlan, FileChange, Purged, Refusal, dry_run, get_change, history, preview_fingerprint
from ..safety.redact import scrub
from .apply import plan_apply
from .supersede import plan_packet

#: Operations that can be previewed. Not reject: a rejected packet may hold a secret (it becomes a receipt), and a
#: preview would show that text.
OPERATIONS = ("apply", "supersede", "tombstone", "materialize", "reattest")


#: What a diff shows for bytes the ledger did not keep (:class:`~memzoi.ledger.model.Purged`).
PURGED_TEXT = (
    "[not kept: the ledger holds only a digest of these bytes (they held a secret, or the change purged them)]"
)


def _text(data: bytes | None | Purged) -> str | None:
    # Shown outside the file (a diff editor): a detected secret is never shown.
    if isinstance(data, Purged):
        return PURGED_TEXT
    return None if data is None else scrub(data.decode("utf-8", errors="replace"))


def file_texts(f: FileChange) -> dict[str, Any]:
    """``{"path", "before", "after", "change"}`` of one file of a change: ``before``/``after`` are its text (``null``
    when absent; detected secrets redacted) and ``change`` the word of :attr:`FileChange.change` (``created``,
    ``deleted``, ``modified``, ``unchanged``), computed from the bytes, so editors word a file as the CLI does."""
    return {"path": f.path, "before": _text(f.before), "after": _text(f.after), "change": f.change}


def plan_to_json(plan: ChangePlan) -> dict[str, Any]:
    """``{"operation", "summary", "reason", "files": [{"path", "before", "after", "change"}]}`` (each file as
    :func:`file_texts`), paths ``/``-separated relative to the project root."""
    return {
        "operation": plan.operation,
        "summary": plan.summary,
        "reason": plan.reason,
        "files": [file_texts(f) for f in plan.files],
    }


def preview(
    project_root: str | os.PathLike[str],
    operation: str,
    target: str | os.PathLike[str] | None = None,
    *,
    actor: str,
    reason: str | None = None,
    title: str | None = None,
    body: str | None = None,
    artifacts: tuple[dict[str, Any], dict[str, Any], dict[str, Any]] | None = None,
) -> dict[str, Any]:
    """The planned files of ``operation`` without writing (see :func:`plan_to_json` for the shape).

    ``target`` is the pending packet (apply) or the record (supersede, tombstone), as a path or id;
    ``artifacts`` the (candidate, plan, decision) of a materialization. ``previewed`` in the answer is the
    fingerprint of every file the plan reads or writes (:mod:`memzoi.ledger.previewed`): sent back with the change,
    it refuses the change when any of them changed meanwhile. Raises :class:`Refusal` exactly when the
    change would be refused (``reason_required`` for a missing reason, the can-apply blockers, …)."""
    from .materialize import plan_materialize  # noqa: PLC0415 lazy: start-up
    from .reattest import plan_reattest  # noqa: PLC0415 lazy: start-up

    if operation == "apply":
        build = lambda root: plan_apply(root, str(target), actor)  # noqa: E731
    elif operation in ("supersede", "tombstone"):
        build = functools.partial(
            plan_packet, record=str(target), action=operation, title=title, body=body, reason=reason or "", actor=actor
        )
    elif operation == "materialize" and artifacts is not None:
        build = lambda root: plan_materialize(root, *artifacts)  # noqa: E731
    elif operation == "reattest":
        build = lambda root: plan_reattest(root, str(target), reason=reason)  # noqa: E731
    else:
        raise Refusal("invalid_arguments", f"cannot preview `{operation}`; one of: {', '.join(OPERATIONS)}")
    plan = dry_run(Path(project_root), build)
    out = plan_to_json(plan)
    out["previewed"] = preview_fingerprint(plan)
    if operation == "reattest":
        for f in out["files"]:
            attested = attested_text(Path(project_root), f["path"])
            f["before"] = _text(attested.encode()) if attested is not None else f["before"]
        out["summary"] += "; the diff shows the hand edit since the attested revision"
    if target is not None:
        out["target"] = target_facts(Path(project_root), Path(target))
    return out


def target_facts(project_root: Path, target: Path) -> dict[str, Any]:
    """``{"path", "title"}`` of the file a change acts on, for a confirmation that names it (issue 28): its path
    relative to the project root and its frontmatter ``title`` (``null`` when it has none, or when a detector fires
    on it: a title is shown outside the file)."""
    path = target if target.is_absolute() else project_root / target
    try:
        rel = path.resolve().relative_to(project_root.resolve()).as_posix()
    except (OSError, ValueError):
        rel = target.as_posix()
    title = None
    try:
        data = analysis.analyze_path(path).document.data or {}
        raw = data.get("title") if isinstance(data, dict) else None
        title = raw if isinstance(raw, str) and scrub(raw) == raw else None
    except OSError:
        pass
    return {"path": rel, "title": title}


def attested_text(project_root: Path, rel: str) -> str | None:
    """The text of the last attested revision of the record ``rel`` (project-relative): the bytes the ledger's
    last applied change wrote to it, else its committed (``HEAD``) version when that carries an attestation
    (``materialization:``); ``None`` when neither is known."""
    from ..project.gitfacts import committed_text  # noqa: PLC0415 lazy: start-up

    for change in history(project_root, rel, limit=20):
        if change.status != "applied":
            continue
        for f in change.files:
            if f.path == rel and isinstance(f.after, bytes):
                return f.after.decode("utf-8", errors="replace")
    text = committed_text(project_root / rel)
    return text if text is not None and "\nmaterialization:" in text else None


def change_texts(project_root: str | os.PathLike[str], change_id: str) -> dict[str, Any]:
    """The before/after text of every file of the ledgered change ``change_id`` (for a history's *Open Diff*):
    ``{"change_id", "operation", "status", "files": [{"path", "before", "after", "change"}]}`` (:func:`file_texts`).
    Raises :class:`Refusal` (``change_not_found``)."""
    change = get_change(project_root, change_id)
    if change is None:
        raise Refusal("change_not_found", f"no change {change_id} in the ledger; see `memzoi history`")
    return {
        "change_id": change.id,
        "operation": change.operation,
        "status": change.status,
        "files": [file_texts(f) for f in change.files],
    }
