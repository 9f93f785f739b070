"""An invalid ``[promotion]`` or ``[mcp]`` section is an error the agent sees (naming the file and the key) and a
finding of ``memzoi check .memzoi/config.toml``; it never quietly falls back to the defaults."""

from __future__ import annotations

import json

import pytest

from memzoi.agent import tools
from memzoi.cli.main import main as memzoi
from memzoi.ledger.local_records import list_local
from memzoi.lifecycle.candidates import list_candidates

from .conftest import draft_args

PENDING = ".memzoi/proposals/pending"


def _config(project, text: str):
    (project / ".memzoi" / "config.toml").write_text(text, encoding="utf-8")


def _propose(project, **over) -> tools.ToolResult:
    return tools.call(tools.Session(project, "codex", tools.RateLimit(10)), "propose_memory", draft_args(**over))


def test_an_invalid_promotion_mode_refuses_a_local_proposal(project):
    _config(project, '[promotion]\nmode = "yolo"\n')
    res = _propose(project, destination="local", confidence=0.99)
    assert res.is_error and res.data["error"]["code"] == "invalid_config", res.text
    assert "config.toml" in res.text and "`promotion.mode`" in res.text and "yolo" not in res.text
    assert list_candidates(project, state=None) == [] and list_local(project) == []
    assert not _propose(project).is_error  # a repository packet does not depend on [promotion]


@pytest.mark.parametrize("destination", ["local", "repo"])
def test_an_invalid_mcp_section_refuses_every_proposal(project, destination):
    _config(project, "[mcp]\nproposals_per_minute = -3\n")
    res = _propose(project, destination=destination)
    assert res.is_error and res.data["error"]["code"] == "invalid_config", res.text
    assert "`mcp.proposals_per_minute`" in res.text
    assert list((project / PENDING).iterdir()) == [] and list_candidates(project, state=None) == []
    assert not tools.call(tools.Session(project, "codex", tools.RateLimit(10)), "list_pending", {}).is_error


def test_an_error_elsewhere_leaves_the_promotion_policy_as_written(project):
    _config(project, '[promotion]\nmode = "automatic"\n[safety]\nunsigned_jwt = "loud"\n')
    res = _propose(project, destination="local", confidence=0.1)
    assert not res.is_error, res.text
    assert res.data["candidate"]["state"] == "applied"


def test_memzoi_check_reports_the_invalid_keys(project, capsys):
    _config(project, '[project]\nid = "demo"\n\n[promotion]\nmode = "yolo"\n\n[mcp]\nproposals_per_minute = -3\n')
    capsys.readouterr()
    code = memzoi(["check", str(project / ".memzoi" / "config.toml"), "--format", "json"])
    out = json.loads(capsys.readouterr().out)
    assert code == 1
    found = [(f["code"], f["range"]["start"]["line"], f["message"].split("`")[1]) for f in out["findings"]]
    assert found == [("invalid_config", 4, "promotion.mode"), ("invalid_config", 7, "mcp.proposals_per_minute")]
    assert "yolo" not in json.dumps(out)
    capsys.readouterr()
    # checking the project fails too: its settings are part of what is committed, and an invalid one is an error
    assert memzoi(["check", str(project / ".memzoi")]) == 1
    assert "promotion.mode" in capsys.readouterr().out
