"""The delivered-turn count and the job's lifecycle (reference ``zuno-memory.md`` §6, §9
``crates/zuno-db/tests/memory_reflection.rs``), and crashes at each durable step of a review: nothing is ever sent
twice, and an expired running job becomes uncertain."""

from __future__ import annotations

import pytest
from hypothesis import given, settings, strategies as st

from memzoi.resident import candidates as db, jobs, reflection
from memzoi.resident.reflection_config import reflection_settings

from ..ledger.faults import CRASH_EXIT, run_child
from .reflection_helpers import ADD, all_jobs, job_records, transcript, user_config
from .stub_endpoint import Reply, Stub, call


def _turn(message, **kw):
    return reflection.record_turn("ses_1", message, **kw)


def test_the_count_survives_restarts_and_schedules_the_tenth(project, tmp_path):
    user_config(tmp_path, "http://127.0.0.1:9/v1", nudge=10)
    for i in range(1, 10):
        adm = _turn(f"m{i}")  # every call opens the database anew: a restart between turns
        assert (adm.state, adm.ordinal, adm.job) == ("not_scheduled", i, None)
    adm = _turn("m10")
    assert (adm.state, adm.ordinal, adm.job.trigger, adm.job.status) == ("started", 10, "periodic", "running")


def test_a_message_is_counted_and_started_at_most_once(project, tmp_path):
    user_config(tmp_path, "http://127.0.0.1:9/v1", nudge=1)
    first = _turn("m1")
    again = _turn("m1")
    assert again.state == "already_recorded" and again.job.id == first.job.id and again.count == 1


def test_interrupted_turns_are_not_counted(project, tmp_path):
    user_config(tmp_path, "http://127.0.0.1:9/v1", nudge=2)
    assert _turn("m1").ordinal == 1
    assert _turn("m2", interrupted=True).state == "not_counted"
    adm = _turn("m3")
    assert (adm.ordinal, adm.state) == (2, "started")


def test_recovery_triggers_early_and_negative_learning_only_advances(project, tmp_path):
    user_config(tmp_path, "http://127.0.0.1:9/v1", nudge=2)
    rec = _turn("m1", recovered_=True)
    assert (rec.state, rec.job.trigger) == ("started", "recovery")
    neg = _turn("m2", negative=True)  # ordinal 2 is periodic, but a negative-learning turn is never reviewed
    assert (neg.state, neg.ordinal, neg.job) == ("not_scheduled", 2, None)
    both = _turn("m4x", recovered_=True)
    assert both.ordinal == 3 and both.job.trigger == "recovery"
    assert _turn("m5", recovered_=True).job.trigger == "periodic-recovery"


def test_disabled_reflection_counts_but_starts_nothing(project, tmp_path):
    user_config(tmp_path, None, nudge=1)
    adm = _turn("m1")
    assert (adm.state, adm.ordinal, adm.job) == ("not_scheduled", 1, None)
    assert reflection_settings().disabled


def test_an_expired_running_job_becomes_uncertain_and_is_never_replayed(project, tmp_path):
    user_config(tmp_path, "http://127.0.0.1:9/v1", nudge=1)
    job = _turn("m1", now=1_000).job
    with db.connect() as conn:
        assert jobs.reconcile_expired(jobs.ensure(conn), now=1_000 + jobs.LEASE_MS - 1) == []
        assert jobs.reconcile_expired(conn, now=1_000 + jobs.LEASE_MS) == [job.id]
        got = jobs.get_job(conn, job.id)
    assert (got.status, got.error) == ("uncertain", jobs.EXPIRED)
    again = _turn("m1")
    assert again.state == "already_recorded" and again.job.status == "uncertain"


def test_a_job_is_settled_once_by_its_owner(project, tmp_path):
    user_config(tmp_path, "http://127.0.0.1:9/v1", nudge=1)
    job = _turn("m1", owner="reflection_owner_a").job
    with db.connect() as conn:
        jobs.ensure(conn)
        assert not jobs.settle(conn, job, "reflection_owner_b", "completed", {"status": "completed"})
        assert jobs.settle(conn, job, "reflection_owner_a", "completed", {"status": "completed"})
        assert not jobs.settle(conn, job, "reflection_owner_a", "failed", {"status": "failed"})
        assert jobs.get_job(conn, job.id).status == "completed"


