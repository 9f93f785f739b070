"""Resident memory as the editor shows it (shared by the features, a feature itself of none): which file is a
resident file (:func:`file_of`), its findings, hover, code lens and code actions, and the plumbing of a resident
decision (:func:`where`, :func:`decide`, :func:`run`). The ``resident`` and ``resident_state`` features run the
commands; diagnostics, hover, lenses and code actions show the files; none imports another
(``tests/test_architecture.py``). Protocol glue only: every decision comes from :mod:`memzoi.resident`.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from lsprotocol import types

from memzoi.base.findings import Finding

from .commanding import CommandError, refuse_if_dirty
from .convert import TextMap
from .documents import Snapshot, uri_to_path

if TYPE_CHECKING:
    from memzoi.resident.candidates import Candidate
    from memzoi.resident.scope import ResidentFile

    from .session import CommandSession, ReadSession

log = logging.getLogger("memzoi_lsp.resident")

APPROVE = "memzoi.resident.approve"
REJECT = "memzoi.resident.reject"
UNDO = "memzoi.resident.undo"
RECOVER = "memzoi.resident.recover"
REVIEW = "memzoi.resident.review"
LIST = "memzoi.resident.list"
STATUS = "memzoi.residentStatus"


def file_of(ls: ReadSession, path: Path | None) -> tuple[Path, ResidentFile] | None:
    """``(project root, resident file)`` when ``path`` is a resident file of a workspace project or of the
    project found from the file itself."""
    if path is None or path.suffix != ".md":
        return None
    from memzoi.resident.scope import which_file  # noqa: PLC0415 lazy: start-up - resident memory is loaded with the first Markdown file diagnosed

    return which_file(path, sorted(ls.projects))


def _history(root: Path, file: ResidentFile) -> list[Candidate]:
    from memzoi.resident.views import candidates_for  # noqa: PLC0415 lazy: start-up

    return candidates_for(root, files=[file])


def findings_for(ls: ReadSession, snap: Snapshot, where: tuple[Path, ResidentFile]) -> list[Finding]:
    """The resident findings of ``snap`` (its text: unsaved edits included), graded by the project's ``[rules]``
    under the editor settings (:func:`memzoi.resident.editor.graded`)."""
    from memzoi.resident import editor  # noqa: PLC0415 lazy: start-up

    root, file = where
    project = ls.projects.get(root)
    rules = ls.context(project).rules if project is not None else None  # with the editor settings, as elsewhere
    return editor.graded(editor.buffer_findings(snap.text, file, _history(root, file)), root, rules)


def hover(ls: ReadSession, snap: Snapshot, where: tuple[Path, ResidentFile], offset: int) -> types.Hover | None:
    """Who put the entry under the cursor there (candidate, source, approver, time, reason, confidence), or
    that it was edited by hand."""
    from memzoi.resident import editor  # noqa: PLC0415 lazy: start-up

    from .markup import code, esc  # noqa: PLC0415 lazy: start-up

    root, file = where
    facts = editor.entry_at(snap.text, offset, _history(root, file))
    cap_line = esc(editor.cap_status(snap.text, file)[3])
    if facts is None:
        return types.Hover(
            contents=types.MarkupContent(kind=types.MarkupKind.Markdown, value=f"**Resident memory**: {cap_line}")
        )
    c = facts.candidate
    title = f"**Resident memory** ({esc(file.scope)}), entry {facts.span.index + 1}\n\n{cap_line}"
    if c is None:
        body = ["Edited by hand: no reviewed candidate wrote this entry."]
    else:
        body = [
            f"Candidate {code(c.id)} ({esc(c.action)}, {esc(c.status)})",
            f"Proposed by {esc(c.actor)} ({esc(c.source)}) on {esc(_when(c.time_created))}"
            + (f", session {code(c.source_session_id)}" if c.source_session_id else ""),
            f"Approved by {esc(c.decided_by or '?')} on {esc(_when(c.time_applied))}",
            f"Reason: {esc(c.reason)}",
            f"Confidence: {c.confidence / 100:g}%",
        ]
    tm = TextMap(snap.text, ls.workspace.position_encoding)
    value = "\n\n".join([title, *body])
    return types.Hover(
        contents=types.MarkupContent(kind=types.MarkupKind.Markdown, value=value),
        range=tm.range(facts.span.start, facts.span.end),
    )


def _when(ms: int | None) -> str:
    if not ms:
        return "?"
    return datetime.fromtimestamp(ms / 1000, UTC).strftime("%Y-%m-%d %H:%M UTC")


_LENS_VERBS = {"pending": "Review", "uncertain": "Recover…"}


def code_lenses(snap: Snapshot, where: tuple[Path, ResidentFile]) -> list[types.CodeLens]:
    """On the first line: the cap usage (:func:`memzoi.resident.editor.cap_status`), ``N pending candidates:
    Review`` (only ``pending`` ones), and ``N uncertain
    candidates: Recover…`` when a crash left some unclassified; each opens those candidates through
    ``memzoi.resident.review`` with their status (the recoveries are code actions on the file)."""
    from memzoi.resident import editor  # noqa: PLC0415 lazy: start-up

    top = types.Range(start=types.Position(line=0, character=0), end=types.Position(line=0, character=0))
    out = []
    # Informational lens (an empty command id renders as plain text): the cap usage of the buffer's text.
    out.append(
        types.CodeLens(range=top, command=types.Command(title=editor.cap_status(snap.text, where[1])[3], command=""))
    )
    for status, cands in editor.lens_groups(_history(*where)):
        noun = "candidate" if len(cands) == 1 else "candidates"
        title = f"{len(cands)} {status} {noun}: {_LENS_VERBS[status]}"
        out.append(
            types.CodeLens(
                range=top,
                command=types.Command(title=title, command=REVIEW, arguments=[{"uri": snap.uri, "status": status}]),
            )
        )
    return out


def code_actions(ls: ReadSession, snap: Snapshot, where: tuple[Path, ResidentFile]) -> list[types.CodeAction]:
    """For each pending (or failed) candidate: Review (first; the client runs its preview-then-write flow,
    ``memzoi.reviewCandidate``), Approve and Reject; Undo of the last applied one while the file still holds what
    it wrote, and the three recoveries of each uncertain candidate."""
    from memzoi.resident import editor  # noqa: PLC0415 lazy: start-up
    from memzoi.resident.locator import preview  # noqa: PLC0415 lazy: start-up

    from .codeactions import (  # noqa: PLC0415 lazy: start-up
        APPLY_KIND,
        RECOVER_KIND,
        REJECT_KIND,
        REVIEW_CANDIDATE,
        REVIEW_KIND,
        UNDO_KIND,
        action as _action,
        is_dirty,
    )

    history = _history(*where)
    dirty = "save the file first: resident changes act on the file on disk" if is_dirty(ls, snap) else None
    out: list[types.CodeAction | None] = []
    for c in editor.pending(history):
        what = f"{c.action} “{preview(c.content or c.old_text or '')}”"
        args = {"uri": snap.uri, "candidate_id": c.id}
        out.append(
            _action(
                ls,
                f"Review candidate {c.id[:12]}: {what}…",
                REVIEW_KIND,
                REVIEW_CANDIDATE,
                {"uri": snap.uri, "candidateId": c.id},
                dirty,
                preferred=not out,
            )
        )
        out.append(_action(ls, f"Approve candidate {c.id[:12]}: {what}", APPLY_KIND, APPROVE, args, dirty))
        out.append(_action(ls, f"Reject candidate {c.id[:12]}…", REJECT_KIND, REJECT, args, None))
    last = editor.undoable(history, editor.buffer_entries(snap.text))
    if last is not None:
        title = f"Undo candidate {last.id[:12]} ({last.action})"
        out.append(_action(ls, title, UNDO_KIND, UNDO, {"uri": snap.uri, "candidate_id": last.id}, dirty))
    for c in history:
        if c.status != "uncertain":
            continue
        for mode, label in _RECOVERIES:
            args = {"uri": snap.uri, "candidate_id": c.id, "mode": mode}
            out.append(_action(ls, f"Recover candidate {c.id[:12]}: {label}", RECOVER_KIND, RECOVER, args, dirty))
    return [a for a in out if a is not None]


#: The recoveries of an uncertain candidate (:func:`memzoi.resident.service.recover`) and their titles.
_RECOVERIES = (
    ("restore-before", "restore the entries from before"),
    ("complete-after", "complete the change"),
    ("accept", "accept the file as it is"),
)


# --- commands --------------------------------------------------------------------------------------------------


def where(ls: CommandSession, arg: dict[str, Any]) -> tuple[Path, ResidentFile | None]:
    uri = arg.get("uri")
    if isinstance(uri, str) and uri:
        found = file_of(ls, uri_to_path(uri))
        if found is None:
            raise CommandError("not_resident", f"{uri}: not a resident memory file of this workspace")
        return found
    if not ls.projects:
        raise CommandError("not_in_project", "no project in this workspace; open a resident file or a project")
    return sorted(ls.projects)[0], None


def candidate_id(arg: dict[str, Any]) -> str:
    cid = arg.get("candidate_id") or arg.get("candidateId")  # the review flow passes the preview's arguments
    if not isinstance(cid, str) or not cid.strip():
        raise CommandError("invalid_arguments", "this command needs the `candidate_id`")
    return cid.strip()


#: The ``memzoi/changed`` operation of a resident decision, by the candidate's status after it.
_OPERATIONS = {
    "applied": "resident_approve",
    "rejected": "resident_reject",
    "undone": "resident_undo",
    "failed": "resident_approve",
}


async def run(
    ls: CommandSession, root: Path, file: ResidentFile | None, call: Callable[[], Candidate]
) -> dict[str, Any]:
    """Run a core write off the event loop, then re-read the resident file, re-diagnose it and notify the client
    (:func:`.changes.after_write`); the result is the candidate with its one-line ``message`` and ``detail``."""
    from memzoi.lifecycle.messages import resident_message  # noqa: PLC0415 lazy: start-up
    from memzoi.resident.format import char_count  # noqa: PLC0415 lazy: start-up
    from memzoi.resident.locator import preview  # noqa: PLC0415 lazy: start-up

    from . import changes  # noqa: PLC0415 lazy: start-up

    cand = await asyncio.get_running_loop().run_in_executor(None, call)
    entries = cand.after if cand.status == "applied" else cand.before if cand.status == "undone" else None
    message, detail = resident_message(
        cand.action,
        cand.status,
        cand.scope,
        preview(cand.content or cand.old_text or ""),
        cand.id,
        char_count(entries) if entries is not None else None,
        file.cap if file is not None else None,
    )
    if cand.action == "recover" and cand.error:  # where the bytes the recovery replaced are kept
        detail = f"{detail}; {cand.error}"
    target = file.path if file is not None else Path(cand.target_path)
    operation = "resident_recover" if cand.action == "recover" else _OPERATIONS.get(cand.status, "resident_approve")
    changes.after_write(ls, [target], change_id=None, operation=operation, message=message, inbox=True)
    return {"message": message, "detail": detail, **cand.to_json()}


async def decide(
    ls: CommandSession,
    arg: dict[str, Any],
    decision: str,
    call: Callable[[Path, str, str], Candidate],
    *,
    on_disk: bool = True,
) -> dict[str, Any]:
    """Run ``call(root, candidate_id, actor)``, the ``decision`` (``approve``, ``edit``, ``reject``, ``undo``,
    ``recover``) on the candidate named in ``arg``. The candidate's state is checked first (the core's rule:
    :func:`memzoi.resident.service.refuse_undecided_elsewhere`), then a write that changes the file (``on_disk``)
    is refused while the resident file has unsaved changes: a candidate decided elsewhere is named as such."""
    from memzoi.lifecycle import default_actor  # noqa: PLC0415 lazy: start-up
    from memzoi.resident.service import refuse_undecided_elsewhere  # noqa: PLC0415 lazy: start-up

    root, file = where(ls, arg)
    cid, who = candidate_id(arg), arg.get("actor") or default_actor()
    if on_disk and file is not None:
        refuse_undecided_elsewhere(root, cid, decision)  # a core Refusal, answered as every refusal is
        refuse_dirty(ls, file)
    return await run(ls, root, file, lambda: call(root, cid, who))


def refuse_dirty(ls: CommandSession, file: ResidentFile) -> None:
    refuse_if_dirty(ls, file.path)
