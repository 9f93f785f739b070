"""Session checkpoints (memzoi.lifecycle.checkpoints): runtime rows only, the session lane's retention boundary,
continue refused at the boundary itself, terminal idempotent close, successor lineage, versions, operation-id
replay and conflict, secrets refused, undo hides, and the schema 4 → 5 upgrade in place. The clock is injected
(``now=``), as the retention tests do."""

from __future__ import annotations

import os
import sqlite3
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from memzoi import ledger as L
from memzoi.base.runtime import LEDGER_DB, project_runtime_dir
from memzoi.lifecycle import checkpoint_transitions as CT, checkpoints as C

T0 = datetime(2026, 7, 1, 9, 0, tzinfo=UTC)


def planted() -> str:
    """A credentialed URL built at run time (never a literal of the test source)."""
    return "postgres://admin:" + "Vq8rT2nL" + "5xK9wZ3p" + "@db.internal.example:5432/app"


@pytest.fixture
def project(runtime_project: Path) -> Path:
    return runtime_project


def add(project: Path, **kw):
    kw.setdefault("task", "Auth middleware")
    kw.setdefault("body", "Stopped at token refresh")
    kw.setdefault("now", T0)
    return C.add_checkpoint(project, actor="dev", **kw)


def test_add_is_a_runtime_row_of_type_episode_lane_session(project):
    before = sorted(p.relative_to(project).as_posix() for p in project.rglob("*"))
    out = add(project)
    cp = out["checkpoint"]
    assert (cp["type"], cp["lane"], cp["destination"], cp["provenance"]) == ("episode", "session", "session", "runtime")
    assert cp["status"] == "open" and cp["version"] == 1 and cp["body"] == "Stopped at token refresh"
    assert cp["retention"] == {"started_at": "2026-07-01T09:00:00Z"}
    assert cp["retention_decision"]["effective_boundary"] == "2026-07-02T09:00:00Z"
    assert cp["retention_decision"]["reason"] == "session_inactivity_lease"
    assert out["checkpoint_set_version"] == 1
    assert sorted(p.relative_to(project).as_posix() for p in project.rglob("*")) == before  # no git-plane file
    assert L.get_change(project, out["change_id"]).operation == "checkpoint_add"


def test_continue_before_the_boundary_then_refused_at_it(project):
    cid = add(project)["checkpoint"]["id"]
    just_before = T0 + timedelta(hours=24) - timedelta(microseconds=1)
    out = CT.continue_checkpoint(project, cid, now=just_before)
    assert out["checkpoint"]["version"] == 2
    boundary = just_before + timedelta(hours=24)
    assert out["checkpoint"]["retention_decision"]["effective_boundary"] == C.format_instant(boundary)
    with pytest.raises(L.Refusal) as err:
        CT.continue_checkpoint(project, cid, now=boundary)  # the boundary itself is too late
    assert err.value.code == "checkpoint_expired"
    assert C.get_checkpoint(project, cid).version == 2


def test_maximum_age_bounds_continuation(project):
    cid = add(project)["checkpoint"]["id"]
    at = T0
    for _ in range(7):  # continue every 23 h: the lease never lapses, the 7-day maximum does
        at += timedelta(hours=23)
        if at >= T0 + timedelta(days=7):
            break
        CT.continue_checkpoint(project, cid, now=at)
    with pytest.raises(L.Refusal) as err:
        CT.continue_checkpoint(project, cid, now=T0 + timedelta(days=7))
    assert err.value.code == "checkpoint_expired"


def test_close_is_terminal_and_idempotent(project):
    cid = add(project)["checkpoint"]["id"]
    first = CT.close_checkpoint(project, cid, now=T0 + timedelta(hours=1))
    assert first["changed"] is True and first["checkpoint"]["status"] == "closed"
    assert first["checkpoint"]["retention"]["closed_at"] == "2026-07-01T10:00:00Z"
    assert first["checkpoint"]["version"] == 2
    again = CT.close_checkpoint(project, cid, now=T0 + timedelta(hours=2))
    assert again["changed"] is False and again["checkpoint"]["version"] == 2
    assert again["checkpoint"]["retention"]["closed_at"] == "2026-07-01T10:00:00Z"
    with pytest.raises(L.Refusal) as err:
        CT.continue_checkpoint(project, cid, now=T0 + timedelta(hours=1, minutes=1))
    assert err.value.code == "checkpoint_closed"


def test_successor_records_lineage_only_after_close_or_expiry(project):
    first = add(project)["checkpoint"]["id"]
    with pytest.raises(L.Refusal) as err:
        add(project, body="Day 2", successor_of=first, now=T0 + timedelta(hours=1))
    assert err.value.code == "predecessor_open"
    second = add(project, body="Day 2", successor_of=first, now=T0 + timedelta(hours=25))["checkpoint"]  # expired
    assert second["lineage"] == {"predecessor_id": first, "generation": 2, "root_id": first}
    assert second["origin"]["route"] == "checkpoint_successor"
    CT.close_checkpoint(project, second["id"], now=T0 + timedelta(hours=26))
    third = add(project, body="Day 3", successor_of=second["id"], now=T0 + timedelta(hours=27))["checkpoint"]
    assert third["lineage"] == {"predecessor_id": second["id"], "generation": 3, "root_id": first}
    with pytest.raises(L.Refusal) as err:
        add(project, body="x", successor_of="ckpt-nope", now=T0)
    assert err.value.code == "checkpoint_not_found"


