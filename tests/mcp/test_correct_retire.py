"""Agents correct and retire memory: tombstone and supersede proposals through `propose_memory`, rejected content
visible and refused with the reviewer's reason, duplicate advice that an agent can follow, resident candidates
de-duplicated, and the review listings that show who proposed what, why and against which target."""

from __future__ import annotations

import json

import pytest

from memzoi.agent import tools
from memzoi.cli.main import main as memzoi
from memzoi.judge.analysis import analyze_path
from memzoi.lifecycle import apply_proposal, reject_proposal

from .conftest import FACT_ID, draft_args

PENDING = ".memzoi/proposals/pending"


def _s(project, client="agent"):
    return tools.Session(project, client, tools.RateLimit(50))


def _cli(capsys, *argv) -> tuple[int, str]:
    capsys.readouterr()
    code = memzoi(list(argv))
    return code, capsys.readouterr().out


def test_an_agent_proposes_a_tombstone_with_its_reason(project):
    res = tools.call(
        _s(project), "propose_memory", {"action": "tombstone", "target": FACT_ID, "reason": "the build moved to uv"}
    )
    assert not res.is_error, res.text
    data = analyze_path(project / res.data["path"]).document.data
    assert data["proposal"]["action"] == "tombstone" and data["proposal"]["target"] == FACT_ID
    assert data["proposal"]["reason"] == "the build moved to uv" and data["proposal"]["proposed_by"] == "agent"
    again = tools.call(_s(project), "propose_memory", {"action": "tombstone", "target": FACT_ID, "reason": "again"})
    assert (
        again.is_error and again.data["error"]["code"] == "duplicate_content" and res.data["proposal_id"] in again.text
    )
    applied = apply_proposal(project, res.data["proposal_id"], actor="reviewer")
    assert applied.status == "applied"
    from memzoi.agent.recall import get_memory

    assert get_memory(project, FACT_ID)["status"] == "tombstoned"


@pytest.mark.parametrize(
    "args,words",
    [
        ({"action": "tombstone", "reason": "old"}, "needs `target`"),
        ({"action": "tombstone", "target": FACT_ID, "reason": "old", "body": "x"}, "only `target` and `reason`"),
        ({"action": "create", "reason": "r", "title": "t"}, "needs body, type, lane, confidence"),
        ({**draft_args(), "target": FACT_ID}, "`target` is for action"),
    ],
)
def test_arguments_that_do_not_fit_the_action_are_refused(project, args, words):
    res = tools.call(_s(project), "propose_memory", args)
    assert res.is_error and res.data["error"]["code"] == "invalid_arguments" and words in res.text, res.text


def test_a_tombstone_of_a_missing_record_or_with_a_token_in_the_reason_is_refused(project):
    missing = tools.call(_s(project), "propose_memory", {"action": "tombstone", "target": "facts/nope", "reason": "x"})
    assert missing.is_error and missing.data["error"]["code"] == "target_missing"
    token = "ghp_" + "aB3dE5fG7hJ9kL1mN2pQ4" + "rS6tU8vW0xY2zA4"
    blocked = tools.call(
        _s(project), "propose_memory", {"action": "tombstone", "target": FACT_ID, "reason": f"leaked {token}"}
    )
    assert blocked.is_error and blocked.data["error"]["code"] == "blocked" and token not in blocked.text
    assert list((project / PENDING).iterdir()) == []


