"""``memzoi search`` ranks as the MCP tool ``search_memory`` does (trial 2, defect 1): the same modes
(``--mode natural|all_words|phrase``, natural by default) through the one core function
(:func:`memzoi.agent.search.search_memory`), so a question finds on the command line what it finds over MCP."""

from __future__ import annotations

import json

from memzoi.agent.search import search_memory
from memzoi.cli.main import main

from .. import builders
from .conftest import FACT_ID, WARNING_ID

QUESTION = "how do I run the build?"


def search(capsys, root, *args: str) -> tuple[int, dict]:
    capsys.readouterr()
    code = main(["search", *args, "--root", str(root), "--json", "--no-progress"])
    return code, json.loads(capsys.readouterr().out)


def test_a_question_finds_on_the_cli_what_the_tool_finds(project, capsys):
    code, out = search(capsys, project, *QUESTION.split())
    assert code == 0 and out["mode"] == "natural"
    assert [r["id"] for r in out["records"]] == [FACT_ID]
    tool = search_memory(project, QUESTION, kind="all", include_local=False)
    assert [(h["kind"], h["id"], h["score"]) for h in tool["results"]] == [
        ("record", r["id"], r["score"]) for r in out["records"]
    ] + [("proposal", p["id"], p["score"]) for p in out["proposals"]]
    hit = out["records"][0]
    assert hit["record_id"] == FACT_ID and hit["current"] is True and 0 < hit["score"] <= 1 and hit["body"]


def test_all_words_and_phrase_modes(project, capsys):
    assert search(capsys, project, *QUESTION.split(), "--mode", "all_words")[1]["records"] == []
    code, out = search(capsys, project, "hatch", "build", "--mode", "all_words")
    assert code == 0 and [r["id"] for r in out["records"]] == [FACT_ID]
    assert [r["id"] for r in search(capsys, project, "serialise refreshes", "--mode", "phrase")[1]["records"]] == [
        WARNING_ID
    ]
    assert search(capsys, project, "refreshes serialise", "--mode", "phrase")[1]["records"] == []


def test_no_match_line_names_the_mode_rule(project, capsys):
    capsys.readouterr()
    assert main(["search", "zebra", "quasar", "--mode", "all_words", "--root", str(project), "--no-progress"]) == 0
    err = capsys.readouterr().err
    assert "no matches" in err and "every word must match" in err


def test_kind_help_says_what_is_searched(capsys):
    try:
        main(["search", "--help"])
    except SystemExit:
        pass
    text = " ".join(capsys.readouterr().out.split())
    assert "--mode" in text and "resolved packets" in text and "superseded" in text


def test_a_superseded_hit_brings_its_active_replacement(project, capsys):
    """Trial 2, defect 2: the question matches only the superseded record's words; its replacement (whose words
    fall below the relevance floor) is returned with it, first, naming the record it replaced."""
    old = builders.record(
        "builds-use-make",
        type="procedure",
        title="Builds use make",
        body="Run make to build the project.",
        status="superseded",
        description=None,
    )
    new = builders.record(
        "builds-use-make-all",
        type="procedure",
        title="Make all",
        body="Run make all; make -j4 is fine too.",
        supersedes="builds-use-make",
        description=None,
    )
    builders.write(project, builders.record_path("builds-use-make"), old)
    builders.write(project, builders.record_path("builds-use-make-all"), new)
    found = search_memory(project, "how do I build the project?")["results"]
    assert [(h["id"], h["status"]) for h in found][:2] == [
        ("builds-use-make-all", "active"),
        ("builds-use-make", "superseded"),
    ], found
    assert found[0]["successor_of"] == "builds-use-make" and "row" not in found[0]
    code, out = search(capsys, project, "how", "do", "I", "build", "the", "project?")
    assert code == 0 and [r["id"] for r in out["records"]][:2] == ["builds-use-make-all", "builds-use-make"]
