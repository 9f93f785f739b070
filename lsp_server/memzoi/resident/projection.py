"""The WorkStateProjection: one client-neutral view of a project's resident memory (reference ``zuno-memory.md``
§7: Zuno's ``WorkStateProjection`` carries ``memory_candidates`` and ``memory_entries`` for every client;
zuno-types ``lib.rs``, turn.rs ``work_state``), with the reflection jobs and their outcomes (issue 34).

:func:`work_state` is the one function the command line (``memzoi resident state --json``), the language
server (``memzoi.resident.state`` and its views) and the MCP tool ``get_resident_memory`` return or render.
:func:`job_detail` is one job with its request and outcome records. Every text that leaves here is screened for
secrets (:func:`memzoi.safety.redact.scrub`), like every other view, after its paths of this machine are shown
as :func:`shown_paths` shows them (``<redacted-path:…>`` when a folder's name bears a secret, as ``memzoi resident
show`` and ``doctor``).
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

from ..base.runtime_errors import RuntimeStateError
from ..judge.config_model import MemzoiConfig
from ..judge.pathsafety import shown_local_path, with_shown_paths
from ..ledger import Refusal
from . import candidates as db, jobs
from .candidates import Candidate
from .scope import project_config, resident_files
from .views import scope_views

#: Zuno's ``/memory`` status glyphs (memory.rs @227e5fb).
GLYPHS = {
    "pending": "○",
    "applying": "…",
    "undoing": "…",
    "applied": "✓",
    "rejected": "×",
    "undone": "↶",
    "failed": "!",
    "uncertain": "?",
}


def screen(value: Any) -> Any:
    """``value`` (JSON data) with every string screened for secrets (:func:`memzoi.safety.redact.scrub`)."""
    from ..safety.redact import scrub  # noqa: PLC0415 lazy: start-up

    if isinstance(value, str):
        return scrub(value)
    if isinstance(value, list):
        return [screen(v) for v in value]
    if isinstance(value, dict):
        return {k: screen(v) for k, v in value.items()}
    return value


#: Keys whose value is an absolute path of this machine in the resident views (a resident file's, a candidate's
#: target, a reflection job's project root): they carry the project folder's and the memzoi home's names.
LOCAL_PATH_KEYS = frozenset({"path", "target_path", "project_root"})


def shown_paths(value: Any) -> Any:
    """``value`` (JSON data: dicts, lists, scalars) with every string under a key of :data:`LOCAL_PATH_KEYS`, at
    any depth, as :func:`memzoi.judge.pathsafety.shown_local_path` shows it, and an ``error`` or ``diagnostic``
    beside such a path (the resident store's refusal names its file) spelled through
    :func:`~memzoi.judge.pathsafety.with_shown_paths`. A new value; ``value`` is not changed."""
    if isinstance(value, list):
        return [shown_paths(v) for v in value]
    if not isinstance(value, dict):
        return value
    out = {
        k: shown_local_path(v) if k in LOCAL_PATH_KEYS and isinstance(v, str) else shown_paths(v)
        for k, v in value.items()
    }
    named = [v for k, v in value.items() if k in LOCAL_PATH_KEYS and isinstance(v, str)]
    for key in ("error", "diagnostic"):
        for path in named if isinstance(out.get(key), str) else ():
            out[key] = with_shown_paths(out[key], path)
    return out


def candidate_projection(c: Candidate, job_ids: dict[tuple[str, str], str]) -> dict[str, Any]:
    """One candidate as every client shows it (Zuno's details: id, scope, action, status, confidence, source,
    reason, content, locator, session, message, diagnostic), with ``original_content`` when edited, the
    ``job`` that proposed it (a reflection candidate's review job id, else ``None``) and the status glyph."""
    return {
        "id": c.id,
        "scope": c.scope,
        "path": c.target_path,
        "action": c.action,
        "status": c.status,
        "glyph": GLYPHS.get(c.status, " "),
        "confidence": c.confidence / 10_000,
        "source": c.source,
        "reason": c.reason,
        "content": c.content,
        "locator": c.old_text,
        "original_content": c.original_content,
        "session": c.source_session_id,
        "message": c.source_message_id,
        "diagnostic": c.error,
        "proposed_by": c.actor,
        "decided_by": c.decided_by,
        "time_created": c.time_created,
        "time_updated": c.time_updated,
        "job": job_ids.get((c.source_session_id or "", c.source_message_id or ""))
        if c.source == "reflection"
        else None,
    }


def job_projection(job: jobs.Job, records: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """One reflection job: its row, the outcome's ``status``/``error``/``candidates`` (``None`` while none is
    recorded) and whether its request was recorded."""
    outcome = records.get("outcome")
    return {
        **job.to_json(),
        "request_recorded": "request" in records,
        "outcome": None
        if outcome is None
        else {
            "status": outcome.get("status"),
            "kind": outcome.get("kind"),
            "error": outcome.get("error"),
            "candidates": outcome.get("candidates", []),
        },
    }


def _jobs(conn: sqlite3.Connection, root: Path) -> list[dict[str, Any]]:
    if not db.has_table(conn, "memory_reflection_job"):  # a reader creates no table: no job was ever admitted
        return []
    return [job_projection(j, jobs.events(conn, j.id)) for j in jobs.list_jobs(conn, project_root=str(root))]


_Read = tuple[list[Candidate], list[dict[str, Any]], dict[tuple[str, str], str]]


def _candidates_and_jobs(conn: sqlite3.Connection, root: Path, paths: list[str]) -> _Read:
    """The files' candidates, the project's jobs and every job's id by (session, message), read in ``conn``."""
    cands = db.list_for_paths(conn, paths)
    job_rows = _jobs(conn, root)
    known = {(j["session_id"], j["source_message_id"]): j["id"] for j in job_rows}
    if job_rows or db.has_table(conn, "memory_reflection_job"):
        for sid, mid, jid in conn.execute("SELECT session_id, source_message_id, id FROM memory_reflection_job"):
            known.setdefault((sid, mid), jid)
    return cands, job_rows, known


def work_state(project_root: str | Path, config: MemzoiConfig | None = None) -> dict[str, Any]:
    """The WorkStateProjection of the project at ``project_root``::

        {"memory_entries": [{"scope", "content"}],             # the prompt's entries, global first
         "files": [{"scope", "path", "cap", "used", "usage", "entries", "error"}],
         "memory_candidates": [candidate_projection …],        # pending first, newest first
         "reflection_jobs": [job_projection …]}                # newest first

    Paths are shown by :func:`shown_paths`, then every string screened. Raises :class:`Refusal` ``invalid_config``
    when the project's ``[resident]`` cannot say where the files are. Never creates or writes the database: a
    read-only memzoi home still answers (:func:`.candidates.read`)."""
    root = Path(project_root).resolve()
    config = config or project_config(root)
    files = []
    for view in scope_views(root, config):
        data = view.to_json()
        data.pop("block", None)
        files.append(data)
    entries = [{"scope": f["scope"], "content": e} for f in files for e in f["entries"]]
    paths = [str(f.path) for f in resident_files(root, config)]
    none: _Read = ([], [], {})  # no database yet
    cands, job_rows, known = db.read(lambda conn: _candidates_and_jobs(conn, root, paths), none)
    state: dict[str, Any] = screen(
        shown_paths(
            {
                "memory_entries": entries,
                "files": files,
                "memory_candidates": [candidate_projection(c, known) for c in cands],
                "reflection_jobs": job_rows,
            }
        )
    )
    return state


def job_detail(job_id: str) -> dict[str, Any]:
    """``{"job", "request", "outcome", "candidates"}`` of the reflection job ``job_id`` (a unique prefix works):
    the records exactly as stored, secrets screened and local paths shown (:func:`shown_paths`); ``candidates`` are the ids the review proposed. Raises
    :class:`Refusal` ``job_not_found``. A read: never writes the database (:func:`.candidates.read`)."""

    def reading(conn: sqlite3.Connection) -> tuple[jobs.Job, dict[str, dict[str, Any]], list[str]] | None:
        job = jobs.get_job(conn, job_id) if db.has_table(conn, "memory_reflection_job") else None
        if job is None:
            return None
        rows = conn.execute(
            "SELECT id FROM memory_candidate WHERE source = 'reflection' AND source_session_id = ? "
            "AND source_message_id = ? ORDER BY time_created",
            (job.session_id, job.source_message_id),
        )
        return job, jobs.events(conn, job.id), [r[0] for r in rows]

    found = db.read(reading, None)
    if found is None:
        raise Refusal("job_not_found", f"no reflection job {job_id}; see `memzoi resident jobs`")
    job, records, cands = found
    detail: dict[str, Any] = screen(
        shown_paths(
            {
                "job": job.to_json(),
                "request": records.get("request"),
                "outcome": records.get("outcome"),
                "candidates": cands,
            }
        )
    )
    return detail


def reconcile_jobs(now: int | None = None) -> list[str]:
    """Make every expired running reflection job ``uncertain`` (never re-sent); returns their ids. Creates
    nothing when there is no database yet."""
    if not db.db_path().exists():
        return []
    with db.connect() as conn:
        return jobs.reconcile_expired(jobs.ensure(conn), now)


def reconcile_jobs_before_read() -> None:
    """:func:`reconcile_jobs` as a listing runs it first: skipped when the database cannot be written now (a
    read-only or full memzoi home, a lock held elsewhere, a damaged file), since reading must not need write
    access; the listing then shows the jobs as recorded, and reports a damaged database itself."""
    try:
        reconcile_jobs()
    except RuntimeStateError:
        pass


def job_text(detail: dict[str, Any]) -> str:
    """A readable rendering of :func:`job_detail` (the CLI's and the editor's "open request and outcome")."""
    job = detail["job"]
    lines = [
        f"reflection job {job['id']}: {job['status']} ({job['trigger']})",
        f"  session {job['session_id']}, message {job['source_message_id']}",
    ]
    if job.get("error"):
        lines.append(f"  diagnostic: {job['error']}")
    if detail["candidates"]:
        lines.append("  candidates: " + ", ".join(detail["candidates"]))
    for name in ("request", "outcome"):
        lines += [
            "",
            f"## {name}",
            json.dumps(detail[name], ensure_ascii=False, indent=2) if detail[name] is not None else "(not recorded)",
        ]
    return "\n".join(lines)
