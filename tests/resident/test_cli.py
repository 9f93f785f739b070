"""``memzoi resident``: propose → approve → show → undo on a project file, JSON shapes, refusals and help."""

from __future__ import annotations

import json

import pytest

from memzoi.cli.main import main

from .conftest import configure, rules


def _run(capsys, *argv):
    code = main(["resident", *argv])
    out, err = capsys.readouterr()
    return code, out, err


def test_propose_approve_show_undo_transcript(project, capsys, monkeypatch):
    monkeypatch.chdir(project / ".memzoi")  # the project is found from the working directory
    code, out, _ = _run(
        capsys,
        "propose",
        "--scope",
        "project",
        "--action",
        "add",
        "--content",
        "Run make lint before pushing.",
        "--reason",
        "asked twice in review",
        "--confidence",
        "0.8",
    )
    assert code == 0 and out.startswith("candidate mem_") and "pending (project add)" in out
    cid = out.split()[1]
    code, out, _ = _run(capsys, "list")
    assert code == 0 and cid in out and "80.0%" in out and "asked twice in review" in out
    code, out, _ = _run(capsys, "approve", cid)
    assert (code, out) == (0, f"candidate {cid} applied (project add)\n")
    assert rules(project).read_text(encoding="utf-8") == "Run make lint before pushing."
    code, out, _ = _run(capsys, "show")
    assert code == 0 and "MEMORY (project rules) [0% — 29/3,000 chars]" in out and "Run make lint" in out
    code, out, _ = _run(capsys, "undo", cid)
    assert (code, out) == (0, f"candidate {cid} undone (project add)\n")
    assert rules(project).read_text(encoding="utf-8") == ""


def test_json_outputs_and_refusals(project, capsys):
    root = str(project)
    code, out, _ = _run(
        capsys,
        "propose",
        "--root",
        root,
        "--json",
        "--scope",
        "project",
        "--action",
        "remove",
        "--old-text",
        "nothing",
        "--reason",
        "r",
        "--confidence",
        "1",
    )
    assert code == 1 and json.loads(out)["error"]["code"] == "no_match"
    configure(project, '[promotion]\nmode = "automatic"\n')
    code, out, _ = _run(
        capsys,
        "propose",
        "--root",
        root,
        "--json",
        "--scope",
        "project",
        "--action",
        "add",
        "--content",
        "Prefer short answers.",
        "--reason",
        "r",
        "--confidence",
        "0.3",
        "--source",
        "tool",
    )
    data = json.loads(out)
    assert code == 0 and data["status"] == "applied" and data["promoted"] and data["source"] == "foreground_tool"
    code, out, _ = _run(capsys, "show", "--root", root, "--json")
    scopes = json.loads(out)["scopes"]
    assert scopes[1]["entries"] == ["Prefer short answers."] and scopes[1]["usage"] == "[0% — 21/3,000 chars]"
    code, out, _ = _run(capsys, "list", "--root", root, "--json", "--status", "applied")
    assert [c["id"] for c in json.loads(out)["candidates"]] == [data["id"]]
    code, out, err = _run(capsys, "reject", data["id"], "--root", root, "--reason", "late")
    assert code == 1 and "not_rejectable" in err
    code, out, _ = _run(capsys, "reconcile", "--root", root, "--json")
    assert code == 0 and json.loads(out) == {"reconciled": [], "uncertain": []}
    code, out, err = _run(capsys, "approve", "mem_nope", "--root", root)
    assert code == 1 and "candidate_not_found" in err


@pytest.mark.parametrize("cmd", ["show", "list", "propose", "approve", "reject", "undo", "reconcile"])
def test_help_has_description_examples_exit_codes_root_and_json(cmd, capsys):
    with pytest.raises(SystemExit) as done:
        main(["resident", cmd, "--help"])
    assert done.value.code == 0
    out = capsys.readouterr().out
    for word in ("examples:", "exit status", "--root", "--json", f"memzoi resident {cmd}"):
        assert word in out


def test_check_reports_a_resident_file_as_the_editor_does(project, capsys, monkeypatch):
    # `memzoi check .zuno/RULES.md` used to read it as a record: frontmatter_missing, never the cap or drift
    path = rules(project)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("x" * 3100, encoding="utf-8")
    monkeypatch.chdir(project)
    assert main(["check", ".zuno/RULES.md", "--format", "json"]) == 1
    out = json.loads(capsys.readouterr().out)
    assert out["files_checked"] == 1
    assert sorted(f["code"] for f in out["findings"]) == ["resident_drift", "resident_hand_edit", "resident_over_cap"]
    path.write_text("Run make lint before pushing.\n§\nUse tabs in Makefiles.", encoding="utf-8")
    assert main(["check", str(path)]) == 0  # information only: a file written by hand is shown, not failed
    lines = capsys.readouterr().out.splitlines()
    assert [line.split(": ")[0].rsplit("/", 1)[-1] for line in lines[:2]] == ["RULES.md:1:1", "RULES.md:3:1"]
    assert all("resident_hand_edit Entry written by hand, not reviewed." in x for x in lines[:2])
    path.write_bytes(b"Use \xff tabs.")
    assert main(["check", str(path), "--format", "json"]) == 1
    assert [f["code"] for f in json.loads(capsys.readouterr().out)["findings"]] == [
        "invalid_encoding",
        "resident_hand_edit",
    ]


