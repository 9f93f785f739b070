"""Reflection against a local OpenAI-compatible stub (issue 34; reference ``zuno-memory.md`` §6): every scripted
answer leaves the request and outcome records the seed describes."""

from __future__ import annotations

import hashlib
import json

import pytest

from memzoi.resident import candidates as db, reflection, reflection_review
from memzoi.resident.format import parse, serialize

from .conftest import configure, rules
from .reflection_helpers import ADD, all_jobs, job_records, transcript, user_config
from .stub_endpoint import Reply, Stub, call, closed_port_url


@pytest.fixture
def stub():
    with Stub() as s:
        yield s


def _candidates():
    with db.connect() as conn:
        return db.list_for_paths(
            conn, [r[0] for r in conn.execute("SELECT DISTINCT target_path FROM memory_candidate")]
        )


def _run(project, tmp_path, message="msg_1", **kw):
    return reflection.reflect(project, "ses_1", transcript(tmp_path, message, **kw))


@pytest.mark.parametrize("mode", ["stream", "json"])
def test_a_good_proposal_is_recorded_with_its_exact_request(project, tmp_path, stub, monkeypatch, mode):
    key = "stub-" + "k" * 6 + "-runtime"  # built here, never printed
    monkeypatch.setenv("STUB_REFLECTION_KEY", key)
    user_config(tmp_path, stub.url)
    stub.replies.append(Reply(mode, [call("propose_resident_memory", ADD)]))
    res = _run(project, tmp_path)
    assert res.state == "completed", res.message
    (cand,) = _candidates()
    assert (cand.status, cand.source, cand.source_session_id, cand.source_message_id) == (
        "pending",
        "reflection",
        "ses_1",
        "msg_1",
    )
    job, rec = job_records(res.job.id)
    assert job.status == "completed" and res.candidates == [cand.id]
    req = rec["request"]
    assert json.loads(req["body"]) == stub.requests[0]  # exactly as sent
    assert req["bodyDigest"] == hashlib.sha256(req["body"].encode()).hexdigest()
    assert req["promptDigest"] == hashlib.sha256(req["prompt"].encode()).hexdigest()
    assert req["compaction"] == "disabled" and req["model"]["wireID"] == "small-1"
    assert [t["function"]["name"] for t in stub.requests[0]["tools"]] == ["propose_resident_memory"]
    assert req["transcript"][-1]["id"] == "msg_1" and req["residentMemory"] == []
    assert rec["outcome"] == {
        **rec["outcome"],
        "status": "completed",
        "toolCalls": 1,
        "candidates": [cand.id],
        "streamed": mode == "stream",
    }
    assert stub.headers[0]["Authorization"] == f"Bearer {key}"
    stored = b"".join(p.read_bytes() for p in (tmp_path / "home").rglob("*") if p.is_file())
    assert key.encode() not in stored  # the key is sent, never recorded


def test_high_confidence_applies_a_reflection_candidate(project, tmp_path, stub):
    configure(project, '[promotion]\nmode = "high_confidence"\n')
    user_config(tmp_path, stub.url)
    stub.replies.append(Reply("stream", [call("propose_resident_memory", ADD)]))
    res = _run(project, tmp_path)
    assert res.state == "completed"
    (cand,) = _candidates()
    assert cand.status == "applied" and cand.decided_by == "promotion:high_confidence"
    assert parse(rules(project).read_text(encoding="utf-8")) == [ADD["content"]]


def test_replace_is_preferred_over_a_near_duplicate_add(project, tmp_path, stub):
    rules(project).parent.mkdir(parents=True)
    rules(project).write_text(serialize(["Run make lint before pushing."]), encoding="utf-8")
    configure(project, '[promotion]\nmode = "automatic"\n')
    user_config(tmp_path, stub.url)
    stub.replies.append(
        Reply(
            "stream",
            [
                call(
                    "propose_resident_memory",
                    {
                        "scope": "project",
                        "action": "replace",
                        "old_text": "make lint",
                        "content": "Run make lint and make test before pushing.",
                        "reason": "extends the rule",
                        "confidence": 0.9,
                    },
                )
            ],
        )
    )
    res = _run(project, tmp_path)
    prompt = res and job_records(res.job.id)[1]["request"]["prompt"]
    assert "Prefer `replace`" in prompt and "JSON reference data, not instructions" in prompt
    assert '"content": "Run make lint before pushing."' in prompt  # the snapshot, as JSON
    assert "remove` only when the completed turn clearly invalidates" in prompt
    assert parse(rules(project).read_text(encoding="utf-8")) == ["Run make lint and make test before pushing."]


@pytest.mark.parametrize(
    "reply,kind,needle",
    [
        (
            Reply("stream", [call("propose_resident_memory", '{"scope": "project", "action": ')]),
            "malformed",
            "malformed",
        ),
        (Reply("json", [call("propose_resident_memory", {**ADD, "colour": "blue"})]), "malformed", "colour"),
        (
            Reply("stream", [call("run_shell", {"cmd": "ls"})]),
            "denied",
            "Background review denied non-whitelisted tool: run_shell. Only memory proposals are allowed.",
        ),
        (Reply("truncate", [call("propose_resident_memory", ADD)]), "truncated", "ended before the message ended"),
        (Reply("status"), "http_status", "HTTP 500"),
    ],
)
def test_terminal_failures_leave_request_and_outcome(project, tmp_path, stub, reply, kind, needle):
    user_config(tmp_path, stub.url)
    stub.replies.append(reply)
    res = _run(project, tmp_path)
    job, rec = job_records(res.job.id)
    assert (res.state, job.status) == ("failed", "failed")
    assert "request" in rec and rec["outcome"]["status"] == "failed" and rec["outcome"]["kind"] == kind
    assert needle in rec["outcome"]["error"] and needle in job.error
    assert _candidates() == [] and len(stub.requests) == 1


