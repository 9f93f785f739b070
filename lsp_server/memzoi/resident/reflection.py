"""Zuno's reflection: a configured small model reviews one delivered turn and may propose resident-memory changes
through the one whitelisted tool (reference ``zuno-memory.md`` §6; Zuno ``ProviderReflectionRunner``,
``zuno-cli/src/cmd/turn.rs`` @227e5fb, ``zuno-agent/src/reflection.rs``).

:func:`record_turn` counts a delivered message (:func:`.jobs.admit`) and says whether a review is due;
:func:`reflect` runs one review. Durable steps, each reported to the ledger's fault hook for the crash tests:

1. ``reflect:admitted`` — the message is admitted at most once; a due review creates a leased ``running`` job;
2. ``reflect:leased`` — this process owns the job (a job whose request was recorded is never taken again);
3. ``reflect:request`` — ``memory.reflection.request`` is persisted: the exact body sent and its digest, the
   prompt and its digest, the owned transcript, the resident snapshot, the model, compaction ``disabled`` and the
   tool schema;
4. ``reflect:response`` — the answer was read (streamed or not);
5. ``reflect:proposed`` — after each proposal (``service.propose`` with source ``reflection``: the same
   validation, threat scan, promotion and audit as any candidate);
6. ``reflect:settled`` — ``memory.reflection.outcome`` and the job's terminal status, in one transaction.

Any failure after the request (unreachable endpoint, timeout, truncated stream, malformed tool JSON, a denied tool
name, a refused proposal) settles the job ``failed`` with an outcome naming it. A process that dies leaves the
job ``running``; once its lease expires, :func:`.jobs.reconcile_expired` makes it ``uncertain``. Nothing is ever
re-sent. There is no fallback model: without ``small_model`` and ``endpoint`` reflection reports itself disabled.
"""

from __future__ import annotations

import os
import sqlite3
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..ledger import Refusal
from ..ledger.store import _step as step
from . import candidates as db, jobs
from .provider import Completion, ProviderError, complete
from .reflection_config import ReflectionSettings, reflection_settings
from .reflection_review import ReviewProposal, proposals_of, review_request
from .transcript import Transcript, negative_learning, read_transcript, recovered


@dataclass
class ReflectionResult:
    """What a review did: ``state`` (``completed``, ``failed``, ``disabled``, ``not_counted``, ``not_due``,
    ``negative_learning``, ``not_sent``), the admission, the job, the candidates it proposed and a ``message``."""

    state: str
    message: str
    admission: jobs.Admission | None = None
    job: jobs.Job | None = None
    candidates: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        """``{"state", "message", "admission", "job", "candidates"}``."""
        return {
            "state": self.state,
            "message": self.message,
            "admission": self.admission.to_json() if self.admission else None,
            "job": self.job.to_json() if self.job else None,
            "candidates": self.candidates,
        }


def record_turn(
    session_id: str,
    message_id: str,
    *,
    interrupted: bool = False,
    negative: bool = False,
    recovered_: bool = False,
    settings: ReflectionSettings | None = None,
    owner: str | None = None,
    now: int | None = None,
    project_root: str | Path | None = None,
) -> jobs.Admission:
    """Count one delivered assistant message of ``session_id`` (at most once, durable across restarts) and start
    its review job when one is due: every ``nudge_interval`` counted messages, or at once after a verified
    recovery; an interrupted turn is not counted; a negative-learning turn is counted but never reviewed. With
    reflection disabled the message is counted and no job starts. Expired running jobs are reconciled first."""
    settings = settings or reflection_settings()
    with db.connect() as conn:
        jobs.ensure(conn)
        jobs.reconcile_expired(conn, now)
        return jobs.admit(
            conn,
            session_id,
            message_id,
            interval=settings.section.nudge_interval,
            owner=owner or jobs.new_owner(),
            recovered=recovered_,
            negative=negative,
            interrupted=interrupted,
            start=settings.disabled is None,
            now=now,
            project_root=str(Path(project_root).resolve()) if project_root else None,
        )


def _snapshot(root: Path) -> list[dict[str, str]]:
    from .views import scope_views  # noqa: PLC0415 lazy: start-up

    out = []
    for view in scope_views(root):
        if view.error:
            raise Refusal("unreadable", view.error)
        out += [{"scope": view.file.scope, "content": e} for e in view.entries]
    return out


def _start(
    conn: sqlite3.Connection,
    root: Path,
    settings: ReflectionSettings,
    t: Transcript,
    session_id: str,
    owner: str,
    now: int | None,
    negative: str | None,
) -> tuple[jobs.Admission, jobs.Job | None, ReflectionResult | None]:
    """Admit the message and take its job, or say why nothing is sent."""
    jobs.reconcile_expired(conn, now)
    adm = jobs.admit(
        conn,
        session_id,
        t.message_id,
        interval=settings.section.nudge_interval,
        owner=owner,
        recovered=recovered(t),
        negative=negative is not None,
        interrupted=t.interrupted,
        start=settings.disabled is None,
        now=now,
        project_root=str(root),
    )
    step("reflect:admitted")
    if settings.disabled:
        return adm, None, ReflectionResult("disabled", settings.disabled, adm)
    if adm.state == "not_counted":
        return (
            adm,
            None,
            ReflectionResult("not_counted", "the turn was interrupted: it is not counted or reviewed", adm),
        )
    job = adm.job
    if negative is not None and job is None:
        return (
            adm,
            None,
            ReflectionResult(
                "negative_learning", f"not reviewed: {negative} (negative learning; the turn still counts)", adm
            ),
        )
    if job is None:
        return (
            adm,
            None,
            ReflectionResult(
                "not_due", f"no review due: message {adm.ordinal} of the session, nudge_interval {adm.interval}", adm
            ),
        )
    if adm.state != "started" and not jobs.claim(conn, job.id, owner, now):
        job = jobs.get_job(conn, job.id) or job
        return (
            adm,
            job,
            ReflectionResult(
                "not_sent",
                f"job {job.id} is {job.status}"
                + (", its request already recorded" if job.status == "running" else "")
                + ": a review is never sent twice",
                adm,
                job,
            ),
        )
    step("reflect:leased")
    return adm, jobs.get_job(conn, job.id), None


