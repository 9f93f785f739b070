"""What an agent's proposal may hold: retention facts for the session and episodic lanes, no control characters
in any text field (and `memzoi check` reporting them in any file), the agent channel's size cap, and a rate-limit
message that says refusals count."""

from __future__ import annotations

import json

import pytest

from memzoi.agent import tools
from memzoi.cli.main import main as memzoi
from memzoi.judge.analysis import analyze_path
from memzoi.ledger import Refusal
from memzoi.lifecycle.propose import Blocked, Draft, propose_packet

from .. import builders
from .conftest import draft_args

PENDING = ".memzoi/proposals/pending"


def _draft(**over) -> Draft:
    return Draft(**{k: v for k, v in draft_args(**over).items() if k != "destination"})


def _call(project, limit=20, **over) -> tools.ToolResult:
    return tools.call(tools.Session(project, "agent", tools.RateLimit(limit)), "propose_memory", draft_args(**over))


# -- retention per lane ----------------------------------------------------------------------------------------


@pytest.mark.parametrize("lane,fact", [("session", "started_at"), ("episodic", "occurred_at")])
def test_session_and_episodic_proposals_carry_memzois_retention_fact(project, lane, fact):
    res = _call(project, lane=lane, type="fact")
    assert not res.is_error, res.text
    analysis = analyze_path(project / res.data["path"])
    assert [f.code for f in analysis.findings] == [], analysis.findings
    retention = analysis.document.data["retention"]
    assert list(retention) == [fact] and retention[fact] == analysis.document.data["timestamp"]
    given = _call(
        project, lane=lane, type="fact", body="Another event worth keeping.", **{fact: "2026-07-01T12:00:00+02:00"}
    )
    assert not given.is_error, given.text
    assert analyze_path(project / given.data["path"]).document.data["retention"] == {fact: "2026-07-01T12:00:00+02:00"}


@pytest.mark.parametrize(
    "over,words",
    [
        ({"lane": "semantic", "occurred_at": "2026-07-01T12:00:00Z"}, "only for the episodic lane"),
        ({"lane": "episodic", "started_at": "2026-07-01T12:00:00Z"}, "only for the session lane"),
        ({"lane": "episodic", "occurred_at": "yesterday"}, "RFC 3339"),
    ],
)
def test_a_retention_fact_the_lane_forbids_is_refused_naming_the_rule(project, over, words):
    res = _call(project, **over)
    assert res.is_error and res.data["error"]["code"] == "invalid_value" and words in res.text
    assert "secret" not in res.text
    assert list((project / PENDING).iterdir()) == []


def test_a_blocked_packet_that_is_not_about_content_does_not_talk_about_secrets():
    assert "secret" not in Blocked(["invalid_retention"]).message.lower()
    assert "valid Memzoi file" in Blocked(["invalid_retention"]).message
    assert "Secrets" in Blocked(["credential_token"]).message


# -- control characters ----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "field,value",
    [
        ("title", "Deploy\x07notes"),
        ("body", "Line one.\x00Line two."),
        ("body", "Erase\x1b[2K this"),
        ("reason", "because\x0bso"),
        ("source_ref", "PR\x0c12"),
        ("title", "Two\tcolumns"),
        ("tags", ["build\x01"]),
        ("applies_to", ["src/\x02auth"]),
    ],
)
def test_control_characters_are_refused_in_every_text_field(project, field, value):
    with pytest.raises(Refusal) as info:
        propose_packet(project, _draft(**{field: value}), actor="agent")
    assert info.value.code == "control_character" and field in info.value.message
    assert list((project / PENDING).iterdir()) == []


def test_tab_and_line_breaks_stay_allowed_in_the_body(project):
    result = propose_packet(project, _draft(body="Columns:\tname\tvalue\r\nSecond line.\n"), actor="agent")
    assert [f.code for f in analyze_path(project / result.details["proposal_path"]).findings] == []


def test_memzoi_check_reports_control_characters_in_any_record_or_packet(project, capsys):
    builders.write(project, builders.record_path("facts/bell"), builders.record("facts/bell", body="Ring\x07 it."))
    builders.write(
        project,
        builders.packet_path("hand-written"),
        builders.packet("hand-written", title="Nul\x00title", body="Clean body."),
    )
    builders.write(project, builders.record_path("facts/tabs"), builders.record("facts/tabs", body="a\tb\r\nc"))
    capsys.readouterr()
    code = memzoi(["check", str(project), "--format", "json"])
    out = json.loads(capsys.readouterr().out)
    found = {(f["path"].rsplit("/", 1)[-1], f["code"]) for f in out["findings"] if f["severity"] == "error"}
    assert code == 1
    assert ("bell.md", "invisible_character") in found and ("hand-written.md", "invisible_character") in found
    assert not any(name == "tabs.md" for name, _ in found), found
    messages = [f["message"] for f in out["findings"] if f["code"] == "invisible_character"]
    assert any("control character (u+0007)" in m.casefold() for m in messages), messages


# -- the agent size cap and the rate limit ---------------------------------------------------------------------


def test_the_body_cap_defaults_to_32_kib_and_is_configurable(project):
    big = "A durable fact, stated at length. " * 1000  # 34 000 bytes
    res = _call(project, body=big)
    assert res.is_error and res.data["error"]["code"] == "candidate_too_large"
    assert "32768" in res.text and "max_body_bytes" in res.text
    (project / ".memzoi" / "config.toml").write_text("[mcp]\nmax_body_bytes = 65536\n", encoding="utf-8")
    assert not _call(project, body=big).is_error
    (project / ".memzoi" / "config.toml").write_text("[mcp]\nmax_body_bytes = 100\n", encoding="utf-8")
    small = _call(
        project,
        body="A second durable fact, and this one is a little over one hundred bytes long when it is encoded as UTF-8.",
    )
    assert small.is_error and small.data["error"]["code"] == "candidate_too_large"
    (project / ".memzoi" / "config.toml").write_text("[mcp]\nmax_body_bytes = 0\n", encoding="utf-8")
    assert _call(project, body="Short.").data["error"]["code"] == "invalid_config"


def test_the_rate_limit_message_says_refused_proposals_count(project):
    s = tools.Session(project, "agent", tools.RateLimit(1))
    refused = tools.call(s, "propose_memory", draft_args(body="Line one.\x00Line two."))
    assert refused.data["error"]["code"] == "control_character"
    limited = tools.call(s, "propose_memory", draft_args())
    assert limited.data["error"]["code"] == "rate_limited" and "refused proposals included" in limited.text
