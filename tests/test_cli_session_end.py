"""``memzoi session-end``, in-process and as a subprocess with ``--json``: the seed's example, the blocked batch
whose output (stdout, stderr, JSON) carries no planted title or body, --json requiring --operation-id and
--expected-version, replay and conflict, --from-checkpoint, and `memzoi undo` of the whole routing."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from memzoi.cli.main import main
from tests.lifecycle.test_session_end import SEED  # the seed's example, verbatim, kept in one place

TITLE, BODY = "PLANTED-TITLE-4K", "PLANTED-BODY-8W stays private"
BLOCKED = (
    SEED
    + f"""  - destination: repo
    type: fact
    lane: semantic
    title: {TITLE}
    body: {BODY}
  - destination: local
    type: preference
    lane: semantic
    title: Local PLANTED-LOCAL-2M
    body: Local body PLANTED-LOCAL-2M
"""
)


@pytest.fixture
def project(runtime_project: Path) -> Path:
    return runtime_project


def write(tmp_path: Path, name: str, text: str) -> str:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return str(path)


def run(capsys, project: Path, *argv: str) -> tuple[int, str, str]:
    capsys.readouterr()
    code = main([*argv, "--root", str(project)])
    out, err = capsys.readouterr()
    return code, out, err


def pending(project: Path) -> list[Path]:
    folder = project / ".memzoi" / "proposals" / "pending"
    return sorted(folder.iterdir()) if folder.exists() else []


def test_seed_example_text_and_undo(capsys, project, tmp_path):
    code, out, err = run(capsys, project, "session-end", "--from-file", write(tmp_path, "s.yml", SEED))
    assert code == 0, err
    assert "session-end routed: change" in out and "repo" in out and "created" in out
    [packet] = pending(project)
    change = out.split("change ")[1].split()[0]
    code, out, err = run(capsys, project, "undo", change)
    assert code == 0, err
    assert pending(project) == []


def test_blocked_batch_output_has_no_content(capsys, project, tmp_path):
    path = write(tmp_path, "b.yml", BLOCKED)
    for argv in (
        ["session-end", "--from-file", path],
        ["session-end", "--from-file", path, "--operation-id", "op-b", "--expected-version", "0", "--json"],
    ):
        code, out, err = run(capsys, project, *argv)
        assert code == 1
        for planted in (TITLE, BODY, "PLANTED-LOCAL-2M", "Protected routes", "Implement auth middleware"):
            assert planted not in out and planted not in err
        if "--json" in argv:
            data = json.loads(out)
            assert data["error"]["code"] == "session_end_blocked" and data["written"] is False
            assert [c["outcome"] for c in data["candidates"]] == ["not_written", "blocked", "not_written"]
            assert data["candidates"][1]["reasons"] == ["sensitivity_not_repo_safe"]
            assert data["candidates"][1]["sensitivity"] == "unknown"  # omitted sensitivity is unknown
    assert pending(project) == []


def test_json_requires_operation_options(capsys, project, tmp_path):
    code, out, err = run(capsys, project, "session-end", "--from-file", write(tmp_path, "s.yml", SEED), "--json")
    assert code == 2 and out == "" and "--expected-version" in err
    assert pending(project) == []


def test_json_replay_conflict_and_from_checkpoint(capsys, project, tmp_path):
    path = write(tmp_path, "s.yml", SEED)
    argv = ["session-end", "--from-file", path, "--operation-id", "op-1", "--expected-version", "0", "--json"]
    code, out, _ = run(capsys, project, *argv)
    first = json.loads(out)
    assert code == 0 and first["candidates"][0]["outcome"] == "created"
    code, out, _ = run(capsys, project, *argv)
    assert code == 0 and json.loads(out)["replayed"] is True and len(pending(project)) == 1
    other = write(tmp_path, "o.yml", SEED.replace("server-side.", "on the server."))
    code, out, _ = run(
        capsys,
        project,
        "session-end",
        "--from-file",
        other,
        "--operation-id",
        "op-1",
        "--expected-version",
        "0",
        "--json",
    )
    assert code == 1 and json.loads(out)["error"]["code"] == "operation_id_conflict"
    # A checkpoint made --from-file with the YAML is a source; a note is not.
    code, out, _ = run(
        capsys,
        project,
        "checkpoint",
        "add",
        "--task",
        "T",
        "--from-file",
        other,
        "--operation-id",
        "ck",
        "--expected-version",
        "0",
        "--json",
    )
    cid = json.loads(out)["checkpoint"]["id"]
    code, out, _ = run(
        capsys,
        project,
        "session-end",
        "--from-checkpoint",
        cid,
        "--operation-id",
        "op-2",
        "--expected-version",
        "1",
        "--json",
    )
    assert code == 0 and json.loads(out)["candidates"][0]["outcome"] == "created"
    assert len(pending(project)) == 2
    code, out, _ = run(capsys, project, "checkpoint", "add", "--task", "T", "--note", SEED.replace("server", "srv"))
    note_id = out.split()[1]
    code, out, err = run(capsys, project, "session-end", "--from-checkpoint", note_id)
    assert code == 1 and "not_structured" in err


def test_subprocess_json(project, tmp_path):
    path = write(tmp_path, "s.yml", SEED)
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "memzoi",
            "session-end",
            "--from-file",
            path,
            "--operation-id",
            "op-s",
            "--expected-version",
            "0",
            "--json",
            "--root",
            str(project),
        ],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ},
    )
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    assert data["status"] == "routed" and data["candidates"][0]["path"].startswith(".memzoi/proposals/pending/")
    blocked = write(tmp_path, "b.yml", BLOCKED)
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "memzoi",
            "session-end",
            "--from-file",
            blocked,
            "--operation-id",
            "op-t",
            "--expected-version",
            "0",
            "--json",
            "--root",
            str(project),
        ],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ},
    )
    assert proc.returncode == 1
    for planted in (TITLE, BODY, "PLANTED-LOCAL-2M"):
        assert planted not in proc.stdout + proc.stderr
