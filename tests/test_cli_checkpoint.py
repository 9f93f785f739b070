"""``memzoi checkpoint add|continue|close|list``, in-process and as a subprocess with ``--json``: the seed's
examples (lifecycle document, "Runtime local and session continuity"), --json requiring --operation-id and
--expected-version (usage error, exit 2, nothing written), replay and conflict, and a refused secret that is
echoed nowhere."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from memzoi.cli.main import main


@pytest.fixture
def project(runtime_project: Path) -> Path:
    return runtime_project


def run(capsys, project: Path, *argv: str) -> tuple[int, str, str]:
    capsys.readouterr()
    code = main([*argv, "--root", str(project)])
    out, err = capsys.readouterr()
    return code, out, err


def js(capsys, project: Path, *argv: str) -> tuple[int, dict]:
    code, out, _ = run(capsys, project, *argv, "--json")
    return code, json.loads(out)


def test_seed_examples_in_order(capsys, project, tmp_path):
    notes = tmp_path / "notes.md"
    notes.write_text("Token refresh half done; next: tests.\n", encoding="utf-8")
    code, out, _ = run(capsys, project, "checkpoint", "add", "--task", "Auth middleware", "--note", "Started")
    assert code == 0 and "added" in out
    first = out.split()[1]
    code, out, _ = run(capsys, project, "checkpoint", "add", "--task", "Auth middleware", "--from-file", str(notes))
    assert code == 0
    second = out.split()[1]
    assert run(capsys, project, "checkpoint", "continue", first)[0] == 0
    code, out, _ = run(capsys, project, "checkpoint", "close", first)
    assert code == 0 and "closed" in out
    code, out, _ = run(capsys, project, "checkpoint", "close", first)
    assert code == 0 and "already closed" in out
    code, out, _ = run(
        capsys, project, "checkpoint", "add", "--task", "Auth middleware", "--note", "Day 2", "--successor-of", first
    )
    assert code == 0 and f"after {first}" in out
    code, data = js(capsys, project, "checkpoint", "list")
    assert code == 0 and data["version"] == 3
    by_id = {c["id"]: c for c in data["checkpoints"]}
    assert by_id[second]["body"] == "Token refresh half done; next: tests." and by_id[second]["source_kind"] == "file"
    assert by_id[first]["status"] == "closed" and by_id[first]["version"] == 3


def test_json_requires_operation_id_and_expected_version(capsys, project):
    code, out, err = run(capsys, project, "checkpoint", "add", "--task", "T", "--note", "N", "--json")
    assert code == 2 and out == "" and "--operation-id" in err
    code, data = js(capsys, project, "checkpoint", "list")
    assert data == {"version": 0, "checkpoints": []}


def test_json_replay_conflict_and_continue(capsys, project):
    argv = ["checkpoint", "add", "--task", "T", "--note", "N", "--operation-id", "op-1", "--expected-version", "0"]
    code, first = js(capsys, project, *argv)
    assert code == 0 and first["replayed"] is False
    code, again = js(capsys, project, *argv)
    assert code == 0 and again["replayed"] is True and again["checkpoint"]["id"] == first["checkpoint"]["id"]
    code, err = js(
        capsys,
        project,
        "checkpoint",
        "add",
        "--task",
        "T",
        "--note",
        "changed",
        "--operation-id",
        "op-1",
        "--expected-version",
        "0",
    )
    assert code == 1 and err["error"]["code"] == "operation_id_conflict"
    cid = first["checkpoint"]["id"]
    code, err = js(capsys, project, "checkpoint", "continue", cid, "--operation-id", "c", "--expected-version", "7")
    assert code == 1 and err["error"]["code"] == "version_conflict"
    code, out = js(capsys, project, "checkpoint", "continue", cid, "--operation-id", "c", "--expected-version", "1")
    assert code == 0 and out["checkpoint"]["version"] == 2


def test_secret_note_refused_and_not_echoed(capsys, project):
    secret = "postgres://admin:" + "Vq8rT2nL" + "5xK9wZ3p" + "@db.internal.example:5432/app"
    code, out, err = run(capsys, project, "checkpoint", "add", "--task", "T", "--note", f"use {secret}")
    assert code == 1 and secret not in out + err and "Vq8rT2nL5xK9wZ3p" not in out + err
    home = Path(os.environ["MEMZOI_HOME"])
    assert all(b"Vq8rT2nL5xK9wZ3p" not in p.read_bytes() for p in home.rglob("*") if p.is_file())


def test_subprocess_json(project):
    env = {**os.environ}
    base = [sys.executable, "-m", "memzoi", "checkpoint"]
    proc = subprocess.run(
        [
            *base,
            "add",
            "--task",
            "T",
            "--note",
            "N",
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
        env=env,
    )
    assert proc.returncode == 0, proc.stderr
    cid = json.loads(proc.stdout)["checkpoint"]["id"]
    proc = subprocess.run(
        [*base, "close", cid, "--operation-id", "close-1", "--expected-version", "1", "--json", "--root", str(project)],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
    )
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["checkpoint"]["status"] == "closed"
    proc = subprocess.run(
        [*base, "add", "--task", "T", "--note", "N", "--json", "--root", str(project)],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
    )
    assert proc.returncode == 2 and proc.stdout == ""