def _settle(
    job: jobs.Job, owner: str, status: str, outcome: dict[str, Any], adm: jobs.Admission, cands: list[str]
) -> ReflectionResult:
    from .projection import screen  # noqa: PLC0415 lazy: start-up

    outcome = screen(outcome)  # the model's text and raw tool arguments are recorded screened, never a secret
    error = outcome.get("error")
    with db.connect() as conn:
        jobs.settle(conn, job, owner, status, outcome, error)
        step("reflect:settled")
        settled = jobs.get_job(conn, job.id)
    return ReflectionResult(status, error or f"review completed: {len(cands)} proposal(s)", adm, settled, cands)


def reflect(
    project_root: str | Path,
    session_id: str,
    transcript: str | Path | Transcript,
    *,
    settings: ReflectionSettings | None = None,
    owner: str | None = None,
    now: int | None = None,
) -> ReflectionResult:
    """Run one review of the delivered turn in ``transcript`` (a JSONL file, :mod:`.transcript`) for
    ``session_id`` in the project at ``project_root`` (see the module docstring for its durable steps). Returns a
    :class:`ReflectionResult`; raises :class:`Refusal` for an invalid transcript or configuration (nothing
    recorded). ``now`` (ms) and ``owner`` are for tests.

    No database connection is held across another one's work (the proposal, the HTTP call): each durable step
    opens its own, so this process never closes a file its SQLite connections hold locks on."""
    root = Path(project_root).resolve()
    t = transcript if isinstance(transcript, Transcript) else read_transcript(transcript)
    settings = settings or reflection_settings()
    owner = owner or jobs.new_owner()
    with db.connect() as conn:
        jobs.ensure(conn)
        negative = negative_learning(t)
        adm, job, done = _start(conn, root, settings, t, session_id, owner, now, negative)
    if done is not None:
        return done
    assert job is not None
    if negative is not None:  # `turn` started the job, but the transcript is negative learning: never sent
        res = _settle(
            job,
            owner,
            "failed",
            {"status": "failed", "kind": "negative_learning", "error": f"not reviewed: {negative} (negative learning)"},
            adm,
            [],
        )
        res.state = "negative_learning"
        return res
    try:
        snapshot = _snapshot(root)
    except Refusal as err:
        return _settle(
            job, owner, "failed", {"status": "failed", "error": f"resident snapshot: {err.message}"}, adm, []
        )
    record, body = review_request(settings, job, t, snapshot)
    with db.connect() as conn:
        recorded = jobs.record_request(conn, job, owner, record)
    if not recorded:
        return ReflectionResult("not_sent", f"job {job.id} is no longer this process's: nothing sent", adm, job)
    step("reflect:request")
    key = os.environ.get(settings.section.api_key_env) if settings.section.api_key_env else None
    try:
        answer = complete(settings.section.endpoint or "", body, api_key=key, timeout_s=settings.section.timeout_s)
        step("reflect:response")
        proposals = proposals_of(answer)
    except ProviderError as err:
        message = err.message
        if err.kind == "unreachable":
            message = (
                f"memory reflection disabled: the configured small model's endpoint is unreachable "
                f"({err.message}); no fallback model is used"
            )
        return _settle(job, owner, "failed", {"status": "failed", "kind": err.kind, "error": message}, adm, [])
    return _propose_all(root, job, owner, settings, answer, proposals, adm)


def _propose_all(
    root: Path,
    job: jobs.Job,
    owner: str,
    settings: ReflectionSettings,
    answer: Completion,
    proposals: list[ReviewProposal],
    adm: jobs.Admission,
) -> ReflectionResult:
    from . import service  # noqa: PLC0415 lazy: start-up

    cands: list[str] = []
    base = {
        "toolCalls": len(answer.tool_calls),
        "text": answer.text,
        "streamed": answer.streamed,
        "calls": [c.to_json() for c in answer.tool_calls],
    }
    for p in proposals:
        try:
            res = service.propose(
                root,
                scope=p.scope,
                action=p.action,
                content=p.content,
                old_text=p.old_text,
                reason=p.reason,
                confidence=p.confidence,
                source="reflection",
                session_id=job.session_id,
                message_id=job.source_message_id,
                actor=f"reflection:{settings.section.small_model}",
            )
        except Refusal as err:
            return _settle(
                job,
                owner,
                "failed",
                {
                    **base,
                    "status": "failed",
                    "kind": "proposal",
                    "error": f"proposal refused ({err.code}): {err.message}",
                    "candidates": cands,
                },
                adm,
                cands,
            )
        cands.append(res.candidate.id)
        step("reflect:proposed")
    return _settle(job, owner, "completed", {**base, "status": "completed", "candidates": cands}, adm, cands)
