"""``memzoi session-end``: route explicit structured candidates (Memzoi's lifecycle document, "Explicit
session-end routing"); an extractor it is not: the input is a ``{task, candidates[]}`` file
(:mod:`.session_input`), or a checkpoint made with ``checkpoint add --from-file`` from such a file. Free-text notes
(``--note``) and checkpoints made by session-end itself are not an extraction source (``not_structured``).

Each candidate, deterministically:

* ``repo`` → a pending packet ``.memzoi/proposals/pending/<id>.md`` (never a record), rendered and screened by
  the gate and every detector exactly as :func:`~memzoi.lifecycle.propose.propose_packet` does, with Memzoi's
  origin route ``session_end``;
* ``local`` → a private local record (runtime row, ``source_kind: session_end``);
* ``session`` → a checkpoint (``type: episode``, ``lane: session``; :mod:`.checkpoints`);
* ``discard`` → ``skipped``; ``needs_review`` → ``blocked``; neither writes anything.

All or nothing: if any repo candidate is not repo-safe (classification, or a gate/detector finding on its
packet), or any local/session candidate carries a credential or personal data, **the whole batch writes nothing**
and the result is ``blocked`` with a classification-only report (index, destination, sensitivity, content class,
reason codes: never a title, body or the task). The writes are **one ledgered change** (``session_end``): the
packets are its files and the runtime rows its database effects, visible only while the change is applied. A
failed file write rolls the packets already written back and leaves the change ``failed`` (its rows invisible);
a failed database write records nothing. ``memzoi undo CHANGE`` removes the packets and hides the rows as one.

``--expected-version`` is the checkpoint set version for ``--from-file`` and the source checkpoint's version for
``--from-checkpoint`` (this project's definition; :mod:`.checkpoints`). Operation ids: :mod:`.operations`.
"""

from __future__ import annotations

import json
import os
import sqlite3
from datetime import datetime
from pathlib import Path
from typing import Any

from ..base.clock import utc_now
from ..judge.pathsafety import bears_secret, shown_id
from ..judge.revision import content_hash
from ..ledger import ChangePlan, FileChange, Ledger, Refusal, dry_run, now_utc, run_change
from ..ledger.local_records import VISIBLE as _LOCAL_VISIBLE
from ..ledger.previewed import check_previewed
from ..read.render import render_packet
from . import checkpoints as cps, operations as ops
from .common import PENDING, concept_slug, reserve_packet_id, verified
from .local import CREDENTIAL_CODES, content_codes
from .proposal_checks import base_id
from .propose import Blocked, Draft, check_scannable, check_values, find_duplicate, packet_data, screen
from .session_input import Candidate, SessionEnd, parse_session_end

OPERATION = "session_end"


class BatchBlocked(Refusal):
    """The whole batch is blocked; ``report`` is classification-only (no content)."""

    def __init__(self, report: dict[str, Any]) -> None:
        super().__init__(
            "session_end_blocked",
            "a candidate is not safe for its destination, so the whole "
            "session-end batch wrote nothing; classify or sanitize the candidates named by index (or "
            "route them to needs_review) and retry",
        )
        self.report = report

    def to_json(self) -> dict[str, Any]:
        """``{"error": {...}, **report}``."""
        return {**super().to_json(), **self.report}


def _draft(task: str, c: Candidate) -> Draft:
    reason = "session-end: " + task.splitlines()[0][:200] if task.strip() else "session-end"
    return Draft(
        title=c.title,
        body=c.body,
        type=c.type,
        lane=c.lane,
        reason=reason,
        confidence=c.confidence,
        tags=c.tags,
        applies_to=c.applies_to,
        source_ref=c.source_ref,
    )


def _packet_id(draft: Draft) -> str:
    """The packet id of a repo candidate before it is reserved: ``session-<slug of the title>``, the slug as a
    proposal's (:func:`~memzoi.lifecycle.proposal_checks.base_id`); ``session-memory`` where Memzoi's path scan
    would flag it."""
    base = "session-" + base_id(draft.title).removeprefix("mcp-")
    if shown_id(base) != base or bears_secret(f"{PENDING}/{base}.md"):
        return "session-memory"
    return base


