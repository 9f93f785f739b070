"""``memzoi search`` and the agent's recall (``search_memory``, ``get_memory`` and the MCP tool) follow the inputs
of a verdict that ``tests/test_index_inputs.py`` and ``tests/test_index_freshness.py`` do not reach every search
with (issue 29, Show: freshness tests): a retention boundary passing, git's ``.gitignore``, ``info/exclude``,
``git add`` and a commit, and a damaged store (withheld until rebuilt)."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from memzoi.agent import recall
from memzoi.base.runtime import STORE_DB

from . import builders
from .index_setup import cli_records, git
from .mcp.conftest import FACT_ID, WARNING_ID, home, project  # noqa: F401 - fixtures
from .test_index_inputs import admitted, agent_hits, mcp_hits

EPISODE = "episodes/zebrafish-outage"
#: The episode's recall window ends 30 days after it occurred (Memzoi's episodic lane; reference: retention).
BOUNDARY = datetime(2026, 7, 1, tzinfo=UTC)


def current(capsys, project: Path, rid: str, word: str) -> dict[str, bool]:
    """Whether each search surface calls ``rid`` a current assertion."""
    return {
        "memzoi search": cli_records(capsys, project, word)[rid]["current"],
        "search_memory": agent_hits(project, word)[rid]["current"],
        "mcp search_memory": mcp_hits(project, word)[rid]["current"],
        "get_memory": recall.get_memory(project, rid)["provenance"]["current_assertion"]["is_current"],
    }


def test_a_retention_boundary_passing_reaches_every_search(project, capsys, monkeypatch):
    text = builders.record(
        EPISODE,
        lane="episodic",
        title="The zebrafish outage",
        retention={"occurred_at": "2026-06-01T00:00:00Z"},
    )
    builders.write(project, builders.record_path(EPISODE), text)
    monkeypatch.setattr(recall, "utc_now", lambda: BOUNDARY - timedelta(seconds=1))
    assert set(current(capsys, project, EPISODE, "zebrafish").values()) == {True}
    monkeypatch.setattr(recall, "utc_now", lambda: BOUNDARY)  # the boundary is inclusive; no file changed
    assert set(current(capsys, project, EPISODE, "zebrafish").values()) == {False}


@pytest.mark.parametrize("where", [".gitignore", ".git/info/exclude"])
def test_an_ignore_rule_reaches_every_search(project, capsys, where):
    assert admitted(capsys, project, WARNING_ID, "refresh") == {True}  # untracked, not ignored
    rule = project / where
    rule.parent.mkdir(parents=True, exist_ok=True)
    rule.write_text(".memzoi/records/warnings/\n")
    assert admitted(capsys, project, WARNING_ID, "refresh") == {False}  # untracked and ignored: refused
    rule.write_text("")
    assert admitted(capsys, project, WARNING_ID, "refresh") == {True}


def test_git_add_and_a_commit_reach_every_search(project, capsys):
    (project / ".gitignore").write_text(".memzoi/records/warnings/\n")
    assert admitted(capsys, project, WARNING_ID, "refresh") == {False}
    git(project, "add", "-f", ".memzoi/records/warnings")  # tracked wins over the ignore rule
    assert admitted(capsys, project, WARNING_ID, "refresh") == {True}
    git(project, "rm", "-q", "-r", "--cached", ".memzoi/records/warnings")
    assert admitted(capsys, project, WARNING_ID, "refresh") == {False}
    # A commit alone: what it records is tracked from then on (the index is unchanged by it, HEAD moves).
    git(project, "add", "-f", ".memzoi/records/warnings")
    git(project, "commit", "-q", "-m", "records")
    assert admitted(capsys, project, WARNING_ID, "refresh") == {True}
    git(project, "rm", "-q", "-r", "--cached", ".memzoi/records/warnings")
    git(project, "commit", "-q", "-m", "untrack")  # committed untracked: refused again
    assert admitted(capsys, project, WARNING_ID, "refresh") == {False}


def test_a_damaged_store_is_withheld_by_every_search_until_rebuilt(project, capsys, home):
    """A store that is not a database is never read as one: each search refuses, naming the file and ``memzoi
    rebuild``; after the rebuild each serves the file's text."""
    import json

    from memzoi.agent import tools
    from memzoi.cli.main import main

    assert FACT_ID in cli_records(capsys, project, "hatch")
    [db] = sorted(Path(home).rglob(STORE_DB))
    db.write_bytes(b"not a database" * 512)
    capsys.readouterr()
    assert main(["search", "--root", str(project), "hatch", "--json", "--no-progress"]) != 0
    error = json.loads(capsys.readouterr().out)["error"]
    assert error["code"] == "corrupt_database" and str(db) in error["message"] and "memzoi rebuild" in error["message"]
    res = tools.call(tools.Session(project, "agent", tools.RateLimit(50)), "search_memory", {"query": "hatch"})
    assert res.is_error and res.data["error"]["code"] == "index_unavailable"
    assert "memzoi rebuild" in res.data["error"]["message"]
    assert main(["rebuild", "--root", str(project), "--no-progress"]) == 0
    assert FACT_ID in cli_records(capsys, project, "hatch")
    assert FACT_ID in agent_hits(project, "hatch") and FACT_ID in mcp_hits(project, "hatch")
    assert "hatch" in recall.get_memory(project, FACT_ID)["body"]


