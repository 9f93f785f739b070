"""The editor's runtime-input decisions in the core (memzoi.lifecycle.routing), without a server: which files are
session-end inputs or import manifests, their findings (schema, the gate on each repo candidate, destination
rules, duplicates) on the candidate's first line, a preview that writes nothing and names per candidate the packet
or route it would create or the codes that block it, and an apply refused when the state moved since."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from memzoi import ledger as L
from memzoi.judge.rules import DEFAULT_RULES
from memzoi.lifecycle.routing import input_findings, input_kind, input_verdict, routing_apply, routing_preview
from memzoi.project.verdict import ProjectContext
from tests.lifecycle.test_import import MIXED, cand, manifest
from tests.lifecycle.test_session_end import FULL, SEED

from .. import builders


@pytest.fixture
def project(runtime_project: Path) -> Path:
    return runtime_project


def line_of(text: str, offset: int) -> int:
    return text.count("\n", 0, offset)


@pytest.mark.parametrize(
    ("name", "text", "kind"),
    [
        ("s.yml", SEED, "session_end"),
        ("m.yaml", MIXED, "import"),
        ("m.yml", manifest(cand("local", "a", "b")), "import"),
        ("s.md", SEED, None),
        ("ci.yml", "jobs:\n  build:\n    task: x\n    candidates: y\n", None),
        ("other.yml", "version: 2\n", None),
    ],
)
def test_input_kind(name, text, kind):
    assert input_kind(name, text) == kind


def test_clean_inputs_have_no_findings(project):
    assert input_findings(project, project / "s.yml", SEED) == []
    assert input_findings(project, project / "m.yml", MIXED) == []


def test_session_end_findings_on_the_candidate_line(project):
    text = FULL.replace('"sensitivity": "repo-safe"', '"sensitivity": "unknown"')
    [f] = input_findings(project, project / "s.yml", text)
    assert f.code == "sensitivity_not_repo_safe"
    assert line_of(text, f.start) == line_of(text, text.find('"destination": "repo"')) - 1  # candidates[0]'s "{"
    assert "whole session-end batch" in f.message


def test_import_findings_name_codes_not_content(project):
    secret = "ghp_" + "P0o9I8u7Y6" * 3  # built at run time, never printed
    text = manifest(
        cand("repo", "Safe", "Safe body.", sensitivity="repo-safe"),
        cand("repo", "Token", f"Use {secret}", sensitivity="repo-safe"),
        cand("local", "Dup", "Local body."),
        cand("local", "Dup2", "Local body."),
    )
    found = input_findings(project, project / "m.yml", text)
    assert sorted(f.code for f in found) == ["credential_token", "duplicate_content", "repo_subset_blocked"]
    assert all(secret not in f.message for f in found)
    ctx = ProjectContext(str(project / ".memzoi"), None, None, DEFAULT_RULES)  # type: ignore[arg-type]
    assert [f.code for f in input_verdict(project / "m.yml", text, project, ctx)] == [
        "repo_subset_blocked",
        "credential_token",
        "duplicate_content",
    ]  # sorted by position


def test_invalid_inputs_are_schema_findings(project):
    [f] = input_findings(
        project, project / "m.yml", MIXED.replace("version: memzoi/import\n", "version: memzoi/import\ncolour: blue\n")
    )
    assert f.code == "invalid_import_manifest"
    [f] = input_findings(project, project / "s.yml", SEED + "    colour: blue\n")
    assert f.code == "invalid_session_end"


def test_preview_writes_nothing_then_apply_checks_it(project):
    preview = routing_preview(project, project / "m.yml", MIXED, actor="dev")
    assert [c["outcome"] for c in preview["candidates"]] == [
        "create_proposal",
        "create_runtime",
        "create_runtime",
        "no_write",
        "blocked",
    ]
    assert preview["candidates"][0]["path"] == ".memzoi/proposals/pending/mem_import_repository-convention.md"
    assert not (project / ".memzoi" / "proposals").exists() and L.history(project) == []
    with pytest.raises(L.Refusal) as err:
        routing_apply(project, project / "m.yml", MIXED, actor="dev")
    assert err.value.code == "invalid_arguments"
    out = routing_apply(project, project / "m.yml", MIXED, actor="dev", plan_id=preview["plan_id"])
    assert len(out["writes"]) == 3
    session = routing_preview(project, project / "s.yml", SEED)
    assert session["expected_version"] == 1  # the import's checkpoint counts
    with pytest.raises(L.Refusal) as err:
        routing_apply(project, project / "s.yml", SEED, actor="dev", expected_version=0)
    assert err.value.code == "version_conflict"
    assert routing_apply(project, project / "s.yml", SEED, actor="dev", expected_version=1)["status"] == "routed"


def test_blocked_session_end_preview_is_classification_only(project):
    text = FULL.replace('"sensitivity": "repo-safe"', '"sensitivity": "secret"')
    preview = routing_preview(project, project / "s.yml", text)
    assert preview["blocked"] and "Tokens rotate" not in json.dumps(preview)
    assert preview["candidates"][0]["reasons"] == ["sensitivity_not_repo_safe"]


def test_memzoi_check_of_an_input_file_says_what_the_editor_says(project, capsys):
    from memzoi.cli.main import main

    text = FULL.replace('"sensitivity": "repo-safe"', '"sensitivity": "unknown"')
    (project / "session.yml").write_text(text, encoding="utf-8")
    capsys.readouterr()
    assert main(["check", str(project / "session.yml"), "--format", "json"]) == 1
    shown = json.loads(capsys.readouterr().out)
    codes = (
        [f["code"] for f in shown["findings"]]
        if "findings" in shown
        else [f["code"] for file in shown.get("files", []) for f in file.get("findings", [])]
    )
    assert codes == [f.code for f in input_findings(project, project / "session.yml", text)]
    (project / "other.yml").write_text("jobs: {}\n", encoding="utf-8")  # not an input: checked as before
    assert main(["check", str(project / "other.yml")]) == 1


def test_previews_on_a_fresh_project_create_no_ledger(project, capsys):
    # A preview writes nothing: with no ledger yet, its planning takes no lock and makes no runtime folder (before,
    # the session-end preview ran Apply's planning under the lock and created the ledger database).
    from memzoi.base.runtime import LEDGER_DB, LOCK_FILE
    from memzoi.cli.main import main
    from memzoi.lifecycle.preview import preview

    home = project.parent / "home"
    (project / "s.yml").write_text(FULL, encoding="utf-8")
    (project / "m.yml").write_text(MIXED, encoding="utf-8")
    shown = routing_preview(project, project / "s.yml", FULL, actor="dev")
    assert shown["previewed"] and not shown["blocked"]
    assert routing_preview(project, project / "m.yml", MIXED, actor="dev")["plan_id"]
    capsys.readouterr()
    assert main(["import", "plan", "--from-file", str(project / "m.yml"), "--root", str(project), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)
    packet = builders.write(project, builders.packet_path("fresh"), builders.packet("fresh"))
    assert preview(project, "apply", packet, actor="dev")["files"]
    made = {p.name for p in home.rglob("*")}  # the index's cache may be there: it is no record of changes
    assert not made & {LEDGER_DB, LOCK_FILE}, made
    assert L.history(project) == []
