"""``memzoi maintenance plan`` and MCP ``plan_maintenance``: Memzoi's ``memzoi/maintenance-plan`` (exact duplicates,
contradictions as full sets with no winner, staleness, expiry), report-only, deterministic for a fixed snapshot
and time, ``--output`` only outside the worktree and the runtime home."""

from __future__ import annotations

import hashlib
import json
import subprocess
from pathlib import Path

import pytest

from memzoi.agent.maintenance import PLAN_SCHEMA, plan_maintenance, request
from memzoi.agent.maintenance_detect import conditional_or_temporal, polarity_signature
from memzoi.base.runtime import git_env
from memzoi.cli.main import main
from memzoi.ledger import Refusal

from . import builders

AT = "2026-08-01T00:00:00Z"


def _rec(root: Path, rid: str, **fields) -> None:
    fields.setdefault("description", None)
    fields.setdefault("timestamp", "2026-07-20T00:00:00Z")
    builders.write(root, builders.record_path(rid), builders.record(rid, **fields))


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    (root / ".memzoi" / "records").mkdir(parents=True)
    subprocess.run(["git", "init", "-q", "--template=", str(root)], check=True, env=git_env())
    _rec(root, "dup-a", title="Use pnpm", body="Install with pnpm.")
    _rec(root, "dup-b", title="use  PNPM", body="Install with pnpm.\n")  # same claim: title normalised, body trimmed
    _rec(root, "cache-on", title="Cache state", body="The build cache is enabled.")
    _rec(root, "cache-off", title="Cache state", body="The build cache is not enabled.")
    _rec(root, "cache-off-too", title="Cache state", body="The build cache is not enabled.", tags=["ci"])
    _rec(root, "cache-if", title="Cache state", body="If CI runs, the build cache is not enabled.")
    _rec(root, "old-rule", title="Old rule", body="Releases go out on Fridays.", timestamp="2026-01-01T00:00:00Z")
    _rec(
        root,
        "outage",
        type="episode",
        lane="episodic",
        title="Outage",
        body="The deploy failed.",
        retention={"occurred_at": "2026-06-01T00:00:00Z"},
    )
    return root


def _files(root: Path) -> dict[str, str]:
    return {
        str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(root.rglob("*"))
        if p.is_file() and ".git" not in p.parts
    }


def _kinds(plan: dict) -> dict[str, list[list[str]]]:
    out: dict[str, list[list[str]]] = {}
    for f in plan["findings"]:
        out.setdefault(f["kind"], []).append(f["record_ids"])
    return out


def test_polarity_and_conditional_rules():
    assert polarity_signature("The cache is enabled.") == ("the cache is enabled", False)
    assert polarity_signature("The cache is not enabled.") == ("the cache is enabled", True)
    assert polarity_signature("Feature flags must be false") == ("feature flags must be <boolean>", True)
    assert polarity_signature("Not this") is None and polarity_signature("Run the tests.") is None
    assert conditional_or_temporal("As of 2026 it is on") and conditional_or_temporal("if so")
    assert not conditional_or_temporal("The cache is enabled.")


def test_plan_reports_each_kind_and_picks_no_winner(project):
    plan = plan_maintenance(project, request(evaluated_at=AT))
    assert plan["schema"] == PLAN_SCHEMA and plan["authority"]["mode"] == "report_only"
    kinds = _kinds(plan)
    assert kinds["exact_duplicate"] == [["dup-a", "dup-b"]]
    assert kinds["high_confidence_contradiction"] == [["cache-off", "cache-off-too", "cache-on"]]
    (contra,) = [f for f in plan["findings"] if f["kind"] == "high_confidence_contradiction"]
    assert [e["record_ids"] for e in contra["conflict_edges"]] == [
        ["cache-off", "cache-on"],
        ["cache-off-too", "cache-on"],
    ]
    assert contra["proposed_action_ids"] == []  # no resolution is chosen
    assert kinds["stale"] == [["old-rule"]]
    assert kinds["expired"] == [["outage"]]
    (exp,) = [f for f in plan["findings"] if f["kind"] == "expired"]
    assert exp["evidence"][0]["code"] == "retention_episodicordinarywindow"
    assert exp["evidence"][0]["boundary"] == "2026-07-01T00:00:00Z"
    (action,) = plan["action_groups"][0]["actions"]
    assert action["class"] == "consolidate_exact_duplicates" and action["record_ids"] == ["dup-a", "dup-b"]
    assert plan["summary"] == {
        "records": 8,
        "exact_duplicates": 1,
        "contradictions": 1,
        "stale": 1,
        "expired": 1,
        "renewal_candidates": 0,
        "action_candidates": 1,
    }
    assert plan["not_after"] == "2026-08-02T00:00:00Z"  # 24 h: no boundary falls inside the window


