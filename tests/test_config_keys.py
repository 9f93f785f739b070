"""A misspelt key of this project's own sections of ``.memzoi/config.toml`` is reported (naming the key, the
closest known key and every known one) and costs only itself: the rest of its section applies, and nothing that
depends on the section is refused. Memzoi's sections and unknown ones are never judged."""

from __future__ import annotations

import json

import pytest

from memzoi.agent import tools
from memzoi.cli.main import main as memzoi
from memzoi.judge.config import load_section, parse_config
from memzoi.judge.configfile import config_findings

from .mcp.conftest import draft_args, make_project


@pytest.mark.parametrize(
    "text, key, hint, known",
    [
        (
            "[mcp]\nproposals_per_minut = 5\nmax_body_bytes = 1000\n",
            "mcp.proposals_per_minut",
            "proposals_per_minute",
            "proposals_per_minute, max_body_bytes",
        ),
        ('[promotion]\nmod = "automatic"\n', "promotion.mod", "mode", "mode, auto_confidence"),
        ('[safety]\nunsigned_jwts = "error"\n', "safety.unsigned_jwts", "unsigned_jwt", "accepted_fingerprints"),
        (
            "[resident]\nproject_char_limt = 10\n",
            "resident.project_char_limt",
            "project_char_limit",
            "project_path, project_char_limit.",
        ),
    ],
)
def test_an_unknown_key_of_an_own_section_is_named_with_the_known_keys(text, key, hint, known):
    loaded = parse_config(text)
    (problem,) = loaded.problems
    assert problem.entry_only and ".".join(problem.loc) == key
    assert f"`{key}`" in problem.message and f"did you mean `{hint}`?" in problem.message
    assert "Known keys: " in problem.message and known in problem.message
    assert "global_path" not in problem.message  # a repository cannot set the user-only keys: not offered


def test_the_rest_of_the_section_applies_and_nothing_depending_on_it_is_refused(tmp_path, monkeypatch):
    monkeypatch.setenv("MEMZOI_HOME", str(tmp_path / "home"))
    project = make_project(tmp_path / "repo").resolve()
    (project / ".memzoi" / "config.toml").write_text(
        "[mcp]\nproposals_per_minut = 5\nmax_body_bytes = 100\n", encoding="utf-8"
    )
    section, errors = load_section(project / ".memzoi", "mcp")
    assert errors == () and section.max_body_bytes == 100 and section.proposals_per_minute == 20
    session = tools.Session(project, "codex", tools.RateLimit(10))
    small = tools.call(session, "propose_memory", draft_args(body="Short body."))
    assert not small.is_error, small.text
    large = tools.call(session, "propose_memory", draft_args(body="x" * 200))
    assert large.is_error and large.data["error"]["code"] == "candidate_too_large"


def test_memzoi_and_unknown_sections_are_not_judged_but_a_near_miss_header_is():
    text = (
        '[project]\nid = "p"\nname = "Memzoi may add keys"\n[workflow]\nproposal_approval = "manual"\n'
        '[index]\nfoo = 1\n[promotoin]\nmode = "automatic"\n'
    )
    (problem,) = parse_config(text).problems
    assert problem.loc == ("promotoin",) and "did you mean [promotion]?" in problem.message
    assert parse_config(text).config.project_id == "p"


def test_the_finding_is_placed_on_the_key_and_check_fails(tmp_path, capsys):
    text = "[mcp]\nmax_body_bytes = 1000\nproposals_per_minut = 5\n"
    (found,) = config_findings(text)
    assert found.code == "invalid_config" and text[found.start : found.end].startswith("proposals_per_minut")
    project = tmp_path / "p"
    (project / ".memzoi").mkdir(parents=True)
    (project / ".memzoi" / "config.toml").write_text(text, encoding="utf-8")
    capsys.readouterr()
    code = memzoi(["check", str(project / ".memzoi" / "config.toml"), "--format", "json"])
    out = json.loads(capsys.readouterr().out)
    assert code == 1 and [f["code"] for f in out["findings"]] == ["invalid_config"]
    assert "proposals_per_minute" in out["findings"][0]["message"]
