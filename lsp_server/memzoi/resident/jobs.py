"""Durable reflection records, in the candidate database (reference ``zuno-memory.md`` §6, §8; Zuno
``zuno-db/src/memory_reflection.rs`` @6b665d5 and ``event_log.rs``).

Three tables beside ``memory_candidate`` in ``memzoi-lsp-resident.db``:

- ``memory_reflection_delivery``: one row per delivered assistant message of a session (primary key
  ``(session_id, source_message_id)``, ``ordinal`` > 0 unique per session): the durable ``nudge_interval`` count.
  A message is admitted at most once; an interrupted turn is never admitted; a negative-learning turn takes its
  ordinal but never starts a job.
- ``memory_reflection_job``: the leased review of one admitted message (``reflection_<uuid>``; status
  ``running``, ``completed``, ``failed`` or ``uncertain``; ``owner_id`` and ``lease_expires`` in ms). A job is
  settled once, by its owner, from ``running``; :func:`reconcile_expired` turns an expired ``running`` job
  ``uncertain`` ("reflection owner disappeared without an authoritative outcome") and nothing ever re-sends it.
- ``memory_reflection_event``: the append-only record of a job, ``memory.reflection.request.1`` (persisted
  before the request is sent) and ``memory.reflection.outcome.1`` (on completion and on every terminal failure),
  at most one of each per job, ``seq`` monotonic.

Every write is one ``BEGIN IMMEDIATE`` transaction (:func:`memzoi.ledger.store.immediate`).
"""

from __future__ import annotations

import json
import sqlite3
import uuid
from dataclasses import asdict, dataclass
from typing import Any

from ..ledger import Refusal
from ..ledger.store import immediate as transaction
from .candidates import now_ms

#: Zuno ``REFLECTION_LEASE_MILLIS``: a job's lease, one hour in milliseconds.
LEASE_MS = 60 * 60 * 1000
JOB_STATUSES = ("running", "completed", "failed", "uncertain")
TERMINAL = ("completed", "failed", "uncertain")
REQUEST = "memory.reflection.request.1"
OUTCOME = "memory.reflection.outcome.1"
#: Zuno's diagnostic of an expired running job (``reconcile_expired``).
EXPIRED = "reflection owner disappeared without an authoritative outcome"

_SCHEMA = """
CREATE TABLE IF NOT EXISTS memory_reflection_delivery (
    session_id TEXT NOT NULL,
    source_message_id TEXT NOT NULL,
    ordinal INTEGER NOT NULL CHECK (ordinal > 0),
    recovered INTEGER NOT NULL CHECK (recovered IN (0, 1)),
    negative_learning INTEGER NOT NULL CHECK (negative_learning IN (0, 1)),
    time_created INTEGER NOT NULL,
    PRIMARY KEY (session_id, source_message_id),
    UNIQUE (session_id, ordinal)
);
CREATE TABLE IF NOT EXISTS memory_reflection_job (
    id TEXT PRIMARY KEY,
    session_id TEXT NOT NULL,
    source_message_id TEXT NOT NULL,
    trigger TEXT NOT NULL CHECK (trigger IN ('periodic', 'recovery', 'periodic-recovery')),
    status TEXT NOT NULL CHECK (status IN ('running', 'completed', 'failed', 'uncertain')),
    owner_id TEXT NOT NULL,
    lease_expires INTEGER NOT NULL,
    error TEXT,
    time_created INTEGER NOT NULL,
    time_updated INTEGER NOT NULL,
    time_completed INTEGER,
    project_root TEXT,
    UNIQUE (session_id, source_message_id),
    FOREIGN KEY (session_id, source_message_id)
        REFERENCES memory_reflection_delivery (session_id, source_message_id) ON DELETE CASCADE
);
CREATE INDEX IF NOT EXISTS memory_reflection_job_session_status_time_idx
    ON memory_reflection_job (session_id, status, time_created);
CREATE TABLE IF NOT EXISTS memory_reflection_event (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    session_id TEXT NOT NULL,
    job_id TEXT NOT NULL REFERENCES memory_reflection_job (id) ON DELETE CASCADE,
    type TEXT NOT NULL CHECK (type IN ('memory.reflection.request.1', 'memory.reflection.outcome.1')),
    data TEXT NOT NULL,
    time_created INTEGER NOT NULL,
    UNIQUE (job_id, type)
);
"""