def test_plan_is_deterministic_and_writes_nothing(project):
    before = _files(project)
    one = plan_maintenance(project, request(evaluated_at=AT))
    two = plan_maintenance(project, request(evaluated_at=AT))
    assert one == two and one["plan_id"].startswith("blake3:")
    assert _files(project) == before
    later = plan_maintenance(project, request(evaluated_at="2026-08-01T00:00:01Z"))
    assert later["plan_id"] != one["plan_id"]


def test_targets_select_findings_and_unknown_targets_are_refused(project):
    plan = plan_maintenance(project, request(["dup-b"], AT))
    assert _kinds(plan) == {"exact_duplicate": [["dup-a", "dup-b"]]}
    assert plan["scope"]["target_record_ids"] == ["dup-b"] and list(plan["preconditions"]["target_versions"]) == [
        "dup-b"
    ]
    with pytest.raises(Refusal) as err:
        plan_maintenance(project, request(["nope"], AT))
    assert err.value.code == "not_found"
    with pytest.raises(Refusal):
        request(evaluated_at="tomorrow")


def test_cli_output_only_outside_the_worktree(project, tmp_path, capsys):
    root = str(project)
    assert main(["maintenance", "plan", "--root", root, "--evaluated-at", AT, "--json"]) == 0
    printed = json.loads(capsys.readouterr().out)
    inside = project / "plan.json"
    assert main(["maintenance", "plan", "--root", root, "--evaluated-at", AT, "--output", str(inside)]) == 1
    assert not inside.exists()
    outside = tmp_path / "out" / "plan.json"
    outside.parent.mkdir()
    assert main(["maintenance", "plan", "--root", root, "--evaluated-at", AT, "--output", str(outside)]) == 0
    assert json.loads(outside.read_text()) == printed
    assert "exact_duplicate: dup-a, dup-b" in capsys.readouterr().out


def test_a_fresh_accepted_capture_after_the_boundary_is_a_renewal_candidate(tmp_path):
    root = tmp_path / "renew"
    (root / ".memzoi" / "records").mkdir(parents=True)
    subprocess.run(["git", "init", "-q", "--template=", str(root)], check=True, env=git_env())
    claim = {"title": "Release notes live in CHANGES", "body": "Write release notes in CHANGES.md."}
    _rec(
        root,
        "old-claim",
        retention={"explicit_expires_at": "2026-07-10T00:00:00Z"},
        timestamp="2026-06-01T00:00:00Z",
        **claim,
    )
    capture = {
        "review_outcome": "accept",
        "reviewed_at": "2026-07-20T00:00:00Z",
        "evidence": [{"source_id": "notes", "evidence_content_hash": "blake3:" + "a" * 64}],
    }
    _rec(
        root,
        "fresh-claim",
        capture=capture,
        timestamp="2026-07-20T00:00:00Z",
        origin={"origin_key": "capture:fresh", "route": "capture"},
        **claim,
    )
    _rec(
        root,
        "early-claim",
        capture={**capture, "reviewed_at": "2026-07-05T00:00:00Z"},
        timestamp="2026-07-05T00:00:00Z",
        origin={"origin_key": "capture:early", "route": "capture"},
        **claim,
    )
    plan = plan_maintenance(root, request(evaluated_at=AT))
    (found,) = [f for f in plan["findings"] if f["kind"] == "renewal_candidate"]
    assert found["record_ids"] == ["fresh-claim", "old-claim"]  # the review before the boundary renews nothing
    assert found["evidence"][0]["code"] == "fresh_accepted_capture_evidence"
    assert found["evidence"][0]["boundary"] == "2026-07-10T00:00:00Z"
    (action,) = [a for a in plan["action_groups"][0]["actions"] if a["class"] == "create_renewal_successor"]
    assert action["predecessor_record_id"] == "old-claim" and action["evidence_record_id"] == "fresh-claim"
    assert plan["summary"]["renewal_candidates"] == 1