def test_a_supersede_goes_end_to_end_and_shows_its_target(project, capsys):
    res = tools.call(
        _s(project, "codex"),
        "propose_memory",
        {
            **draft_args(
                title="The build uses uv",
                body="Run the build with uv build; hatch is gone.",
                applies_to=["pyproject.toml"],
                source_ref="https://example.com/pr/7",
            ),
            "action": "supersede",
            "target": FACT_ID,
        },
    )
    assert not res.is_error, res.text
    pid = res.data["proposal_id"]
    assert pid == "mcp-the-build-uses-uv"
    code, out = _cli(capsys, "proposals", "show", pid, "--root", str(project), "--json")
    shown = json.loads(out)
    assert code == 0 and shown["target"] == FACT_ID and shown["action"] == "supersede"
    assert shown["proposed_by"] == "codex" and shown["proposed_via"] == "mcp"
    assert shown["reason"] == "fixed the same race twice" and shown["confidence"] == "0.8"
    assert shown["paths"] == ["pyproject.toml"] and shown["sources"] == [{"url": "https://example.com/pr/7"}]
    code, text = _cli(capsys, "proposals", "show", pid, "--root", str(project))
    for line in (
        "proposed by: codex",
        "via: mcp",
        f"target: {FACT_ID}",
        "reason: fixed the same race twice",
        "confidence: 0.8",
        "paths: pyproject.toml",
        "sources: https://example.com/pr/7",
    ):
        assert line in text, (line, text)
    code, text = _cli(capsys, "proposals", "list", "--root", str(project))
    assert f"target: {FACT_ID}" in text and "proposed by: codex" in text and "via: mcp" in text
    applied = apply_proposal(project, pid, actor="reviewer")
    from memzoi.agent.recall import get_memory

    assert get_memory(project, FACT_ID)["status"] == "superseded"
    assert get_memory(project, applied.details["record_id"])["body"].startswith("Run the build with uv build")


def test_a_rejected_proposal_is_visible_and_its_content_is_refused_with_the_reason(project):
    first = tools.call(_s(project), "propose_memory", draft_args())
    reject_proposal(
        project, first.data["proposal_id"], reason="we use the mutex in session.ts instead", actor="reviewer"
    )
    listed = tools.call(_s(project), "list_pending", {"include_resolved": True})
    (rejected,) = listed.data["rejected"]
    assert (
        rejected["id"] == first.data["proposal_id"] and rejected["reason"] == "we use the mutex in session.ts instead"
    )
    assert rejected["resolved_by"] == "reviewer" and len(rejected["fingerprint"]) == 64
    assert "rejected" not in tools.call(_s(project), "list_pending", {}).data
    again = tools.call(_s(project), "propose_memory", draft_args(title="Another title"))
    assert again.is_error and again.data["error"]["code"] == "duplicate_content"
    assert again.data["error"]["rejected"]["reason"] == "we use the mutex in session.ts instead"
    assert again.data["error"]["fingerprint"] == rejected["fingerprint"]
    assert "we use the mutex in session.ts instead" in again.text
    assert list((project / PENDING).iterdir()) == []


def test_duplicate_advice_fits_what_holds_the_content(project):
    first = tools.call(_s(project), "propose_memory", draft_args())
    pending = tools.call(_s(project), "propose_memory", draft_args(title="Again"))
    assert pending.data["error"]["existing_kind"] == "pending"
    assert "supersede" not in pending.text.split("wait for the decision")[0] and "wait for the decision" in pending.text
    assert pending.data["error"]["existing"] == first.data["proposal_id"]
    active = tools.call(
        _s(project), "propose_memory", draft_args(body="Run the build with hatch build; setup.py is gone.")
    )
    assert active.data["error"]["existing_kind"] == "record" and f"target `{FACT_ID}`" in active.text


def test_identical_resident_adds_from_two_clients_give_one_candidate(project, monkeypatch, tmp_path):
    monkeypatch.setenv("ZUNO_CONFIG_DIR", str(tmp_path / "zuno"))
    args = {
        "scope": "project",
        "action": "add",
        "content": "Run the tests with pytest -q.",
        "reason": "repo rule",
        "confidence": 0.9,
    }
    a = tools.call(_s(project, "claude-code"), "propose_resident_memory", args)
    b = tools.call(_s(project, "codex"), "propose_resident_memory", {**args, "reason": "same rule"})
    assert not a.is_error and not b.is_error, (a.text, b.text)
    assert a.data["id"] == b.data["id"] and b.data["inserted"] is False and "already pending" in b.text
    other = tools.call(_s(project, "codex"), "propose_resident_memory", {**args, "content": "Lint with ruff."})
    assert other.data["id"] != a.data["id"]
    pending = tools.call(_s(project), "list_pending", {}).data["resident_candidates"]
    assert sorted(c["id"] for c in pending) == sorted([a.data["id"], other.data["id"]])