def ensure(conn: sqlite3.Connection) -> sqlite3.Connection:
    """Create the reflection tables in the candidate database when missing (idempotent); returns ``conn``."""
    conn.executescript(_SCHEMA)
    return conn


def new_owner() -> str:
    """``reflection_owner_<uuid>``: the owner id of one process's reviews (Zuno's host ``owner_id``)."""
    return "reflection_owner_" + uuid.uuid4().hex


@dataclass
class Job:
    """One ``memory_reflection_job`` row; times in milliseconds since the epoch."""

    id: str
    session_id: str
    source_message_id: str
    trigger: str
    status: str
    owner_id: str
    lease_expires: int
    error: str | None
    time_created: int
    time_updated: int
    time_completed: int | None
    #: the project whose turn is reviewed (where ``reflect``/``turn`` ran); its views list the job
    project_root: str | None = None

    def to_json(self) -> dict[str, Any]:
        """Every column by name."""
        return asdict(self)


@dataclass
class Admission:
    """What admitting a delivered message did: ``state`` is ``started`` (a job was created), ``not_scheduled``
    (counted, no review due), ``already_recorded`` (this message was admitted before: nothing counted or started
    again) or ``not_counted`` (an interrupted turn); ``ordinal`` is the message's place in the session's count
    (``None`` when not counted), ``job`` the job started now or before, ``count`` the session's delivered
    messages, ``interval`` the ``nudge_interval`` used."""

    state: str
    ordinal: int | None
    job: Job | None
    count: int
    interval: int

    def to_json(self) -> dict[str, Any]:
        """``{"state", "ordinal", "job", "count", "interval", "due"}`` (``due``: a job is running for it)."""
        return {
            "state": self.state,
            "ordinal": self.ordinal,
            "count": self.count,
            "interval": self.interval,
            "job": self.job.to_json() if self.job else None,
            "due": bool(self.job and self.job.status == "running"),
        }


def _job(row: sqlite3.Row | None) -> Job | None:
    return None if row is None else Job(**dict(row))


def session_count(conn: sqlite3.Connection, session_id: str) -> int:
    """The session's delivered (admitted) message count: its highest ordinal, 0 when none."""
    row = conn.execute(
        "SELECT MAX(ordinal) FROM memory_reflection_delivery WHERE session_id = ?", (session_id,)
    ).fetchone()
    return row[0] or 0


def trigger_for(ordinal: int, interval: int, recovered: bool, negative: bool) -> str | None:
    """Zuno's scheduling rule: ``periodic`` when ``interval != 0`` and ``ordinal % interval == 0``, ``recovery``
    after a verified recovery, ``periodic-recovery`` for both; ``None`` (not scheduled) for a negative-learning
    turn or when neither holds."""
    periodic = interval != 0 and ordinal % interval == 0
    if negative or not (periodic or recovered):
        return None
    return "periodic-recovery" if periodic and recovered else "periodic" if periodic else "recovery"