#: Damage done to the index's rows of a file that is unchanged: ``(table, column, value)``. The first three no longer
#: parse or have another shape; the others are valid values the file does not have (a record refused, other text).
DAMAGES = {
    "text": ("files", "findings", "not json"),
    "number": ("files", "findings", "5"),
    "shape": ("files", "findings", '[{"kind": "no code"}]'),
    "refused": ("files", "admitted", 0),
    "findings": (
        "files",
        "findings",
        '[{"code": "prompt_injection", "severity": 1, "message": "m", "start": 0, "end": 1}]',
    ),
    "body": ("records", "body", "Other words."),
    "record-refused": ("records", "admitted", 0),
}


@pytest.mark.parametrize("damage", sorted(DAMAGES))
def test_a_damaged_row_is_a_miss_withheld_by_every_search_until_rebuilt(project, capsys, damage):
    """A row of the index whose stored values no longer match its file's checksum while the file is unchanged is a
    miss, never served (it decides whether a record's text may go to a model): every search and recall withholds
    it, ``memzoi doctor`` names it, and ``memzoi rebuild`` serves the file's text again. Before the checksum, a row
    changed into other valid values was served as it was, and one that no longer parsed made the reads refuse."""
    from memzoi.agent.context_pack import build_context_pack
    from memzoi.agent.precheck import precheck_path
    from memzoi.cli.main import main
    from memzoi.stores.index import Index

    table, column, value = DAMAGES[damage]

    def get_memory() -> object:
        try:
            return recall.get_memory(project, FACT_ID)
        except recall.Refusal as refused:
            return refused.code

    reads = {
        "memzoi search": lambda: cli_records(capsys, project, "hatch"),
        "search_memory": lambda: agent_hits(project, "hatch"),
        "mcp search_memory": lambda: mcp_hits(project, "hatch"),
        "get_memory": get_memory,
        "build_context_pack": lambda: build_context_pack(project, "hatch build"),
        "precheck_path": lambda: precheck_path(project, "pyproject.toml"),
    }
    shown = {name: FACT_ID in json.dumps(read(), default=str) for name, read in reads.items()}
    assert shown == dict.fromkeys(reads, True) or shown == {**dict.fromkeys(reads, True), "precheck_path": False}
    with Index(project) as ix:
        ix.db.execute(f"UPDATE {table} SET {column} = ? WHERE path LIKE '%build-tool%'", (value,))
        assert any("build-tool" in p for p in ix.drift().changed_in_index)  # memzoi doctor names it
    assert {name: FACT_ID in json.dumps(read(), default=str) for name, read in reads.items()} == dict.fromkeys(
        reads, False
    )
    assert main(["rebuild", "--root", str(project), "--no-progress"]) == 0
    capsys.readouterr()
    assert {name: FACT_ID in json.dumps(read(), default=str) for name, read in reads.items()} == shown