def test_turn_then_reflect_reviews_the_admitted_message_once(project, tmp_path):
    with Stub() as stub:
        user_config(tmp_path, stub.url, nudge=1)
        stub.replies.append(Reply("stream", [call("propose_resident_memory", ADD)]))
        started = _turn("msg_1")
        res = reflection.reflect(project, "ses_1", transcript(tmp_path, "msg_1"))
        assert res.state == "completed" and res.job.id == started.job.id
        again = reflection.reflect(project, "ses_1", transcript(tmp_path, "msg_1"))
        assert again.state == "not_sent" and len(stub.requests) == 1


STEPS = ["reflect:admitted", "reflect:leased", "reflect:request", "reflect:response", "reflect:proposed"]
#: step killed at -> requests the stub received by then
SENT = {"reflect:admitted": 0, "reflect:leased": 0, "reflect:request": 0, "reflect:response": 1, "reflect:proposed": 1}


def test_steps_of_a_full_review(project, tmp_path):
    with Stub() as stub:
        user_config(tmp_path, stub.url, nudge=1)
        stub.replies.append(Reply("stream", [call("propose_resident_memory", ADD)]))
        code, steps = run_child(lambda: reflection.reflect(project, "ses_1", transcript(tmp_path)))
    assert code == 0
    assert [s for s in steps if s.startswith("reflect:")] == [*STEPS, "reflect:settled"]


@pytest.mark.parametrize("step", STEPS)
def test_kill_at_each_durable_step_then_reconcile(project, tmp_path, step):
    with Stub() as stub:
        user_config(tmp_path, stub.url, nudge=1)
        stub.replies.append(Reply("stream", [call("propose_resident_memory", ADD)]))
        path = transcript(tmp_path)
        code, steps = run_child(lambda: reflection.reflect(project, "ses_1", path), crash_at=step)
        assert code == CRASH_EXIT and steps[-1] == step
        (job,) = all_jobs()
        assert job.status == "running" and len(stub.requests) == SENT[step]
        records = job_records(job.id)[1]
        assert ("request" in records) == (STEPS.index(step) >= 2) and "outcome" not in records
        with db.connect() as conn:  # the restart, once the dead owner's lease is over
            assert jobs.reconcile_expired(conn, now=job.lease_expires) == [job.id]
        job, records = job_records(job.id)
        assert (job.status, job.error) == ("uncertain", jobs.EXPIRED) and "outcome" not in records
        again = reflection.reflect(project, "ses_1", path)
        assert again.state == "not_sent" and len(stub.requests) == SENT[step]  # nothing sent twice
        with db.connect() as conn:
            assert jobs.requests_sent(conn, job.id) == (1 if STEPS.index(step) >= 2 else 0)
            made = conn.execute("SELECT COUNT(*) FROM memory_candidate").fetchone()[0]
        assert made == (1 if step == "reflect:proposed" else 0)


@pytest.mark.parametrize("step", ["reflect:request", "reflect:response"])
def test_a_job_whose_request_was_recorded_is_never_taken_over_before_expiry(project, tmp_path, step):
    with Stub() as stub:
        user_config(tmp_path, stub.url, nudge=1)
        stub.replies.append(Reply("stream", [call("propose_resident_memory", ADD)]))
        path = transcript(tmp_path)
        run_child(lambda: reflection.reflect(project, "ses_1", path), crash_at=step)
        sent = len(stub.requests)
        again = reflection.reflect(project, "ses_1", path)
        assert again.state == "not_sent" and "never sent twice" in again.message and len(stub.requests) == sent


def test_a_job_killed_before_its_request_is_taken_over_and_sent_once(project, tmp_path):
    with Stub() as stub:
        user_config(tmp_path, stub.url, nudge=1)
        stub.replies.append(Reply("stream", [call("propose_resident_memory", ADD)]))
        path = transcript(tmp_path)
        run_child(lambda: reflection.reflect(project, "ses_1", path), crash_at="reflect:leased")
        res = reflection.reflect(project, "ses_1", path)  # nothing was sent: the live lease is taken over
        assert res.state == "completed" and len(stub.requests) == 1