def _packet(
    root: Path, task: str, c: Candidate, actor: str, packet_id: str, now: str
) -> tuple[str, str, dict[str, Any]]:
    draft = _draft(task, c)
    data = packet_data(draft, packet_id, actor=actor, now=now, target=None)
    data["origin"] = {"origin_key": f"session-end:{packet_id}", "route": "session_end"}
    rel = f"{PENDING}/{packet_id}.md"
    return rel, render_packet(data, c.body.strip()), data


def classify(root: Path, doc: SessionEnd, actor: str) -> list[dict[str, Any]]:
    """The classification-only blocked items of ``doc`` (empty when every candidate may go where it is sent):
    non-repo-safe repo candidates (``sensitivity_not_repo_safe`` or the class's gate code), repo packets the gate
    or a detector blocks, and local/session candidates with a credential or personal-data finding."""
    blocked = []
    now = now_utc(precise=False)
    for c in doc.candidates:
        codes: list[str] = []
        if c.destination == "repo":
            if c.sensitivity != "repo-safe":
                codes.append("sensitivity_not_repo_safe")
            if c.content_class not in (None, "general_repo_knowledge"):
                codes.append(
                    c.content_class
                    if c.content_class
                    in ("raw_transcript", "private_personal_data", "temporary_task_state", "local_only_state")
                    else "content_class_not_repo_safe"
                )
            if not codes:
                draft = _draft(doc.task, c)
                try:
                    check_values(draft)
                    rel, text, _ = _packet(root, doc.task, c, actor, _packet_id(draft), now)
                    screen(root, rel, text)
                except Blocked as err:
                    codes.extend(err.codes)
                except Refusal as err:
                    codes.append(err.code)
        elif c.destination in ("local", "session"):
            try:
                check_scannable(f"{c.title}\n{c.body}", f"candidates[{c.index}]")
                codes = content_codes(c.title, c.body, among=CREDENTIAL_CODES)
            except Refusal as err:
                codes = [err.code]
            if c.sensitivity == "secret":
                codes.append("sensitivity_secret")
        if codes:
            blocked.append({**c.classification(), "outcome": "blocked", "reasons": sorted(set(codes))})
    return blocked


def _blocked_report(doc: SessionEnd, blocked: list[dict[str, Any]]) -> dict[str, Any]:
    by_index = {b["index"]: b for b in blocked}
    items = []
    for c in doc.candidates:
        if c.index in by_index:
            items.append(by_index[c.index])
        elif c.destination == "discard":
            items.append({**c.classification(), "outcome": "skipped"})
        elif c.destination == "needs_review":
            items.append({**c.classification(), "outcome": "blocked", "reasons": ["needs_review"]})
        else:
            items.append({**c.classification(), "outcome": "not_written", "reasons": ["batch_blocked"]})
    return {"status": "blocked", "written": False, "candidates": items}


def _fresh_local_id(conn: sqlite3.Connection, base: str, taken: set[str]) -> str:
    taken |= {r[0] for r in conn.execute(_LOCAL_VISIBLE.replace("SELECT l.*", "SELECT l.id"))}
    n = 1
    while (cand := base if n == 1 else f"{base}-{n}") in taken:
        n += 1
    taken.add(cand)
    return cand


def _local_insert(conn: sqlite3.Connection, change_id: str, c: Candidate, rid: str) -> None:
    conn.execute(
        "INSERT INTO local_record (id, change_id, type, lane, title, body, tags_json, applies_to_json, sensitivity,"
        " content_class, source_kind, source_ref, proposal_id, created_at) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
        (
            rid,
            change_id,
            c.type,
            c.lane,
            c.title.strip(),
            c.body.strip(),
            json.dumps(c.tags),
            json.dumps(c.applies_to),
            c.sensitivity,
            c.content_class or "unknown",
            "session_end",
            c.source_ref,
            None,
            now_utc(),
        ),
    )


def _refuse_duplicates(root: Path, doc: SessionEnd) -> None:
    seen: dict[str, int] = {}
    for c in doc.candidates:
        if c.destination != "repo":
            continue
        key = content_hash(c.body.strip())
        if key in seen:
            raise Refusal(
                "duplicate_content",
                f"candidates[{c.index}] has the same body as candidates[{seen[key]}]; nothing was written",
            )
        seen[key] = c.index
        existing = find_duplicate(root, c.body.strip())
        if existing:
            raise Refusal(
                "duplicate_content", f"candidates[{c.index}] has the same body as `{existing}`; nothing was written"
            )


