"""``memzoi resident turn|reflect|jobs|job|state|remove`` and ``approve --edit|--content`` from the command line."""

from __future__ import annotations

import json
import stat

import pytest

from memzoi.cli.main import main
from memzoi.resident import candidates as db, jobs, service
from memzoi.resident.format import parse, serialize

from .conftest import rules
from .reflection_helpers import ADD, transcript, user_config
from .stub_endpoint import Reply, Stub, call


def _run(capsys, *argv):
    code = main(["resident", *argv])
    out, err = capsys.readouterr()
    return code, out, err


def _propose(project):
    return service.propose(
        project, scope="project", action="add", content="Run make lint.", reason="asked", confidence=0.5, actor="agent"
    ).candidate


def test_approve_with_edit_opens_the_editor_and_keeps_both_versions(project, tmp_path, capsys, monkeypatch):
    cand = _propose(project)
    editor = tmp_path / "edit.sh"
    editor.write_text('#!/bin/sh\nprintf "Run make lint and make test." > "$1"\n', encoding="utf-8")
    editor.chmod(editor.stat().st_mode | stat.S_IXUSR)
    monkeypatch.setenv("EDITOR", str(editor))
    monkeypatch.delenv("VISUAL", raising=False)
    code, out, _ = _run(capsys, "approve", cand.id, "--edit", "--root", str(project), "--json")
    data = json.loads(out)
    assert code == 0 and (data["status"], data["content"], data["original_content"]) == (
        "applied",
        "Run make lint and make test.",
        "Run make lint.",
    )
    assert parse(rules(project).read_text(encoding="utf-8")) == ["Run make lint and make test."]


def test_approve_with_content_and_a_refused_edit(project, capsys, monkeypatch):
    cand = _propose(project)
    code, _, err = _run(capsys, "approve", cand.id, "--content", "a\n§\nb", "--root", str(project))
    assert code == 1 and "malformed_operation" in err
    monkeypatch.delenv("EDITOR", raising=False)
    monkeypatch.delenv("VISUAL", raising=False)
    code, _, err = _run(capsys, "approve", cand.id, "--edit", "--root", str(project))
    assert code == 1 and "no_editor" in err and "--content" in err
    code, out, _ = _run(capsys, "approve", cand.id, "--content", "Run make lint first.", "--root", str(project))
    assert code == 0 and "applied" in out


def test_remove_in_one_step(project, capsys):
    rules(project).parent.mkdir(parents=True)
    rules(project).write_text(serialize(["Use tabs.", "Run make lint."]), encoding="utf-8")
    code, out, _ = _run(capsys, "remove", "lint", "--root", str(project))
    assert code == 0 and "applied (project remove)" in out and "undo with" in out
    assert parse(rules(project).read_text(encoding="utf-8")) == ["Use tabs."]


def test_turn_reflect_jobs_job_and_state(project, tmp_path, capsys):
    with Stub() as stub:
        user_config(tmp_path, stub.url, nudge=1)
        stub.replies.append(Reply("json", [call("propose_resident_memory", ADD)]))
        code, out, _ = _run(capsys, "turn", "--session", "s", "--message", "msg_1", "--root", str(project), "--json")
        assert code == 0 and json.loads(out)["due"] is True
        code, out, _ = _run(
            capsys, "reflect", "--session", "s", "--transcript", str(transcript(tmp_path)), "--root", str(project)
        )
    assert code == 0 and out.startswith("completed: job reflection_")
    code, out, _ = _run(capsys, "jobs", "--root", str(project), "--json")
    (job,) = json.loads(out)["jobs"]
    assert job["status"] == "completed" and job["outcome"]["status"] == "completed"
    secret = "gh" + "p_" + "Q1w2E3r4T5y6U7i8O9p0A1s2D3f4G5h6J7k8"  # planted in the record at run time
    with db.connect() as conn:
        conn.execute(
            "UPDATE memory_reflection_event SET data = json_set(data, '$.text', ?) WHERE type = ?",
            (f"leaked {secret}", jobs.OUTCOME),
        )
    code, out, _ = _run(capsys, "job", job["id"], "--root", str(project))
    assert code == 0 and "## request" in out and "## outcome" in out and secret not in out  # screened
    code, out, _ = _run(capsys, "state", "--root", str(project), "--json")
    state = json.loads(out)
    assert state["memory_candidates"][0]["job"] == job["id"] and secret not in out


def test_reflect_disabled_exits_1_and_names_the_user_config(project, tmp_path, capsys):
    user_config(tmp_path, None)
    code, out, _ = _run(
        capsys, "reflect", "--session", "s", "--transcript", str(transcript(tmp_path)), "--root", str(project)
    )
    assert code == 1 and out.startswith("disabled: memory reflection disabled") and "memzoi.toml" in out


def test_a_bad_transcript_is_refused_naming_the_line(project, tmp_path, capsys):
    user_config(tmp_path, "http://127.0.0.1:9/v1")
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"role": "user", "text": "hi"}\nnot json\n', encoding="utf-8")
    code, _, err = _run(capsys, "reflect", "--session", "s", "--transcript", str(bad), "--root", str(project))
    assert code == 1 and "invalid_transcript" in err and "bad.jsonl:2" in err


def test_reflect_not_sent_exits_1_text_and_json(project, tmp_path, capsys):
    """A message whose review already ran (here: failed) is not reviewed again: ``not_sent``, exit 1 as --help
    says, not 0 (new user's D7)."""
    with Stub() as stub:
        user_config(tmp_path, stub.url, nudge=1)
        stub.replies.append(Reply("status"))
        code, _, _ = _run(capsys, "turn", "--session", "s", "--message", "msg_1", "--root", str(project))
        assert code == 0
        argv = ["reflect", "--session", "s", "--transcript", str(transcript(tmp_path)), "--root", str(project)]
        code, out, _ = _run(capsys, *argv)
        assert code == 1 and out.startswith("failed:")
        code, out, _ = _run(capsys, *argv)
        assert code == 1 and out.startswith("not_sent:") and "never sent twice" in out
        code, out, _ = _run(capsys, *argv, "--json")
        assert code == 1 and json.loads(out)["state"] == "not_sent"
        assert len(stub.requests) == 1
    with pytest.raises(SystemExit):
        main(["resident", "reflect", "--help"])
    assert "not_sent" in capsys.readouterr().out