def admit(
    conn: sqlite3.Connection,
    session_id: str,
    message_id: str,
    *,
    interval: int,
    owner: str,
    recovered: bool = False,
    negative: bool = False,
    interrupted: bool = False,
    start: bool = True,
    now: int | None = None,
    project_root: str | None = None,
) -> Admission:
    """Admit a delivered assistant message at most once and start its review job when one is due (Zuno
    ``admit_and_start``, one IMMEDIATE transaction). ``interval`` is ``nudge_interval`` (0: only recoveries
    trigger); ``start=False`` counts without starting a job (reflection disabled). An ``interrupted`` turn is not
    counted. Raises :class:`Refusal` ``invalid_turn`` for an empty id, ``threat_blocked`` for an id that holds a
    secret (:func:`memzoi.resident.threats.refuse_secret_ids`: the ids are stored as given)."""
    if not (session_id or "").strip() or not (message_id or "").strip():
        raise Refusal("invalid_turn", "a delivered turn needs its session id and message id")
    from .threats import refuse_secret_ids  # noqa: PLC0415 lazy: start-up (the detectors load with it)

    refuse_secret_ids(session_id=session_id, message_id=message_id)
    ts = now if now is not None else now_ms()
    with transaction(conn):
        count = session_count(conn, session_id)
        row = conn.execute(
            "SELECT ordinal FROM memory_reflection_delivery WHERE session_id = ? AND source_message_id = ?",
            (session_id, message_id),
        ).fetchone()
        if row is not None:
            job = _job(
                conn.execute(
                    "SELECT * FROM memory_reflection_job WHERE session_id = ? AND source_message_id = ?",
                    (session_id, message_id),
                ).fetchone()
            )
            return Admission("already_recorded", row[0], job, count, interval)
        if interrupted:
            return Admission("not_counted", None, None, count, interval)
        ordinal = count + 1
        conn.execute(
            "INSERT INTO memory_reflection_delivery VALUES (?, ?, ?, ?, ?, ?)",
            (session_id, message_id, ordinal, int(recovered), int(negative), ts),
        )
        trigger = trigger_for(ordinal, interval, recovered, negative)
        if trigger is None or not start:
            return Admission("not_scheduled", ordinal, None, ordinal, interval)
        job = Job(
            "reflection_" + uuid.uuid4().hex,
            session_id,
            message_id,
            trigger,
            "running",
            owner,
            ts + LEASE_MS,
            None,
            ts,
            ts,
            None,
            project_root,
        )
        conn.execute(
            "INSERT INTO memory_reflection_job VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", tuple(asdict(job).values())
        )
        return Admission("started", ordinal, job, ordinal, interval)


def claim(conn: sqlite3.Connection, job_id: str, owner: str, now: int | None = None) -> bool:
    """Take over the running job ``job_id`` for ``owner`` with a fresh lease, only while no request has been
    recorded for it (nothing was sent, so nothing can be sent twice). Returns whether the job is now ``owner``'s."""
    ts = now if now is not None else now_ms()
    with transaction(conn):
        cur = conn.execute(
            "UPDATE memory_reflection_job SET owner_id = ?, lease_expires = ?, time_updated = ? WHERE id = ? AND "
            "status = 'running' AND lease_expires > ? AND NOT EXISTS (SELECT 1 FROM memory_reflection_event "
            "WHERE job_id = ? AND type = ?)",
            (owner, ts + LEASE_MS, ts, job_id, ts, job_id, REQUEST),
        )
        return cur.rowcount == 1


def record_request(conn: sqlite3.Connection, job: Job, owner: str, data: dict[str, Any]) -> bool:
    """Persist ``memory.reflection.request`` for ``job`` before anything is sent: only for its owner, while it
    runs, once. Returns whether it was recorded (``False``: the request must not be sent)."""
    with transaction(conn):
        live = conn.execute(
            "SELECT 1 FROM memory_reflection_job WHERE id = ? AND owner_id = ? AND status = 'running'", (job.id, owner)
        ).fetchone()
        if live is None:
            return False
        cur = conn.execute(
            "INSERT OR IGNORE INTO memory_reflection_event (session_id, job_id, type, data, "
            "time_created) VALUES (?, ?, ?, ?, ?)",
            (job.session_id, job.id, REQUEST, json.dumps(data, ensure_ascii=False), now_ms()),
        )
        return cur.rowcount == 1


