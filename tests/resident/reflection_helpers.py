"""Shared set-up of the reflection tests: the user's ``[reflection]`` configuration and transcript files."""

from __future__ import annotations

import json
from pathlib import Path

from memzoi.resident import candidates as db, jobs


def user_config(
    tmp_path: Path, endpoint: str | None, *, nudge: int = 1, timeout: float = 10, key_env: str = "STUB_REFLECTION_KEY"
) -> None:
    """Write ``[reflection]`` to the user's memzoi.toml (``$ZUNO_CONFIG_DIR`` of the ``project`` fixture)."""
    folder = tmp_path / "zuno"
    folder.mkdir(exist_ok=True)
    lines = ["[reflection]", f"nudge_interval = {nudge}", f"timeout_s = {timeout}", f'api_key_env = "{key_env}"']
    if endpoint:
        lines += ['small_model = "stub/small-1"', f'endpoint = "{endpoint}"']
    (folder / "memzoi.toml").write_text("\n".join(lines) + "\n", encoding="utf-8")


def transcript(tmp_path: Path, message: str = "msg_1", items: list[dict] | None = None) -> Path:
    """A transcript file ending with the delivered assistant message ``message``."""
    items = (
        items
        if items is not None
        else [
            {"role": "user", "text": "Always run make lint before pushing, please."},
            {"role": "command", "command": "make lint", "status": "completed", "output": "ok"},
        ]
    )
    path = tmp_path / f"{message}.jsonl"
    rows = [*items, {"role": "assistant", "id": message, "text": "Done: lint passes."}]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def job_records(job_id: str) -> tuple[jobs.Job, dict]:
    """The job and its ``{"request", "outcome"}`` records."""
    with db.connect() as conn:
        jobs.ensure(conn)
        return jobs.get_job(conn, job_id), jobs.events(conn, job_id)


def all_jobs() -> list[jobs.Job]:
    """Every job, newest first."""
    with db.connect() as conn:
        return jobs.list_jobs(jobs.ensure(conn))


ADD = {
    "scope": "project",
    "action": "add",
    "content": "Run make lint before pushing.",
    "reason": "the user asked for it explicitly",
    "confidence": 0.95,
}
