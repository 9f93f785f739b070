"""Materialization (candidate → plan → decision → apply) with Memzoi's identities, and re-attestation."""

from __future__ import annotations

import json

import blake3
import pytest
import rfc8785

from memzoi import ledger
from memzoi.judge.analysis import analyze_path
from memzoi.judge.revision import record_revision
from memzoi.lifecycle.materialize import derive_decision, derive_plan, materialize_apply
from memzoi.lifecycle.materialize_candidate import build_candidate
from memzoi.lifecycle.reattest import reattest

from .. import builders
from ..builders import edit
from ..ledger.faults import tree


def draft(**fields) -> str:
    """A draft record for materialization, with ``fields`` overriding it. It has no ``description``: the
    materializer writes one from the body."""
    data = dict(
        type="preference",
        title="Prefer small modules",
        timestamp="2026-07-06T00:00:00Z",
        confidence=0.9,
        tags=["style"],
        description=None,
        body="Keep modules under 500 lines.",
    )
    return builders.record("prefer-small-modules", **{**data, **fields})


DRAFT = draft()
REL = ".memzoi/records/prefer-small-modules.md"


def domain(name: str, value) -> str:
    """Memzoi's identity construction, computed independently: blake3(domain ‖ 0 ‖ JCS(value))."""
    return (
        "blake3:"
        + blake3.blake3(f"memzoi.repository-materialization.{name}".encode() + b"\0" + rfc8785.dumps(value)).hexdigest()
    )


def test_identities_follow_memzoi_formulas(repo):
    cand = build_candidate(repo, DRAFT)
    assert cand["candidate_id"] == domain(
        "candidate-id",
        {
            k: cand[k]
            for k in (
                "schema",
                "destination",
                "action",
                "output_path",
                "expected_prior_revision",
                "target",
                "reason",
                "record",
            )
        },
    )
    assert cand["expected_prior_revision"] == {"kind": "absent"} and cand["output_path"] == REL
    assert cand["record"]["draft"]["body"] == "Keep modules under 500 lines."
    assert "updated" not in cand["record"] and "lineage" not in cand["record"]
    plan = derive_plan(cand)
    assert plan["plan_id"] == domain(
        "plan-id", {"schema": plan["schema"], "candidate_id": cand["candidate_id"], "outputs": plan["outputs"]}
    )
    assert plan["outputs"][0]["role"] == "canonical_record"
    dec = derive_decision(plan, "2026-07-07T00:00:00Z")
    assert dec["decision_id"] == domain(
        "decision-id",
        {
            k: dec[k]
            for k in (
                "schema",
                "plan_id",
                "candidate_id",
                "decision_at",
                "policy",
                "authorization_capability",
                "outputs",
            )
        },
    )
    # Deterministic: the same inputs give the same ids; another decision time another decision id only.
    assert derive_plan(build_candidate(repo, DRAFT)) == plan
    assert derive_decision(plan, "2026-07-08T00:00:00Z")["decision_id"] != dec["decision_id"]