def settle(
    conn: sqlite3.Connection, job: Job, owner: str, status: str, outcome: dict[str, Any], error: str | None = None
) -> bool:
    """Write ``memory.reflection.outcome`` and move the running job to terminal ``status`` in one transaction,
    once, by its owner (Zuno ``settle``). Returns whether it happened (``False``: settled before, or not the
    owner's any more; the outcome is then not written)."""
    if status not in TERMINAL:
        raise ValueError(f"not a terminal job status: {status}")
    ts = now_ms()
    with transaction(conn):
        cur = conn.execute(
            "UPDATE memory_reflection_job SET status = ?, error = ?, time_updated = ?, time_completed = ? "
            "WHERE id = ? AND owner_id = ? AND status = 'running'",
            (status, error, ts, ts, job.id, owner),
        )
        if cur.rowcount != 1:
            return False
        conn.execute(
            "INSERT OR IGNORE INTO memory_reflection_event (session_id, job_id, type, data, time_created) "
            "VALUES (?, ?, ?, ?, ?)",
            (job.session_id, job.id, OUTCOME, json.dumps(outcome, ensure_ascii=False), ts),
        )
        return True


def reconcile_expired(conn: sqlite3.Connection, now: int | None = None) -> list[str]:
    """Every ``running`` job whose lease has expired (``lease_expires <= now``) becomes ``uncertain`` with
    :data:`EXPIRED` (Zuno ``reconcile_expired``); never re-sent. Returns their ids."""
    ts = now if now is not None else now_ms()
    with transaction(conn):
        ids = [
            r[0]
            for r in conn.execute(
                "SELECT id FROM memory_reflection_job WHERE status = 'running' AND "
                "lease_expires <= ? ORDER BY time_created, id",
                (ts,),
            )
        ]
        conn.execute(
            "UPDATE memory_reflection_job SET status = 'uncertain', error = ?, time_updated = ?, "
            "time_completed = ? WHERE status = 'running' AND lease_expires <= ?",
            (EXPIRED, ts, ts, ts),
        )
    return ids


def get_job(conn: sqlite3.Connection, job_id: str) -> Job | None:
    """The job ``job_id`` (a unique prefix is accepted), or ``None``."""
    row = conn.execute("SELECT * FROM memory_reflection_job WHERE id = ?", (job_id,)).fetchone()
    if row is None and job_id:
        rows = conn.execute(
            "SELECT * FROM memory_reflection_job WHERE substr(id, 1, ?) = ? LIMIT 2", (len(job_id), job_id)
        ).fetchall()
        row = rows[0] if len(rows) == 1 else None
    return _job(row)


def job_for(conn: sqlite3.Connection, session_id: str, message_id: str) -> Job | None:
    """The job of one admitted message, or ``None``."""
    return _job(
        conn.execute(
            "SELECT * FROM memory_reflection_job WHERE session_id = ? AND source_message_id = ?",
            (session_id, message_id),
        ).fetchone()
    )


def list_jobs(conn: sqlite3.Connection, session_id: str | None = None, project_root: str | None = None) -> list[Job]:
    """Jobs, newest first (one session's when ``session_id`` is given, one project's with ``project_root``)."""
    where, args = ("WHERE session_id = ?", (session_id,)) if session_id else ("", ())
    if project_root is not None:
        where, args = (where + " AND" if where else "WHERE") + " project_root = ?", (*args, project_root)
    rows = conn.execute(f"SELECT * FROM memory_reflection_job {where} ORDER BY time_created DESC, id DESC", args)
    return [Job(**dict(r)) for r in rows]


def events(conn: sqlite3.Connection, job_id: str) -> dict[str, dict[str, Any]]:
    """``{"request": data, "outcome": data}`` of a job, each present once recorded."""
    rows = conn.execute("SELECT type, data FROM memory_reflection_event WHERE job_id = ? ORDER BY seq", (job_id,))
    names = {REQUEST: "request", OUTCOME: "outcome"}
    return {names[t]: json.loads(d) for t, d in rows}


def requests_sent(conn: sqlite3.Connection, job_id: str) -> int:
    """How many requests were recorded for a job (0 or 1 by construction)."""
    row = conn.execute(
        "SELECT COUNT(*) FROM memory_reflection_event WHERE job_id = ? AND type = ?", (job_id, REQUEST)
    ).fetchone()
    return int(row[0])