async def test_over_the_sdk_client_tombstone_rejection_and_session_lane(project, home):
    from .test_stdio_e2e import connect

    async with connect(project, home, client="claude-code") as s:
        listed = {t.name: t for t in (await s.list_tools()).tools}
        props = listed["propose_memory"].input_schema["properties"]
        assert {"action", "target", "occurred_at", "started_at"} <= set(props)
        assert "include_resolved" in listed["list_pending"].input_schema["properties"]
        tomb = await s.call_tool(
            "propose_memory", {"action": "tombstone", "target": FACT_ID, "reason": "the build moved to uv"}
        )
        assert not tomb.is_error, tomb.content[0].text
        session = await s.call_tool(
            "propose_memory", draft_args(lane="session", type="fact", started_at="2026-07-01T09:00:00Z")
        )
        assert not session.is_error, session.content[0].text
        control = await s.call_tool("propose_memory", draft_args(body="Line\u0000two.", title="Other"))
        assert control.is_error and control.structured_content["error"]["code"] == "control_character"
    reject_proposal(
        project, session.structured_content["proposal_id"], reason="not worth a session memory", actor="reviewer"
    )
    async with connect(project, home, client="codex") as s:
        again = await s.call_tool("propose_memory", draft_args(lane="session", type="fact"))
        assert again.is_error
        assert again.structured_content["error"]["rejected"]["reason"] == "not worth a session memory"
        pending = await s.call_tool("list_pending", {"include_resolved": True})
        assert [p["action"] for p in pending.structured_content["proposals"]] == ["tombstone"]
        assert [r["reason"] for r in pending.structured_content["rejected"]] == ["not worth a session memory"]


async def test_over_the_sdk_client_two_clients_one_resident_candidate_and_a_supersede(project, home, tmp_path, capsys):
    from .test_stdio_e2e import connect

    args = {
        "scope": "project",
        "action": "add",
        "content": "Run the tests with pytest -q.",
        "reason": "repo rule",
        "confidence": 0.9,
    }
    zuno = {"ZUNO_CONFIG_DIR": str(tmp_path / "zuno")}
    async with (
        connect(project, home, client="claude-code", env=zuno) as a,
        connect(project, home, client="codex", env=zuno) as b,
    ):
        first = await a.call_tool("propose_resident_memory", args)
        second = await b.call_tool("propose_resident_memory", {**args, "reason": "asked twice"})
        assert not first.is_error and not second.is_error, (first.content[0].text, second.content[0].text)
        assert first.structured_content["id"] == second.structured_content["id"]
        assert second.structured_content["inserted"] is False
        sup = await b.call_tool(
            "propose_memory",
            {
                **draft_args(title="The build uses uv", body="Run the build with uv build."),
                "action": "supersede",
                "target": FACT_ID,
            },
        )
        assert not sup.is_error, sup.content[0].text
        listed = await a.call_tool("list_pending", {})
        (row,) = listed.structured_content["proposals"]
        assert (row["action"], row["target"], row["proposed_by"], row["proposed_via"]) == (
            "supersede",
            FACT_ID,
            "codex",
            "mcp",
        )
        assert len(listed.structured_content["resident_candidates"]) == 1


def test_a_redacted_receipt_is_listed_without_a_fingerprint(project):
    from .. import builders

    builders.write(
        project,
        builders.packet_path("private-note"),
        builders.packet("private-note", sensitivity="local-only", body="Only for me."),
    )
    reject_proposal(project, "private-note", reason="not repo-safe", actor="reviewer")
    (entry,) = tools.call(_s(project), "list_pending", {"include_resolved": True}).data["rejected"]
    assert entry["redacted"] is True and entry["fingerprint"] is None and entry["reason"] == "not repo-safe"
    assert "private-note" not in str(entry)