def test_cli_flow_writes_an_attested_record_and_undo_removes_it(repo, cli, tmp_path):
    draft = tmp_path / "draft.md"
    draft.write_text(DRAFT)
    paths = {k: tmp_path / f"{k}.json" for k in ("candidate", "plan", "decision")}
    assert cli("materialize", "candidate", str(draft), "--output", str(paths["candidate"]))[0] == 0
    assert cli("materialize", "plan", str(paths["candidate"]), "--output", str(paths["plan"]))[0] == 0
    code, out = cli(
        "materialize",
        "decide",
        str(paths["plan"]),
        "--candidate",
        str(paths["candidate"]),
        "--output",
        str(paths["decision"]),
    )
    assert code == 0 and out["decision_id"].startswith("blake3:")
    code, err = cli("materialize", "plan", str(paths["candidate"]), "--output", str(paths["plan"]))
    assert code == 1 and err["error"]["code"] == "output_exists"
    code, err = cli("materialize", "plan", str(paths["candidate"]), "--output", str(repo / ".memzoi" / "p.json"))
    assert code == 1 and err["error"]["code"] == "unsafe_output_path"
    start = tree(repo)
    args = ["--candidate", str(paths["candidate"]), "--plan", str(paths["plan"]), "--decision", str(paths["decision"])]
    code, err = cli("materialize", "apply", *args, "--plan-id", "blake3:" + "0" * 64)
    assert code == 1 and err["error"]["code"] == "materialization_identity_mismatch"
    code, out = cli("materialize", "apply", *args)
    assert code == 0, out
    assert out["files"] == [{"path": REL, "before": "absent", "after": "present", "change": "created"}]
    analysis = analyze_path(repo / REL)
    assert analysis.findings == []
    block = analysis.document.data["materialization"]
    assert (
        block["action"] == "create" and block["decision_id"] == json.loads(paths["decision"].read_text())["decision_id"]
    )
    assert block["revision"]["revision_hash"] == record_revision(
        "prefer-small-modules", analysis.document.data, analysis.document.body
    )
    code, err = cli("materialize", "apply", *args)
    assert code == 1 and err["error"]["code"] == "already_current"
    assert cli("undo", out["change_id"])[0] == 0
    assert tree(repo) == start


def test_tampered_artifacts_and_preconditions_refuse(repo):
    cand = build_candidate(repo, DRAFT)
    plan = derive_plan(cand)
    dec = derive_decision(plan, "2026-07-07T00:00:00Z")
    start = tree(repo)

    def code_of(c, p, d) -> str:
        with pytest.raises(ledger.Refusal) as err:
            materialize_apply(repo, c, p, d, actor="r")
        return err.value.code

    assert code_of({**cand, "reason": "x"}, plan, dec) == "materialization_candidate_identity_mismatch"
    assert code_of(cand, {**plan, "plan_id": "blake3:" + "1" * 64}, dec) == "materialization_candidate_plan_mismatch"
    assert (
        code_of(cand, plan, {**dec, "decision_at": "2026-07-09T00:00:00Z"})
        == "materialization_decision_identity_mismatch"
    )
    assert code_of(cand, plan, {**dec, "policy": {"policy_id": "x", "safety_contract": "y"}}) in (
        "materialization_artifact_invalid",
        "materialization_policy_mismatch",
    )
    with pytest.raises(ledger.Refusal) as err:
        build_candidate(repo, draft(scope="project", scope_id="other"))
    assert err.value.code == "materialization_candidate_invalid"
    # A hand-made candidate for the wrong scope, with consistent ids, is still refused before any write.
    wrong = json.loads(json.dumps(cand))
    wrong["record"]["draft"]["scope_kind"] = "team"
    from memzoi.lifecycle.materialize_candidate import candidate_identity

    wrong["candidate_id"] = candidate_identity(wrong)
    wplan = derive_plan(wrong)
    assert code_of(wrong, wplan, derive_decision(wplan, "2026-07-07T00:00:00Z")) == (
        "materialization_candidate_not_repository_scoped"
    )
    assert tree(repo) == start
    materialize_apply(repo, cand, plan, dec, actor="r")
    with pytest.raises(ledger.Refusal) as err:
        build_candidate(repo, DRAFT)
    assert err.value.code == "materialization_create_conflict"
    # An update made against an older revision is stale once the record changed.
    update = build_candidate(repo, draft(body="Keep modules under 450 lines."), action="update")
    (repo / REL).write_bytes(edit((repo / REL).read_bytes().decode(), "500", "600").encode())
    uplan = derive_plan(update)
    assert code_of(update, uplan, derive_decision(uplan, "2026-07-08T00:00:00Z")) == "materialization_update_stale"


def test_update_flow(repo):
    cand = build_candidate(repo, DRAFT)
    plan = derive_plan(cand)
    materialize_apply(repo, cand, plan, derive_decision(plan, "2026-07-07T00:00:00Z"), actor="r")
    update = build_candidate(repo, draft(body="Keep modules under 300 lines."), action="update")
    assert update["expected_prior_revision"]["kind"] == "revision"
    uplan = derive_plan(update)
    res = materialize_apply(repo, update, uplan, derive_decision(uplan, "2026-07-08T00:00:00Z"), actor="r")
    assert res.files[0].before is not None and res.files[0].after is not None
    analysis = analyze_path(repo / REL)
    assert analysis.findings == [] and analysis.document.body == "Keep modules under 300 lines."
    assert analysis.document.data["materialization"]["action"] == "update"


