"""``memzoi search`` and the agent's ``search_memory`` never hand out a row whose verdict is not current: after
each input of a verdict the issue lists (an edit keeping size and mtime, a configuration change, an untrack, a
project-id change, a ledgered change, a tool change) both report what the files say now. The agent's other
reads (``get_memory``, ``build_context_pack``, ``precheck_path``) are held to the same inputs in
``tests/test_index_freshness.py``."""

from __future__ import annotations

from pathlib import Path

import pytest

from memzoi.agent import tools
from memzoi.agent.search import search_memory
from memzoi.cli.main import main
from memzoi.lifecycle import apply_proposal
from memzoi.stores.index import Index

from .index_setup import NEW, OLD, SCOPED, another_build, cli_records, closed, fact, git, same_size_edit, scoped  # noqa: F401 - fixtures
from .mcp.conftest import FACT_ID, WARNING_ID, home, project  # noqa: F401 - fixtures


def agent_hits(project: Path, word: str) -> dict[str, dict]:
    """``search_memory``'s repository hits by id (the core function the MCP tool calls)."""
    return {h["id"]: h for h in search_memory(project, word, include_local=False)["results"]}


def mcp_hits(project: Path, word: str) -> dict[str, dict]:
    """The MCP tool ``search_memory``'s structured hits by id."""
    res = tools.call(tools.Session(project, "agent", tools.RateLimit(50)), "search_memory", {"query": word})
    assert not res.is_error, res.text
    return {h["id"]: h for h in res.data["results"]}


def admitted(capsys, project: Path, rid: str, word: str) -> set[bool]:
    """Whether each search surface hands out ``rid`` as admitted (one value when they agree)."""
    return {
        cli_records(capsys, project, word)[rid]["admitted"],
        agent_hits(project, word)[rid]["admitted"],
        mcp_hits(project, word)[rid]["admitted"],
    }


def test_an_edit_keeping_size_and_mtime_reaches_every_search(project, capsys, closed):
    assert FACT_ID in cli_records(capsys, project, OLD) and FACT_ID in mcp_hits(project, OLD)
    same_size_edit(fact(project))
    assert FACT_ID not in cli_records(capsys, project, OLD) and FACT_ID not in mcp_hits(project, OLD)
    assert FACT_ID in cli_records(capsys, project, NEW) and FACT_ID in mcp_hits(project, NEW)


def test_a_project_id_change_reaches_every_search(project, capsys):
    scoped(project)
    config = project / ".memzoi/config.toml"
    assert admitted(capsys, project, SCOPED, "zebrafish") == {True}
    config.write_text('[project]\nid = "other"\n')  # the record's scope is another project's now
    assert admitted(capsys, project, SCOPED, "zebrafish") == {False}
    config.write_text('[project]\nid = "demo"\n')
    assert admitted(capsys, project, SCOPED, "zebrafish") == {True}


def test_a_rules_change_is_a_new_stamp_and_no_row_of_the_old_one_is_served(project, capsys):
    config = project / ".memzoi/config.toml"
    config.write_text("[rules]\n")
    assert FACT_ID in cli_records(capsys, project, "hatch")
    with Index(project) as ix:  # a row of the old configuration, marked so that serving it shows
        ix.db.execute("UPDATE records SET body = 'stale zebrafish' WHERE id = ?", (FACT_ID,))
    config.write_text('[rules]\nunknown_key = "hint"\n')
    assert cli_records(capsys, project, "zebrafish") == {} and agent_hits(project, "zebrafish") == {}
    assert FACT_ID in cli_records(capsys, project, "hatch")


def test_an_untrack_reaches_every_search(project, capsys):
    git(project, "add", ".memzoi")
    git(project, "commit", "-q", "-m", "records")
    (project / ".gitignore").write_text(".memzoi/records/warnings/\n")
    assert admitted(capsys, project, WARNING_ID, "refresh") == {True}  # tracked: the ignore rule does not apply
    git(project, "rm", "-q", "-r", "--cached", ".memzoi/records/warnings")
    assert admitted(capsys, project, WARNING_ID, "refresh") == {False}  # untracked and ignored: refused


@pytest.mark.parametrize("hook", [True, False], ids=["index-kept-by-the-change", "change-made-elsewhere"])
def test_a_ledgered_change_reaches_every_search(project, capsys, monkeypatch, hook):
    assert agent_hits(project, "hatch")[FACT_ID]["status"] == "active"
    if not hook:  # as a change made by another process or another build: only the search's refresh can see it
        from memzoi.ledger import writer

        monkeypatch.setattr(writer, "_commit_hook", None)
    res = tools.call(
        tools.Session(project, "agent", tools.RateLimit(50)),
        "propose_memory",
        {"action": "tombstone", "target": FACT_ID, "reason": "the build moved to uv"},
    )
    assert not res.is_error, res.text
    assert apply_proposal(project, res.data["proposal_id"], actor="reviewer").status == "applied"
    assert cli_records(capsys, project, "hatch")[FACT_ID]["status"] == "tombstoned"
    assert agent_hits(project, "hatch")[FACT_ID]["status"] == "tombstoned"
    assert mcp_hits(project, "hatch")[FACT_ID]["current"] is False


def test_a_tool_change_serves_no_row_of_the_old_build(project, capsys, another_build):
    assert FACT_ID in cli_records(capsys, project, "hatch")
    with Index(project) as ix:  # a row of the old build, marked so that serving it shows
        ix.db.execute("UPDATE records SET body = 'stale zebrafish' WHERE id = ?", (FACT_ID,))
    another_build()
    assert agent_hits(project, "zebrafish") == {} and mcp_hits(project, "zebrafish") == {}
    assert cli_records(capsys, project, "zebrafish") == {} and FACT_ID in agent_hits(project, "hatch")


def test_a_legacy_record_is_not_usable_memory_in_every_search(project, capsys):
    """A ``memzoi/v1`` record is admitted (``legacy_profile`` is a warning) but not usable memory: ``memzoi search``
    says so in JSON (``usable: false``, ``reasons``) and in text, with the reasons ``search_memory`` gives."""
    path = project / ".memzoi/records/facts/build-tool.md"
    path.write_text(path.read_text().replace("profile: memzoi\n", "version: okf/v0.2\nprofile: memzoi/v1\n", 1))
    row = cli_records(capsys, project, "hatch")[FACT_ID]
    assert row["usable"] is False and row["reasons"] == ["legacy_profile"]
    assert (
        row["reasons"]
        == agent_hits(project, "hatch")[FACT_ID]["reasons"]
        == mcp_hits(project, "hatch")[FACT_ID]["reasons"]
    )
    assert main(["search", "--root", str(project), "hatch", "--no-progress"]) == 0
    assert "not usable memory: legacy_profile" in capsys.readouterr().out
    assert cli_records(capsys, project, "tabs")[WARNING_ID]["usable"] is True
