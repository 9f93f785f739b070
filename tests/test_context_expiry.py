"""``memzoi context``, ``memzoi handoff`` and ``memzoi expiry``: every item names its plane (git records
``provenance: git``, runtime rows ``provenance: runtime`` in their own section and only when asked), and the expiry
diagnostic has Memzoi's ``ExpiryDiagnostic`` shape and sentences."""

from __future__ import annotations

import json
import subprocess
from datetime import UTC, datetime
from pathlib import Path

import pytest

from memzoi.agent.context import context_pack, handoff
from memzoi.agent.expiry import inspect_expiry
from memzoi.base.runtime import git_env
from memzoi.cli.main import main
from memzoi.ledger import Refusal
from memzoi.lifecycle.checkpoint_transitions import close_checkpoint
from memzoi.lifecycle.checkpoints import add_checkpoint
from memzoi.lifecycle.local import add_local

from . import builders

TASK = "rotate signing keys"


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    (root / ".memzoi" / "records").mkdir(parents=True)
    subprocess.run(["git", "init", "-q", "--template=", str(root)], check=True, env=git_env())
    builders.write(
        root,
        builders.record_path("key-rotation"),
        builders.record(
            "key-rotation",
            title="Signing keys rotate with an overlap",
            body="Rotate signing keys with a 7 day overlap.",
            applies_to=["config/keys.toml"],
            description=None,
        ),
    )
    builders.write(
        root,
        builders.record_path("old-episode"),
        builders.record(
            "old-episode",
            lane="episodic",
            type="episode",
            title="Signing outage",
            body="Keys expired during a deploy.",
            retention={"occurred_at": "2026-01-01T00:00:00Z"},
            description=None,
        ),
    )
    add_local(root, title="My signing keys habit", body="I rotate signing keys on Mondays.", actor="tester")
    add_local(root, title="Unrelated local note", body="Coffee is in the left cupboard.", actor="tester")
    add_checkpoint(root, task="Rotate signing keys", body="Stopped after the staging rotation.", actor="tester")
    return root


def _planes(pack: dict) -> set[tuple[str, str]]:
    return {(e["id"], e["provenance"]) for e in pack["records"] + pack["runtime"]}


def test_context_is_repository_only_unless_runtime_is_asked_for(project):
    pack = context_pack(project, TASK)
    assert _planes(pack) == {("key-rotation", "git")}
    assert all(e["destination"] == "repo" for e in pack["records"]) and pack["runtime"] == []


def test_runtime_rows_come_in_their_own_section_marked_runtime(project):
    pack = context_pack(project, TASK, include_local=True, include_session=True)
    assert [e["id"] for e in pack["records"]] == ["key-rotation"]
    kinds = {(e["destination"], e["provenance"]) for e in pack["runtime"]}
    assert kinds == {("local", "runtime"), ("session", "runtime")}
    assert all("not repository truth" in e["text"] for e in pack["runtime"])
    assert "Coffee" not in json.dumps(pack)  # an unrelated local row is not recalled
    only_local = context_pack(project, TASK, include_local=True)
    assert {e["destination"] for e in only_local["runtime"]} == {"local"}


def test_budget_counts_runtime_after_repository_records(project):
    full = context_pack(project, TASK, include_local=True, include_session=True)
    tight = context_pack(
        project, TASK, include_local=True, include_session=True, token_budget=full["records"][0]["tokens"]
    )
    assert [e["id"] for e in tight["records"]] == ["key-rotation"] and tight["runtime"] == []
    assert len(tight["omitted"]) == 2


def test_handoff_includes_every_open_checkpoint_and_no_closed_one(project):
    add_checkpoint(project, task="Unrelated chore", body="Half way through the changelog.", actor="tester")
    out = handoff(project, "deploy", include_session=True)
    assert out["kind"] == "handoff" and len([e for e in out["runtime"] if e["destination"] == "session"]) == 2
    for cp in out["runtime"]:
        close_checkpoint(project, cp["id"])
    assert handoff(project, "deploy", include_session=True)["runtime"] == []


def test_expiry_of_a_durable_record_is_included(project):
    at = datetime(2026, 8, 1, tzinfo=UTC)
    out = inspect_expiry(project, "key-rotation", at)
    assert set(out) == {
        "record",
        "evaluated_at",
        "retention",
        "current_assertion",
        "exclusions",
        "excluded_from_normal_reads",
        "reason",
    }
    assert out["retention"] == {"state": "current", "effective_boundary": None, "reason": "no_age_limit"}
    assert out["current_assertion"] is True and out["excluded_from_normal_reads"] is False
    assert out["reason"].startswith("included in ordinary reads: retention is current at 2026-08-01T00:00:00Z")
    assert out["record"]["provenance"] == "git" and out["record"]["destination"] == "repo"


def test_expiry_boundary_is_inclusive_for_an_episode(project):
    before = inspect_expiry(project, "old-episode", datetime(2026, 1, 30, 23, 59, 59, tzinfo=UTC))
    at = inspect_expiry(project, "old-episode", datetime(2026, 1, 31, tzinfo=UTC))
    assert before["current_assertion"] is True
    assert at["retention"] == {
        "state": "query_only",
        "effective_boundary": "2026-01-31T00:00:00Z",
        "reason": "episodic_ordinary_window",
    }
    assert at["excluded_from_normal_reads"] is True
    assert at["exclusions"] == [
        {"kind": "retention", "reason": "episodic_ordinary_window", "boundary": "2026-01-31T00:00:00Z"}
    ]
    assert at["reason"].startswith("excluded from ordinary reads by current-assertion exclusions: [")


def test_expiry_of_an_unknown_record_is_refused(project):
    with pytest.raises(Refusal) as err:
        inspect_expiry(project, "my-signing-keys-habit")  # a local row is not a repository record
    assert err.value.code == "not_found"


def test_cli_context_handoff_and_expiry(project, capsys):
    root = str(project)
    assert main(["context", "--root", root, "--task", TASK, "--include-local", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert {e["provenance"] for e in out["records"]} == {"git"} and out["runtime"][0]["provenance"] == "runtime"
    assert main(["context", "--root", root, "--task", TASK]) == 0
    assert "provenance git" in capsys.readouterr().out
    assert main(["handoff", "--root", root]) == 2
    assert main(["handoff", "--root", root, "--task", TASK, "--include-session", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["kind"] == "handoff"
    assert main(["expiry", "--root", root, "old-episode", "--evaluated-at", "2026-02-01T00:00:00Z", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["excluded_from_normal_reads"] is True
    assert main(["expiry", "--root", root, "old-episode", "--evaluated-at", "yesterday"]) == 2
    assert main(["expiry", "--root", root, "nope"]) == 1


def test_a_secret_in_the_task_is_never_echoed(project):
    token = "ghp_" + "aB3dE5fG7hJ9kL1mN2pQ4" + "rS6tU8vW0xY2zA4"  # built at run time
    pack = context_pack(project, f"rotate signing keys with {token}")
    assert token not in json.dumps(pack) and "[redacted]" in pack["task"]