def test_identical_retry_replays_before_version_checks(project):
    out = add(project, operation_id="op-1", expected_version=0)
    again = add(project, operation_id="op-1", expected_version=0)  # the set is at 1 now: replay comes first
    assert again["replayed"] is True and again["checkpoint"]["id"] == out["checkpoint"]["id"]
    assert len(C.list_checkpoints(project)[1]) == 1
    with pytest.raises(L.Refusal) as err:
        add(project, body="other note", operation_id="op-1", expected_version=0)
    assert err.value.code == "operation_id_conflict"
    with pytest.raises(L.Refusal) as err:
        add(project, body="other note", operation_id="op-2", expected_version=0)
    assert err.value.code == "version_conflict"
    assert add(project, body="other note", operation_id="op-2", expected_version=1)["checkpoint_set_version"] == 2


def test_transition_replay_conflict_and_version(project):
    cid = add(project)["checkpoint"]["id"]
    at = T0 + timedelta(hours=1)
    out = CT.continue_checkpoint(project, cid, operation_id="c-1", expected_version=1, now=at)
    assert out["checkpoint"]["version"] == 2
    again = CT.continue_checkpoint(project, cid, operation_id="c-1", expected_version=1, now=at)
    assert again["replayed"] is True and C.get_checkpoint(project, cid).version == 2
    with pytest.raises(L.Refusal) as err:
        CT.close_checkpoint(project, cid, operation_id="c-1", expected_version=2, now=at)
    assert err.value.code == "operation_id_conflict"
    with pytest.raises(L.Refusal) as err:
        CT.close_checkpoint(project, cid, operation_id="c-2", expected_version=1, now=at)
    assert err.value.code == "version_conflict"
    assert C.get_checkpoint(project, cid).status == "open"


def test_a_secret_is_refused_and_no_byte_is_stored(project):
    secret = planted()
    with pytest.raises(L.Refusal) as err:
        add(project, body=f"connect with {secret}")
    assert err.value.code in ("connection_string", "credentialed_url")
    assert secret not in str(err.value)
    home = Path(os.environ["MEMZOI_HOME"])
    blobs = b"".join(p.read_bytes() for p in home.rglob("*") if p.is_file())
    assert secret.encode() not in blobs and b"Vq8rT2nL5xK9wZ3p" not in blobs


def test_empty_note_and_bad_operation_id_refused(project):
    with pytest.raises(L.Refusal) as err:
        add(project, body="   ")
    assert err.value.code == "empty_body"
    with pytest.raises(L.Refusal) as err:
        add(project, operation_id="has space")
    assert err.value.code == "invalid_value"


def test_undo_hides_the_checkpoint(project):
    out = add(project)
    L.undo_change(project, out["change_id"], actor="dev")
    assert C.list_checkpoints(project)[1] == []
    assert C.list_checkpoints(project)[0] == 1  # the set version never decreases


def test_schema_4_ledger_upgrades_in_place(project):
    add(project)  # creates a current ledger
    db = project_runtime_dir(project) / LEDGER_DB
    conn = sqlite3.connect(db)
    conn.execute("DROP TABLE checkpoint")
    conn.execute("DROP TABLE runtime_operation")
    conn.execute("PRAGMA user_version=4")
    conn.commit()
    conn.close()
    assert C.list_checkpoints(project) == (0, [])  # the change rows stay; the new tables are back, empty
    assert add(project, body="after upgrade")["checkpoint"]["status"] == "open"
    conn = sqlite3.connect(db)
    assert (
        conn.execute("PRAGMA user_version").fetchone()[0] == 9
    )  # through 6 (modes), 7 (the checkout table), 8 (folders) to 9 (the checkout's place)
    conn.close()


def test_racing_identical_retries_create_one_checkpoint(project):
    """Two processes send the same operation at once: one creates, the other replays (or waits and replays)."""
    if not hasattr(os, "fork"):  # pragma: no cover - Windows
        pytest.skip("forks two processes (POSIX only)")
    pids = []
    for _ in range(2):
        pid = os.fork()
        if pid == 0:  # child
            code = 0
            try:
                add(project, operation_id="race-1", expected_version=0)
            except BaseException:  # noqa: BLE001 - report through the exit code, never unwind into pytest
                code = 1
            os._exit(code)
        pids.append(pid)
    codes = [os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]) for pid in pids]
    assert codes == [0, 0]
    version, items = C.list_checkpoints(project)
    assert version == 1 and len(items) == 1
