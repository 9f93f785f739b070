"""``memzoi materialize template`` (trial 2, #11): a new user gets a complete draft record, which ``candidate``
takes as it is, and a refused draft names the command that prints one."""

from __future__ import annotations

import pytest

from memzoi import ledger
from memzoi.cli.main import main
from memzoi.lifecycle.draft_template import draft_template
from memzoi.lifecycle.materialize_candidate import TEMPLATE_HINT, build_candidate


def test_the_template_is_a_draft_the_candidate_step_accepts(repo):
    text = draft_template("2026-07-06T00:00:00Z", title="Lint with ruff")
    candidate = build_candidate(repo, text)
    assert candidate["record"]["concept_id"] == "lint-with-ruff"
    assert candidate["output_path"] == ".memzoi/records/lint-with-ruff.md"
    with pytest.raises(ValueError, match="gives no record id"):
        draft_template("2026-07-06T00:00:00Z", title="!!!")


def test_a_draft_missing_keys_names_the_template_command(repo):
    partial = "---\nid: x\ntitle: X\ntype: fact\nlane: semantic\n---\n\nBody.\n"
    with pytest.raises(ledger.Refusal) as err:
        build_candidate(repo, partial)
    assert err.value.code == "materialization_candidate_invalid"
    assert "missing required keys" in err.value.message and TEMPLATE_HINT in err.value.message


def test_cli_template_then_candidate(repo, cli, tmp_path, capsys):
    draft = tmp_path / "draft.md"
    code, out = cli("materialize", "template", "--title", "Build with make", "--output", str(draft))
    assert code == 0 and out == {"path": str(draft)}
    assert "id: build-with-make" in draft.read_text()
    code, out = cli("materialize", "candidate", str(draft))
    assert code == 0 and out["record"]["concept_id"] == "build-with-make"
    code, err = cli("materialize", "template", "--output", str(draft))
    assert code == 1 and err["error"]["code"] == "output_exists"
    capsys.readouterr()
    assert main(["materialize", "template", "--root", str(repo)]) == 0
    assert "route: repository_materialization" in capsys.readouterr().out