def test_check_from_stdin_named_as_a_resident_file(project, capsys, monkeypatch):
    import io

    monkeypatch.chdir(project)
    monkeypatch.setattr("sys.stdin", io.TextIOWrapper(io.BytesIO(("y" * 3100).encode())))
    assert main(["check", "-", "--stdin-filename", ".zuno/RULES.md", "--format", "json"]) == 1
    out = json.loads(capsys.readouterr().out)
    assert sorted(f["code"] for f in out["findings"]) == ["resident_drift", "resident_hand_edit", "resident_over_cap"]
    assert {f["path"] for f in out["findings"]} == {".zuno/RULES.md"}


def test_decisions_from_another_project_are_refused(project, capsys, monkeypatch, tmp_path):
    code, out, _ = _run(
        capsys,
        "propose",
        "--root",
        str(project),
        "--json",
        "--scope",
        "project",
        "--action",
        "add",
        "--content",
        "Keep it.",
        "--reason",
        "r",
        "--confidence",
        "0.5",
    )
    cid = json.loads(out)["id"]
    other = tmp_path / "other"
    (other / ".memzoi").mkdir(parents=True)
    monkeypatch.chdir(other)
    for argv in (["approve", cid], ["reject", cid, "--reason", "x"], ["undo", cid]):
        code, out, err = _run(capsys, *argv, "--json")
        assert code == 1 and json.loads(out)["error"]["code"] == "foreign_candidate", argv
    monkeypatch.chdir(project)
    code, out, _ = _run(capsys, "list", "--json")
    assert [c["status"] for c in json.loads(out)["candidates"]] == ["pending"]


def test_an_agents_global_candidate_says_why_it_was_not_promoted(project, capsys):
    configure(project, '[promotion]\nmode = "automatic"\n')
    code, out, _ = _run(
        capsys,
        "propose",
        "--root",
        str(project),
        "--scope",
        "global",
        "--action",
        "add",
        "--content",
        "Prefer short answers.",
        "--reason",
        "r",
        "--confidence",
        "1",
        "--source",
        "tool",
    )
    assert code == 0 and "pending (global add)" in out
    assert "not promoted: an agent's candidate for the global file always waits for a human" in out
    code, out, _ = _run(
        capsys,
        "propose",
        "--root",
        str(project),
        "--json",
        "--scope",
        "global",
        "--action",
        "add",
        "--content",
        "Prefer tabs.",
        "--reason",
        "r",
        "--confidence",
        "1",
        "--source",
        "tool",
    )
    assert json.loads(out)["held"].startswith("an agent's candidate for the global file")


def test_a_refused_undo_after_a_hand_edit_is_said_as_it_happened(project, capsys):
    """Undo after an entry added by hand: refused, nothing written, the candidate uncertain (as Zuno settles it).
    `memzoi check` says the undo was refused (not a crash), keeps the candidate's entry as reviewed (only the hand
    entry is a hand edit), and reconcile does not say "no interrupted candidates" before reporting one."""
    root = str(project)
    code, out, _ = _run(
        capsys,
        "propose",
        "--root",
        root,
        "--scope",
        "project",
        "--action",
        "add",
        "--content",
        "Run pnpm, never npm.",
        "--reason",
        "r",
        "--confidence",
        "0.9",
    )
    cid = out.split()[1]
    assert _run(capsys, "approve", cid, "--root", root)[0] == 0
    rules(project).write_text("Run pnpm, never npm.\n§\nHand entry.", encoding="utf-8")
    code, _, err = _run(capsys, "undo", cid, "--root", root)
    assert code == 1 and "state_mismatch" in err and "nothing was written" in err
    assert rules(project).read_text(encoding="utf-8") == "Run pnpm, never npm.\n§\nHand entry."
    main(["check", str(rules(project)), "--json"])
    found = json.loads(capsys.readouterr().out)["findings"]
    (uncertain,) = [f for f in found if f["code"] == "resident_uncertain"]
    assert "crash" not in uncertain["message"] and "undo refused" in uncertain["message"], uncertain
    hand = [f["range"]["start"]["line"] for f in found if f["code"] == "resident_hand_edit"]
    assert hand == [2], found  # entry 2 (line 3) only: the approved candidate wrote entry 1
    code, out, _ = _run(capsys, "reconcile", "--root", root)
    assert code == 1 and "no interrupted candidates" not in out and f"{cid} is uncertain" in out, out


@pytest.mark.parametrize("as_json", [False, True])
def test_a_recovery_that_replaced_a_hand_edit_names_its_backup(project, capsys, as_json):
    # it printed only "candidate … applied (project recover)": the hand edit's bytes were in a .bak nobody named
    from memzoi.resident import candidates as db, service

    cand = service.propose(
        project, scope="project", action="add", content="expected", reason="r", confidence=0.5, actor="a"
    ).candidate
    with db.connect() as conn:
        db.begin_apply(conn, cand.id, [], ["expected"], "alice")  # a write that never finished
    path = rules(project)
    path.parent.mkdir(parents=True)
    path.write_text("my hand edit", encoding="utf-8")
    assert [o.status for o in service.reconcile(project)] == ["uncertain"]
    argv = [
        "reconcile",
        "--root",
        str(project),
        "--recover",
        cand.id,
        "complete-after",
        *(["--json"] if as_json else []),
    ]
    code, out, _ = _run(capsys, *argv)
    (bak,) = path.parent.glob("RULES.md.bak.*")
    assert code == 0 and bak.read_text(encoding="utf-8") == "my hand edit"
    assert path.read_text(encoding="utf-8") == "expected"
    if as_json:
        got = json.loads(out)
        assert (got["action"], got["status"]) == ("recover", "applied")
        assert got["diagnostic"] == f"the file's bytes before this recovery are kept in {bak}"
    else:
        first, second = out.splitlines()
        assert first.endswith("applied (project recover)")
        assert second == f"  the file's bytes before this recovery are kept in {bak}"
