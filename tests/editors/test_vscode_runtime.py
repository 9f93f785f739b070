"""The runtime plane in a real VS Code (code-server with the packaged .vsix, driven by cs_runtime.js in headless
Chromium). Issue 33: the checkpoint an agent left is listed in the Memory Inbox, opened, continued and closed, each
previewed (nothing written) then applied; the Memory Health view lists duplicates, contradictions and expiring
records, each opening its record; an agent's session-end file is planned with Ctrl+. (*Plan memory routing*), the
preview lists each candidate and writes nothing, and after Apply the packet is in the inbox and the checkpoint in
its section, as one ledgered change. Issue 34: a reflection job made by ``memzoi resident reflect`` against a local
stub endpoint is listed under the resident section, opens its request and outcome, and its candidate opens it."""

from __future__ import annotations

import json
import os
import subprocess
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from memzoi import ledger as L
from memzoi.lifecycle import checkpoints as C
from memzoi.lifecycle.checkpoints import add_checkpoint
from memzoi.resident.format import parse

from .. import builders
from ..resident.reflection_helpers import ADD, transcript, user_config
from ..resident.stub_endpoint import Reply, Stub, call
from .conftest import SECRET_RECORD, captures_dir, make_workspace, planted_token, require, venv_bin
from .test_vscode_e2e import USER_SETTINGS, code_server, drive  # noqa: F401  (code_server is a fixture)

pytestmark = pytest.mark.editor_packages

SESSION_FILE = "session-end.yml"
SESSION = """task: "Implement auth middleware"
candidates:
  - destination: repo
    type: decision
    lane: semantic
    title: Deploys go through the release branch
    body: Every deploy goes through the release branch.
    sensitivity: repo-safe
  - destination: session
    type: episode
    lane: session
    title: Where I stopped
    body: Refresh flow half done.
"""
EDITED = "Run make lint and make test before pushing."
HEALTH = {"duplicates": ["dup-a"], "contradictions": ["cache-on", "cache-off"], "expiring": ["expiring-rule"]}


def _record(root: Path, rid: str, **fields) -> None:
    fields.setdefault("description", None)
    fields.setdefault("timestamp", "2026-11-20T00:00:00Z")
    builders.write(root, builders.record_path(rid), builders.record(rid, **fields))


def add_health_findings(root: Path) -> None:
    """Two duplicate records, two contradicting ones and one whose retention boundary is three days away."""
    _record(root, "dup-a", title="Use pnpm", body="Install with pnpm.")
    _record(root, "dup-b", title="use  PNPM", body="Install with pnpm.\n")
    _record(root, "cache-on", title="Cache state", body="The build cache is enabled.")
    _record(root, "cache-off", title="Cache state", body="The build cache is not enabled.")
    soon = (datetime.now(UTC) + timedelta(days=3)).strftime("%Y-%m-%dT%H:%M:%SZ")
    _record(
        root,
        "expiring-rule",
        title="Freeze window",
        body="Merges pause during the freeze.",
        retention={"explicit_expires_at": soon},
    )


def _settings(server: str) -> dict:
    return dict(USER_SETTINGS, **{"memzoi.server.path": server})