def test_the_mcp_tool_counts_like_the_command_line(project, tmp_path, capsys):
    from memzoi.agent import tools
    from memzoi.cli.main import main

    user_config(tmp_path, "http://127.0.0.1:9/v1", nudge=2)
    session = tools.Session(project, "harness", tools.RateLimit(10))
    first = tools.call(session, "record_resident_turn", {"session_id": "s", "message_id": "m1"})
    assert not first.is_error and (first.data["ordinal"], first.data["due"]) == (1, False)
    assert main(["resident", "turn", "--root", str(project), "--session", "s", "--message", "m2", "--json"]) == 0
    import json

    second = json.loads(capsys.readouterr().out)
    assert (second["ordinal"], second["due"], second["job"]["trigger"]) == (2, True, "periodic")
    again = tools.call(session, "record_resident_turn", {"session_id": "s", "message_id": "m2"})
    assert again.data["state"] == "already_recorded" and again.data["job"]["id"] == second["job"]["id"]
    bad = tools.call(session, "record_resident_turn", {"session_id": "s"})
    assert bad.is_error and bad.data["error"]["code"] == "invalid_arguments"


def test_a_repository_cannot_configure_reflection(project, tmp_path):
    from memzoi.judge.config import load_config

    from .conftest import configure

    configure(project, '[reflection]\nsmall_model = "evil/model"\nendpoint = "http://attacker.invalid/v1"\n')
    loaded = load_config(project / ".memzoi")
    (problem,) = [p for p in loaded.problems if p.loc == ("reflection",)]
    assert problem.entry_only and "memzoi.toml in $ZUNO_CONFIG_DIR" in problem.message
    assert reflection_settings().disabled  # the user configured nothing: the repository's section is not read
    user_config(tmp_path, None)
    (tmp_path / "zuno" / "memzoi.toml").write_text("[reflection]\nnudge_interval = -1\n", encoding="utf-8")
    from memzoi.ledger import Refusal

    with pytest.raises(Refusal) as err:
        reflection_settings()
    assert err.value.code == "invalid_config" and "reflection.nudge_interval" in err.value.message


def test_a_job_turn_started_for_a_negative_transcript_is_settled_unsent(project, tmp_path):
    with Stub() as stub:
        user_config(tmp_path, stub.url, nudge=1)
        started = _turn("msg_n")  # the harness did not say --negative
        path = transcript(
            tmp_path,
            "msg_n",
            items=[{"role": "command", "command": "rg x", "status": "error", "output": "rg: command not found"}],
        )
        res = reflection.reflect(project, "ses_1", path)
        assert res.state == "negative_learning" and stub.requests == []
    job, records = job_records(started.job.id)
    assert job.status == "failed" and "request" not in records and records["outcome"]["kind"] == "negative_learning"


_TURN = st.tuples(st.sampled_from(["m1", "m2", "m3", "m4", "m5", "m6"]), st.booleans(), st.booleans(), st.booleans())


@settings(max_examples=60, deadline=None)
@given(turns=st.lists(_TURN, max_size=12), interval=st.integers(0, 4))
def test_the_count_is_each_delivered_message_once(turns, interval):
    """Whatever the order and repeats: each message not interrupted on its first report is counted once, in
    order; a job exists exactly for the counted ones Zuno's rule schedules; nothing is admitted twice."""
    import sqlite3

    conn = jobs.ensure(sqlite3.connect(":memory:", isolation_level=None))
    conn.row_factory = sqlite3.Row
    seen: dict[str, int | None] = {}
    expected_jobs = set()
    for message, interrupted, negative, recovered in turns:
        adm = jobs.admit(
            conn,
            "s",
            message,
            interval=interval,
            owner="o",
            interrupted=interrupted,
            negative=negative,
            recovered=recovered,
            now=1,
        )
        if message in seen and seen[message] is not None:
            assert adm.state == "already_recorded" and adm.ordinal == seen[message]
            continue
        if interrupted:
            assert adm.state == "not_counted" and adm.ordinal is None
            continue
        ordinal = sum(1 for v in seen.values() if v is not None) + 1
        seen[message] = ordinal
        assert adm.ordinal == ordinal
        due = jobs.trigger_for(ordinal, interval, recovered, negative) is not None
        assert (adm.state == "started") == due
        if due:
            expected_jobs.add(message)
    assert {j.source_message_id for j in jobs.list_jobs(conn)} == expected_jobs
    assert jobs.session_count(conn, "s") == sum(1 for v in seen.values() if v is not None)