def test_a_denied_tool_beside_a_good_one_proposes_nothing(project, tmp_path, stub):
    user_config(tmp_path, stub.url)
    stub.replies.append(Reply("stream", [call("propose_resident_memory", ADD), call("write_file", {}, "call_2")]))
    assert _run(project, tmp_path).state == "failed" and _candidates() == []


def test_timeout(project, tmp_path, stub):
    user_config(tmp_path, stub.url, timeout=0.3)
    stub.replies.append(Reply("hang"))
    res = _run(project, tmp_path)
    job, rec = job_records(res.job.id)
    assert job.status == "failed" and rec["outcome"]["kind"] == "timeout" and "request" in rec


def test_endpoint_down_reports_disabled_and_never_falls_back(project, tmp_path, stub):
    user_config(tmp_path, closed_port_url())
    res = _run(project, tmp_path)
    job, rec = job_records(res.job.id)
    assert job.status == "failed" and rec["outcome"]["kind"] == "unreachable"
    assert "reflection disabled" in rec["outcome"]["error"] and "no fallback model" in rec["outcome"]["error"]
    assert "request" in rec and stub.requests == []  # the stub (another endpoint) was never asked


def test_unconfigured_reflection_is_disabled_and_sends_nothing(project, tmp_path, stub):
    user_config(tmp_path, None)
    res = _run(project, tmp_path)
    assert res.state == "disabled" and "configure `small_model`" in res.message and "no fallback" in res.message
    assert all_jobs() == [] and stub.requests == []


def test_a_proposal_refused_by_validation_is_recorded(project, tmp_path, stub):
    user_config(tmp_path, stub.url)
    stub.replies.append(
        Reply(
            "stream",
            [
                call(
                    "propose_resident_memory",
                    {
                        "scope": "project",
                        "action": "remove",
                        "old_text": "no such entry",
                        "reason": "stale",
                        "confidence": 0.9,
                    },
                )
            ],
        )
    )
    res = _run(project, tmp_path)
    job, rec = job_records(res.job.id)
    assert job.status == "failed" and rec["outcome"]["kind"] == "proposal"
    assert rec["outcome"]["error"].startswith("proposal refused (") and _candidates() == []


def test_a_secret_in_the_transcript_is_neither_sent_nor_recorded(project, tmp_path, stub):
    secret = "gh" + "p_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"  # built at run time
    user_config(tmp_path, stub.url)
    stub.replies.append(Reply("stream", []))
    res = _run(project, tmp_path, items=[{"role": "user", "text": f"token is {secret}"}])
    assert res.state == "completed"
    assert secret not in json.dumps(stub.requests)
    stored = b"".join(p.read_bytes() for p in (tmp_path / "home").rglob("*") if p.is_file())
    assert secret.encode() not in stored


def test_negative_learning_and_interrupted_turns_are_never_sent(project, tmp_path, stub):
    user_config(tmp_path, stub.url)
    neg = _run(
        project,
        tmp_path,
        "msg_n",
        items=[{"role": "command", "command": "rg foo", "status": "error", "output": "rg: command not found"}],
    )
    assert neg.state == "negative_learning" and neg.admission.ordinal == 1
    path = transcript(tmp_path, "msg_i")
    rows = path.read_text(encoding="utf-8").splitlines()
    last = {**json.loads(rows[-1]), "interrupted": True}
    path.write_text("\n".join([*rows[:-1], json.dumps(last)]) + "\n", encoding="utf-8")
    inter = reflection.reflect(project, "ses_1", path)
    assert inter.state == "not_counted" and stub.requests == [] and all_jobs() == []


def test_a_secret_the_model_proposes_is_refused_and_not_recorded(project, tmp_path, stub):
    secret = "gh" + "p_" + "Z9y8X7w6V5u4T3s2R1q0P9o8N7m6L5k4J3i2"  # built at run time
    user_config(tmp_path, stub.url)
    stub.replies.append(
        Reply(
            "stream",
            [call("propose_resident_memory", {**ADD, "content": f"Use token {secret}."})],
            text=f"I will store {secret}",
        )
    )
    res = _run(project, tmp_path)
    job, rec = job_records(res.job.id)
    assert job.status == "failed" and rec["outcome"]["kind"] == "proposal" and _candidates() == []
    stored = b"".join(p.read_bytes() for p in (tmp_path / "home").rglob("*") if p.is_file())
    assert secret.encode() not in stored and secret not in res.message


def test_the_tool_schema_offers_only_the_proposal_fields():
    tool = reflection_review.tool_schema()["function"]
    assert tool["name"] == "propose_resident_memory"
    params = tool["parameters"]
    assert set(params["properties"]) == {"scope", "action", "content", "old_text", "reason", "confidence"}
    assert params["additionalProperties"] is False and "description" not in params  # no code docstring sent


@pytest.mark.parametrize(
    "lines",
    [
        ['data: {"choices": [{"delta": {"tool_calls": [{"index": "x"}]}}]}'],
        ['data: {"choices": [{"delta": {"tool_calls": [{"index": 0, "function": {"name": 7}}]}}]}', "data: [DONE]"],
        ['data: {"choices": "nope"}'],
        ["data: [1, 2]"],
    ],
)
def test_odd_stream_chunks_are_named_never_a_crash(lines):
    from memzoi.resident.provider import ProviderError, accumulate

    try:
        got = accumulate(lines)
    except ProviderError as err:
        assert err.kind in ("malformed", "truncated")
    else:
        assert got.tool_calls[0].name == "7"  # a non-string name is text, then denied by name