@pytest.mark.timeout(1800)
def test_checkpoints_memory_health_and_session_end_routing(
    code_server: Path,
    vsix: Path,
    tmp_path: Path,  # noqa: F811
    corpus: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    server = venv_bin("memzoi-lsp")
    require(server is not None, "memzoi-lsp is not installed (pip install -e .)")
    monkeypatch.setenv("MEMZOI_HOME", str(tmp_path / "memzoi-home"))  # the runtime plane drive() gives the editor
    ws = make_workspace(tmp_path / "ws", corpus)
    root = ws["root"]
    add_health_findings(root)
    (root / SESSION_FILE).write_text(SESSION, encoding="utf-8")
    cid = add_checkpoint(root, task="Auth middleware", body="Stopped at token refresh.", actor="agent")["checkpoint"][
        "id"
    ]
    shots = captures_dir()
    shots.mkdir(parents=True, exist_ok=True)
    p, report, exthost = drive(
        code_server,
        vsix,
        tmp_path,
        ws,
        _settings(server),
        shots,
        script="cs_runtime.js",
        PHASE="checkpoints",
        CHECKPOINT=cid,
        SECRET_RECORD=SECRET_RECORD,
        SESSION_FILE=SESSION_FILE,
        HEALTH=json.dumps(HEALTH),
        MEMZOI_BIN=venv_bin("memzoi") or "memzoi",
    )
    assert p.returncode == 0, (
        f"{report.get('error')}\n{p.stdout[-4000:]}\n{p.stderr[-2000:]}\n--- Memzoi output\n{exthost}"
    )
    steps = {s["name"]: s for s in report["steps"]}
    assert planted_token() not in json.dumps(report) + p.stdout
    for name in (
        "inbox lists the open checkpoint with Continue and Close",
        "Memory Health says why it has no plan",
        "Open shows the checkpoint",
        "Continue Checkpoint: previewed",
        "Continue Checkpoint: applied",
        "the row shows the new version",
        "Close Checkpoint: previewed",
        "Close Checkpoint: applied",
        "a closed checkpoint leaves the inbox",
        "Memory Health lists duplicates, contradictions and expiring records",
        *(f"Memory Health: {k} {r} opens its record" for k, ids in HEALTH.items() for r in ids),
        "routing preview",
        "routing applied",
        "the packet is in the inbox and the checkpoint in its section",
    ):
        assert name in steps, (name, list(steps))
    # Each transition was previewed (the question named the checkpoint) and then applied: closed at v3.
    assert cid in steps["Continue Checkpoint: previewed"]["question"]
    checkpoints = {c.id: c for c in C.list_checkpoints(root)[1]}
    assert checkpoints[cid].status == "closed" and checkpoints[cid].version == 3
    # The routing wrote the packet and the checkpoint as one ledgered change.
    (created,) = steps["routing applied"]["created"]
    packet = root / ".memzoi" / "proposals" / "pending" / created
    assert "Deploys go through the release branch" in packet.read_text(encoding="utf-8")
    assert [c.title for c in checkpoints.values() if c.id != cid] == ["Where I stopped"]
    assert L.history(root)[0].operation == "session_end"  # newest first: the routing was the last change
    for png in (
        "vscode-checkpoints.png",
        "vscode-memory-health-refused.png",
        "vscode-checkpoint-continue.png",
        "vscode-checkpoint-close.png",
        "vscode-memory-health.png",
        "vscode-routing-preview.png",
        "vscode-routing-applied.png",
    ):
        assert (shots / png).stat().st_size > 10_000, png


@pytest.mark.timeout(1800)
def test_reflection_jobs_in_the_inbox(
    code_server: Path,
    vsix: Path,
    tmp_path: Path,
    corpus: Path,  # noqa: F811
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    server, cli = venv_bin("memzoi-lsp"), venv_bin("memzoi")
    require(server is not None and cli is not None, "memzoi-lsp is not installed (pip install -e .)")
    ws = make_workspace(tmp_path / "ws", corpus)
    root = ws["root"]
    (root / ".zuno").mkdir()
    (root / ".zuno" / "RULES.md").write_text("Use tabs in Makefiles.", encoding="utf-8")
    # The same runtime plane and user configuration as drive() gives the editor (ZUNO_CONFIG_DIR = tmp_path/zuno).
    env = dict(
        os.environ,
        MEMZOI_HOME=str(tmp_path / "memzoi-home"),
        ZUNO_CONFIG_DIR=str(tmp_path / "zuno"),
        STUB_REFLECTION_KEY="stub-" + "key",
        MEMZOI_ACTOR="agent",
    )

    def memzoi(*args: str) -> str:
        done = subprocess.run(
            [cli, "resident", *args, "--root", str(root)],
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
            stdin=subprocess.DEVNULL,
        )
        assert done.returncode == 0, done.stdout + done.stderr
        return done.stdout

    with Stub() as stub:
        user_config(tmp_path, stub.url, nudge=1)
        stub.replies.append(Reply("json", [call("propose_resident_memory", ADD)]))
        memzoi("turn", "--session", "s", "--message", "msg_1", "--json")
        out = memzoi("reflect", "--session", "s", "--transcript", str(transcript(tmp_path)))
    assert out.startswith("completed: job reflection_"), out
    (job,) = json.loads(memzoi("jobs", "--json"))["jobs"]
    (cand_id,) = job["outcome"]["candidates"]
    shots = captures_dir()
    shots.mkdir(parents=True, exist_ok=True)
    p, report, exthost = drive(
        code_server,
        vsix,
        tmp_path,
        ws,
        _settings(server),
        shots,
        script="cs_runtime.js",
        PHASE="reflection",
        JOB=job["id"],
        CANDIDATE=json.dumps({"id": cand_id, "text": ADD["content"]}),
        EDITED=EDITED,
        REMOVE="Use tabs in Makefiles.",
    )
    assert p.returncode == 0, (
        f"{report.get('error')}\n{p.stdout[-4000:]}\n{p.stderr[-2000:]}\n--- Memzoi output\n{exthost}"
    )
    steps = {s["name"]: s for s in report["steps"]}
    for name in (
        "the resident section lists the reflection job and its candidate",
        "the job row opens its request and outcome",
        "the job document ends with its outcome",
        "the candidate opens the job that proposed it",
        "Edit and Approve: review",
        "Edit and Approve: written",
        "Remove entry: review",
        "Remove entry: written",
    ):
        assert name in steps, (name, list(steps))
    assert job["id"] in steps["the job row opens its request and outcome"]["shown"]
    assert job["id"] in steps["the candidate opens the job that proposed it"]["shown"]
    # Both writes were previewed, then applied: the edited entry replaced the proposal, the removed one is gone.
    assert parse((root / ".zuno" / "RULES.md").read_text(encoding="utf-8")) == [EDITED]
    for png in (
        "vscode-reflection-jobs.png",
        "vscode-reflection-job.png",
        "vscode-resident-edit.png",
        "vscode-resident-remove.png",
    ):
        assert (shots / png).stat().st_size > 10_000, png