def _plan(root: Path, doc: SessionEnd, ctx: dict[str, Any]) -> ChangePlan:
    now = now_utc(precise=False)
    files: list[FileChange] = []
    results: list[dict[str, Any]] = []
    repo: dict[int, str] = {}
    reserved: set[str] = set()
    for c in doc.candidates:
        if c.destination != "repo":
            continue
        base = _packet_id(_draft(doc.task, c))
        pid = reserve_packet_id(root, base)
        n = 2
        while pid in reserved:
            pid = reserve_packet_id(root, f"{base}-{n}")
            n += 1
        reserved.add(pid)
        rel, text, data = _packet(root, doc.task, c, ctx["actor"], pid, now)
        files.append(FileChange(rel, None, verified(root, rel, text, data, c.body.strip())))
        repo[c.index] = pid
    at: datetime = ctx["now"]

    def effects(conn: sqlite3.Connection, change_id: str) -> None:
        taken: set[str] = set()
        version = cps.set_version(conn)
        for c in doc.candidates:
            item: dict[str, Any] = {"index": c.index, "destination": c.destination}
            if c.destination == "repo":
                item |= {"outcome": "created", "proposal_id": repo[c.index], "path": f"{PENDING}/{repo[c.index]}.md"}
            elif c.destination == "local":
                rid = _fresh_local_id(conn, concept_slug(c.title) or "local-memory", taken)
                _local_insert(conn, change_id, c, rid)
                item |= {"outcome": "created", "local_record": rid}
            elif c.destination == "session":
                values = cps.new_values(doc.task, c.title, c.body, "session_end", at, salt=f"{version}:{c.index}")
                cps.insert(conn, change_id, values)
                item |= {"outcome": "created", "checkpoint_id": values["id"]}
            elif c.destination == "discard":
                item |= {"outcome": "skipped"}
            else:
                item |= {"outcome": "blocked", "reasons": ["needs_review"]}
            results.append(item)
        out = {
            "operation": OPERATION,
            "operation_id": ctx["operation_id"],
            "replayed": False,
            "status": "routed",
            "written": True,
            "change_id": change_id,
            "candidates": results,
        }
        ops.record(conn, ctx["operation_id"], OPERATION, ctx["fp"], out, change_id)
        ctx["outcome"] = out

    return ChangePlan(
        OPERATION,
        files,
        reason="session-end routing",
        summary=f"session-end: {len(files)} packet(s), {len(doc.candidates)} candidate(s)",
        details={"proposal_ids": list(repo.values()), "candidates": len(doc.candidates)},
        db_effects=effects,
    )


def plan_session_end(root: Path, doc: SessionEnd, ctx: dict[str, Any]) -> ChangePlan:
    """The change routing ``doc`` makes, as the apply runs it and the editor's preview fingerprints it
    (:mod:`memzoi.ledger.previewed`): the packets it creates, ``reads`` from ``ctx`` (``{input file's
    project-relative path: its bytes}``) and the checkpoint set version (``decides``). ``ctx``: ``actor``, ``now``,
    ``operation_id``, ``fp``, ``reads``?. Raises :class:`BatchBlocked`, :class:`Refusal` (duplicates)."""
    blocked = classify(root, doc, ctx["actor"])
    if blocked:
        raise BatchBlocked(_blocked_report(doc, blocked))
    _refuse_duplicates(root, doc)
    plan = _plan(root, doc, ctx)
    plan.reads.update(ctx.get("reads", {}))
    plan.decides["checkpoint set version"] = str(cps.current_version(root))
    return plan


def _source(conn: sqlite3.Connection, checkpoint_id: str) -> tuple[SessionEnd, int]:
    cp = cps.visible(conn, checkpoint_id)
    if cp is None:
        raise Refusal("checkpoint_not_found", f"no checkpoint `{checkpoint_id}`; see `memzoi checkpoint list`")
    if cp.source_kind != "file":
        raise Refusal(
            "not_structured",
            f"checkpoint `{checkpoint_id}` holds a free-text note; session-end reads "
            "only a checkpoint made with `checkpoint add --from-file` from a `{task, candidates}` file "
            "(free-text notes are not an extraction source)",
        )
    try:
        return parse_session_end(cp.body, f"checkpoint {checkpoint_id}"), cp.version
    except Refusal as err:
        raise Refusal(
            "not_structured",
            f"checkpoint `{checkpoint_id}` does not hold a structured "
            f"`{{task, candidates}}` document ({err.message.split('; nothing')[0]})",
        ) from None