def test_reattest_accepts_a_hand_edit_as_a_ledgered_decision(repo, cli):
    cand = build_candidate(repo, DRAFT)
    plan = derive_plan(cand)
    materialize_apply(repo, cand, plan, derive_decision(plan, "2026-07-07T00:00:00Z"), actor="r")
    path = repo / REL
    path.write_bytes(edit(path.read_bytes().decode(), "500 lines.", "400 lines.").encode())
    edited = path.read_bytes()
    assert [f.code for f in analyze_path(path).findings] == ["stale_attestation"]
    code, out = cli("reattest", "prefer-small-modules", "--reason", "reviewed the new limit")
    assert code == 0, out
    assert out["operation"] == "reattest" and out["details"]["previously_attested"] is True
    analysis = analyze_path(path)
    assert analysis.findings == [] and analysis.document.body == "Keep modules under 400 lines."
    assert analysis.document.data["materialization"]["action"] == "update"
    code, err = cli("reattest", "prefer-small-modules")
    assert code == 1 and err["error"]["code"] == "already_current"
    hist = cli("history", str(path))[1]["changes"]
    assert hist[0]["reason"] == "reviewed the new limit" and hist[0]["operation"] == "reattest"
    assert cli("undo", out["change_id"])[0] == 0
    assert path.read_bytes() == edited


def test_reattest_refuses_a_record_the_gate_blocks(repo):
    rec = repo / ".memzoi" / "records" / "rust-msrv-is-1-96-1.md"
    rec.write_bytes(edit(rec.read_bytes().decode(), "visibility: repo", "visibility: team").encode())
    before = tree(repo)
    with pytest.raises(ledger.Refusal) as err:
        reattest(repo, "rust-msrv-is-1-96-1", actor="r")
    assert err.value.code == "visibility_not_repository_safe"
    assert tree(repo) == before


def test_artifacts_are_found_beside_each_other_and_written_once(tmp_path):
    from memzoi.lifecycle.artifacts import artifact_kind, artifact_set, write_artifact
    from memzoi.lifecycle.materialize import PLAN_SCHEMA

    files = artifact_set(tmp_path / "x.plan.json")
    assert files == {
        "candidate": tmp_path / "x.json",
        "plan": tmp_path / "x.plan.json",
        "decision": tmp_path / "x.decision.json",
    }
    assert artifact_set(tmp_path / "x.decision.json") == artifact_set(tmp_path / "x.json") == files
    plan = {"schema": PLAN_SCHEMA, "plan_id": "p1"}
    assert artifact_kind(json.dumps(plan)) == "plan"
    assert artifact_kind("[1]") is None and artifact_kind("{") is None and artifact_kind("[" * 5000) is None
    write_artifact(files["plan"], plan)
    assert json.loads(files["plan"].read_text()) == plan and oct(files["plan"].stat().st_mode & 0o777) == "0o644"
    write_artifact(files["plan"], plan, same_ok=True)  # the same bytes again: accepted, nothing changes
    with pytest.raises(ledger.Refusal) as err:
        write_artifact(files["plan"], {**plan, "plan_id": "p2"}, same_ok=True)
    assert err.value.code == "output_exists" and json.loads(files["plan"].read_text()) == plan
    inside = tmp_path / ".memzoi" / "x.json"
    inside.parent.mkdir()
    with pytest.raises(ledger.Refusal) as err:
        write_artifact(inside, plan)
    assert err.value.code == "unsafe_output_path" and not inside.exists()
    (tmp_path / "real").mkdir()
    (tmp_path / "link").symlink_to(tmp_path / "real")
    with pytest.raises(ledger.Refusal) as err:
        write_artifact(tmp_path / "link" / "x.json", plan)
    assert err.value.code == "unsafe_output_path" and not (tmp_path / "real" / "x.json").exists()
