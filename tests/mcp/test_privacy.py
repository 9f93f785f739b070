"""Privacy of the agent channel: a repository cannot steer the user's global resident file, a bad section of
`.memzoi/config.toml` costs only that section, and e-mail addresses and phone numbers in prose are
`private_personal_data` warnings (never on example domains, placeholders or the Memzoi corpus)."""

from __future__ import annotations

import json

import pytest

from memzoi.agent import tools
from memzoi.base.findings import Severity
from memzoi.cli.main import main as memzoi
from memzoi.judge.analysis import analyze_path, analyze_text
from memzoi.judge.config import clear_cache
from memzoi.resident.scope import resident_file

from .. import builders
from ..conftest import corpus_or_skip
from .conftest import draft_args


def _config(project, text):
    (project / ".memzoi" / "config.toml").write_text(text, encoding="utf-8")
    clear_cache()


def _s(project):
    return tools.Session(project, "agent", tools.RateLimit(50))


def _resident(project, **over):
    args = {
        "scope": "project",
        "action": "add",
        "content": "Run the tests with pytest -q.",
        "reason": "repo rule",
        "confidence": 0.9,
        **over,
    }
    return tools.call(_s(project), "propose_resident_memory", args)


# -- the user's global resident file ---------------------------------------------------------------------------


def test_a_repository_cannot_move_or_recap_the_users_global_file(project, monkeypatch, tmp_path, capsys):
    zuno = tmp_path / "zuno"
    monkeypatch.setenv("ZUNO_CONFIG_DIR", str(zuno))
    _config(
        project,
        f'[resident]\nglobal_path = "{project}/MEMORY.md"\nglobal_char_limit = 99999\nproject_char_limit = 4000\n',
    )
    file = resident_file(project, "global")
    assert file.path == zuno / "memory" / "MEMORY.md" and file.cap == 2200
    assert resident_file(project, "project").cap == 4000  # the rest of [resident] applies
    res = _resident(project, scope="global", content="Prefer small commits.")
    assert not res.is_error, res.text
    assert res.data["target_path"] == str(zuno / "memory" / "MEMORY.md")
    capsys.readouterr()
    code = memzoi(["check", str(project / ".memzoi" / "config.toml"), "--format", "json"])
    found = json.loads(capsys.readouterr().out)["findings"]
    messages = [f["message"] for f in found if f["code"] == "invalid_config"]
    assert code == 1 and len(messages) == 2 and all("only the user's own configuration" in m for m in messages)


def test_only_the_users_own_configuration_moves_the_global_file(project, monkeypatch, tmp_path):
    zuno = tmp_path / "zuno"
    zuno.mkdir()
    monkeypatch.setenv("ZUNO_CONFIG_DIR", str(zuno))
    (zuno / "memzoi.toml").write_text(
        f'[resident]\nglobal_path = "{tmp_path}/mine/MEMORY.md"\nglobal_char_limit = 500\n', encoding="utf-8"
    )
    file = resident_file(project, "global")
    assert file.path == tmp_path / "mine" / "MEMORY.md" and file.cap == 500


# -- a bad section costs only itself ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        '[rules]\ndisable = ["x"]\n',
        '[rules]\nseverity = { nope = "error" }\n',
        "[mcp]\nproposals_per_minute = -3\n",
        '[safety]\nunsigned_jwt = "loud"\n',
    ],
)
def test_a_bad_other_section_leaves_resident_proposals_and_reads_alone(project, monkeypatch, tmp_path, text):
    monkeypatch.setenv("ZUNO_CONFIG_DIR", str(tmp_path / "zuno"))
    _config(project, text)
    if "[mcp]" not in text:
        res = _resident(project)
        assert not res.is_error, res.text
        assert not tools.call(_s(project), "propose_memory", draft_args()).is_error
    assert not tools.call(_s(project), "list_pending", {}).is_error
    assert not tools.call(_s(project), "get_resident_memory", {}).is_error


def test_a_bad_resident_or_promotion_section_still_refuses_resident_proposals(project, monkeypatch, tmp_path):
    monkeypatch.setenv("ZUNO_CONFIG_DIR", str(tmp_path / "zuno"))
    _config(project, '[promotion]\nmode = "yolo"\n')
    res = _resident(project)
    assert res.is_error and res.data["error"]["code"] == "invalid_config" and "promotion.mode" in res.text
    _config(project, '[resident]\nproject_path = "../x.md"\n')
    assert _resident(project).data["error"]["code"] == "invalid_config"


# -- e-mail addresses and phone numbers in prose ---------------------------------------------------------------


def _codes(text: str) -> list[tuple[str, Severity]]:
    return [(f.code, f.severity) for f in analyze_text(text, ".memzoi/records/facts/x.md").findings]


@pytest.mark.parametrize(
    "body",
    [
        "Ask jane.smith@acme-corp.io before changing the schema.",
        "The on-call phone is +44 20 7946 0958.",
        "Call (415) 867-5309 when the deploy fails.",
        "Ping 415-867-5309 for access.",
        "The owner is Jane Smith <jsmith@widgets.co.uk>.",
    ],
)
def test_contacts_in_prose_are_private_personal_data_warnings(body):
    text = builders.record("facts/x", body=body, description=None)
    found = _codes(text)
    assert ("private_personal_data", Severity.WARNING) in found, found
    assert not any(sev == Severity.ERROR for _, sev in found), found


@pytest.mark.parametrize(
    "body",
    [
        "Write to alice.smith@example.com or ops@example.org or bob@staging.test.",
        "Set the author to user@domain.invalid and you@yourcompany.example.",
        "Clone git@github.com:org/repo.git; https://bob:secretword@host.example/x is not a mailbox.",
        "Mail security@acme.io or noreply@acme.io; both are role mailboxes.",
        "The fictional number is (415) 555-0132 and the placeholder is 123-456-7890.",
        "Version 1.2.3-4, date 2026-07-01, time 12:30:45, IP 192.168.10.100, id 7216-0146-7400-8165.",
        "Use ${USER}@corp.com in the template and {name}@corp.com too.",
    ],
)
def test_example_domains_placeholders_and_lookalikes_are_not_flagged(body):
    text = builders.record("facts/x", body=body, description=None)
    assert not [c for c, _ in _codes(text) if c == "private_personal_data"]


def test_a_labelled_value_is_pii_detected_only(project):
    text = builders.record("facts/x", body="email_address: jane.smith@acme-corp.io", description=None)
    codes = [c for c, _ in _codes(text)]
    assert "pii_detected" in codes and "private_personal_data" not in codes


def test_no_contact_warning_on_the_corpus():
    files = [p for p in corpus_or_skip().rglob("*.md") if ".memzoi" in p.parts]
    assert files
    flagged = [p for p in files if any(f.code == "private_personal_data" for f in analyze_path(p).findings)]
    assert flagged == []


def test_an_agent_proposal_with_a_persons_address_is_refused_as_gate_content(project):
    res = tools.call(_s(project), "propose_memory", draft_args(body="Ask jane.smith@acme-corp.io first."))
    assert res.is_error and res.data["error"]["reasons"] == ["private_personal_data"]
    assert "jane.smith" not in res.text and "git-plane gate" in res.text
    assert not tools.call(_s(project), "propose_memory", draft_args(body="Ask ops@example.com first.")).is_error