def session_end(
    project_root: str | os.PathLike[str],
    *,
    text: str | None = None,
    where: str = "input",
    checkpoint_id: str | None = None,
    operation_id: str | None = None,
    expected_version: int | None = None,
    actor: str,
    source: str = "cli",
    now: datetime | None = None,
    input_path: str | None = None,
    previewed: str | None = None,
) -> dict[str, Any]:
    """Route the input ``text`` (named ``where``, at ``input_path`` in the project) or checkpoint ``checkpoint_id``
    (module docstring); ``previewed``: refused (``preview_stale``) if the preview's plan changed since. Returns
    ``{"operation", "operation_id", "replayed", "status": "routed", "written", "change_id", "candidates":
    [{"index", "destination", "outcome": created|skipped|blocked, …ids}]}`` (``change_id`` ``None`` when nothing
    was to be written). Raises :class:`BatchBlocked` (classification-only report), or :class:`Refusal`
    (``invalid_session_end``, ``not_structured``, ``checkpoint_not_found``, ``duplicate_content``,
    ``version_conflict``, ``operation_id_conflict``, ledger and write codes) with nothing written."""
    if (text is None) == (checkpoint_id is None):
        raise ValueError("give exactly one of text and checkpoint_id")
    ops.check_operation_id(operation_id)
    root = Path(project_root).resolve()
    at = now or utc_now()
    inputs = {"text": text, "checkpoint_id": checkpoint_id, "expected_version": expected_version}
    fp = ops.fingerprint(OPERATION, inputs)
    ctx: dict[str, Any] = {"actor": actor, "operation_id": operation_id, "fp": fp, "now": at}
    if input_path is not None and text is not None:
        ctx["reads"] = {input_path: text.encode("utf-8", "surrogatepass")}
    ledger = Ledger.for_project(root)

    def load(conn: sqlite3.Connection) -> SessionEnd:
        replay = ops.recorded(conn, operation_id, OPERATION, fp)
        if replay is not None:
            raise ops.Replay(replay)
        if checkpoint_id is not None:
            doc, version = _source(conn, checkpoint_id)
            ops.check_version(expected_version, version, f"checkpoint `{checkpoint_id}`")
        else:
            doc = parse_session_end(text or "", where)
            ops.check_version(expected_version, cps.set_version(conn), "the checkpoint set")
        return doc

    def build(r: Path) -> ChangePlan:
        with Ledger.for_project(r).connect() as conn:
            doc = load(conn)
        return plan_session_end(r, doc, ctx)

    try:
        with ledger.connect() as conn:  # an early answer (replay, invalid input, blocked) before the lock
            doc = load(conn)
        blocked = classify(root, doc, actor)
        if blocked:
            raise BatchBlocked(_blocked_report(doc, blocked))
        if not any(c.destination in ("repo", "local", "session") for c in doc.candidates):
            if previewed is not None:  # nothing to write, but what the preview showed must still hold
                check_previewed(dry_run(root, build), previewed)
            return _no_write(ledger, doc, ctx)
        run_change(root, build, actor=actor, source=source, previewed=previewed)
    except ops.Replay as replay:
        return replay.outcome
    outcome: dict[str, Any] = ctx["outcome"]
    return outcome


def _no_write(ledger: Ledger, doc: SessionEnd, ctx: dict[str, Any]) -> dict[str, Any]:
    """Only discard and needs_review candidates: nothing to write, no change; the outcome is still recorded."""
    skip, held = {"outcome": "skipped"}, {"outcome": "blocked", "reasons": ["needs_review"]}
    items = [
        {"index": c.index, "destination": c.destination, **(skip if c.destination == "discard" else held)}
        for c in doc.candidates
    ]
    out = {
        "operation": OPERATION,
        "operation_id": ctx["operation_id"],
        "replayed": False,
        "status": "routed",
        "written": False,
        "change_id": None,
        "candidates": items,
    }
    with ledger.connect() as conn, ledger.transaction(conn):
        replay = ops.recorded(conn, ctx["operation_id"], OPERATION, ctx["fp"])
        if replay is not None:
            return replay
        ops.record(conn, ctx["operation_id"], OPERATION, ctx["fp"], out)
    return out
