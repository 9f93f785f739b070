"""The one rule of which lifecycle operations a file offers (memzoi.lifecycle.offers): packets by the can-apply
rule, records by their status and findings, every file by its ledger facts; unsaved edits block them all."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from memzoi.base.findings import finding
from memzoi.base.runtime import git_env
from memzoi.judge.analysis import analyze_path
from memzoi.judge.workspace import Role
from memzoi.ledger import Refusal
from memzoi.ledger.model import RECOVERY_MODES, ChangeRecord, FileChange
from memzoi.ledger.view import FileLedger
from memzoi.lifecycle.offers import INACTIVE, UNSAVED, file_offers, path_blocker
from memzoi.lifecycle.readiness import readiness, record_blockers
from memzoi.lifecycle.reattest import reattest

from .. import builders


def change(cid: str, status: str = "applied", operation: str = "apply") -> ChangeRecord:
    return ChangeRecord(
        id=cid,
        seq=1,
        operation=operation,
        actor="ana",
        source="cli",
        reason=None,
        summary="",
        status=status,
        phase="done",
        diagnostic=None,
        details={},
        created_at="2026-07-01T00:00:00Z",
        updated_at="2026-07-01T00:00:00Z",
        applied_at="2026-07-01T00:00:00Z",
        undone_at=None,
        undo_actor=None,
        undo_source=None,
        files=[FileChange(".memzoi/records/x.md", None, b"x")],
    )


def ops(offers) -> list[tuple[str, str | None]]:
    return [(o.operation, o.blocked) for o in offers]


def test_an_applicable_packet_offers_apply_with_its_preview_and_reject():
    offers = file_offers(Role.PENDING, {}, [], readiness([]), None, lambda c: True, unsaved=False)
    assert ops(offers) == [("review", None), ("apply", None), ("reject", None)]  # review first (issue 28)
    assert offers[1].preview and not offers[0].preview and not offers[2].preview


def test_a_blocked_packet_says_why_and_offers_local_memory_only_where_it_fits():
    gate = finding("sensitivity_not_repo_safe", "sensitivity is local-only", 0, 1)
    r = readiness([gate], sensitivity="local-only")
    offers = file_offers(Role.PENDING, {}, [gate], r, None, lambda c: True, unsaved=False)
    assert [o.operation for o in offers] == ["review", "apply", "reject", "route_local"]
    # the action's title reads "Apply proposal (blocked: <codes>; <way out>)", not "(blocked: no: blocked by …)"
    assert offers[1].blocked == "sensitivity_not_repo_safe; route it to local memory or reject it"
    assert r.statement() == "no: blocked by " + offers[1].blocked  # one wording, two framings
    assert offers[0].blocked is None  # the review shows why and offers the rest
    assert offers[2].blocked is None and offers[3].blocked is None  # rejecting or routing is always open
    secret = readiness([gate], sensitivity="secret")
    assert "route_local" not in [
        o.operation for o in file_offers(Role.PENDING, {}, [gate], secret, None, lambda c: True, unsaved=False)
    ]


def test_an_active_record_offers_supersede_and_tombstone_blocked_by_its_errors():
    assert ops(file_offers(Role.RECORD, {"status": "active"}, [], None, None, lambda c: True, unsaved=False)) == [
        ("supersede", None),
        ("tombstone", None),
    ]
    err = finding("invalid_value", "lane is not valid", 0, 1)
    offers = file_offers(Role.RECORD, {"status": "active"}, [err], None, None, lambda c: True, unsaved=False)
    why = f"invalid_value: {err.message}"  # every blocking reason, as the command's refusal names it
    assert ops(offers) == [("supersede", why), ("tombstone", why)]
    # Only an active record can be superseded or tombstoned (Memzoi): nothing for a superseded one.
    assert file_offers(Role.RECORD, {"status": "superseded"}, [], None, None, lambda c: True, unsaved=False) == []


def test_a_changed_record_offers_reattest():
    for code in ("stale_attestation", "ledger_drift"):
        stale = finding(code, "edited after review", 0, 1)
        offers = file_offers(Role.RECORD, {"status": "active"}, [stale], None, None, lambda c: True, unsaved=False)
        assert ops(offers)[-1] == ("reattest", None) and offers[-1].preview  # the hand edit is shown first
        # A superseded record cannot be re-attested (Memzoi attests only active records): the offer says why.
        offers = file_offers(Role.RECORD, {"status": "superseded"}, [stale], None, None, lambda c: True, unsaved=False)
        assert ops(offers) == [("reattest", INACTIVE)]


def test_undo_only_while_exact_and_every_recovery_mode_of_each_uncertain_change():
    last, stuck = change("c-last"), change("c-stuck", status="uncertain")
    ledger = FileLedger(uncertain=[stuck], last=last)
    offers = file_offers(Role.RECORD, {"status": "deprecated"}, [], None, ledger, lambda c: c is last, unsaved=False)
    assert [(o.operation, o.change.id if o.change else None, o.mode) for o in offers] == [("undo", "c-last", None)] + [
        ("recover", "c-stuck", m) for m in RECOVERY_MODES
    ]
    # The files changed since: the ledger could not restore their exact before bytes, so no Undo.
    offers = file_offers(Role.RECORD, {"status": "deprecated"}, [], None, ledger, lambda c: False, unsaved=False)
    assert [o.operation for o in offers] == ["recover"] * len(RECOVERY_MODES)


def test_unsaved_edits_block_every_offer_with_that_reason():
    ledger = FileLedger(uncertain=[], last=change("c1"))
    offers = file_offers(Role.PENDING, {}, [], readiness([]), ledger, lambda c: True, unsaved=True)
    assert [o.operation for o in offers] == ["review", "apply", "reject", "undo"]
    assert {o.blocked for o in offers} == {UNSAVED}


# --- defect: Re-attest offered enabled on a record its command refuses (a credential; a symlinked record) --------


def _token() -> str:
    return "ghp_" + "".join(chr(ord("a") + (i * 5) % 26) for i in range(36))  # built here, never printed


def _stale_record(root: Path, rid: str, body: str) -> Path:
    """An attested record of ``root`` edited by hand after its attestation (``stale_attestation``)."""
    text = builders.record(rid, title="Deploy notes", body="Deploy from main.", attested=True)
    path = builders.write(root, builders.record_path(rid), builders.edit(text, "Deploy from main.", body))
    return path


def _offers_of(root: Path, path: Path) -> list:
    analysis = analyze_path(path)
    rel = path.relative_to(root).as_posix()
    return file_offers(
        Role.RECORD,
        analysis.document.data or {},
        analysis.findings,
        None,
        None,
        lambda c: False,
        unsaved=False,
        unwritable=path_blocker(root, rel),
    )


def test_a_record_holding_a_credential_offers_reattest_disabled_with_the_commands_reason(tmp_path):
    root = tmp_path / "repo"
    subprocess.run(["git", "init", "-q", "--template=", str(root)], check=True, env=git_env())
    path = _stale_record(root, "deploy-token", f"Deploy with {_token()} from main.")
    offers = {o.operation: o for o in _offers_of(root, path)}
    assert {"reattest", "supersede", "tombstone"} <= set(offers)
    with pytest.raises(Refusal) as refused:
        reattest(root, "deploy-token", actor="r")
    assert refused.value.code == "credential_token"
    for op in ("reattest", "supersede", "tombstone"):
        blocked = offers[op].blocked
        assert blocked is not None and blocked.startswith("credential_token: "), (op, blocked)
        assert _token() not in blocked and "stale_attestation" not in offers["reattest"].blocked
    assert _token() not in refused.value.message


def test_a_symlinked_record_blocks_every_offer_with_the_ledgers_reason(tmp_path):
    root = tmp_path / "repo"
    subprocess.run(["git", "init", "-q", "--template=", str(root)], check=True, env=git_env())
    outside = _stale_record(tmp_path / "elsewhere", "outside", "Deploy from a tag.")
    link = root / builders.record_path("outside")
    link.parent.mkdir(parents=True)
    link.symlink_to(outside)
    offers = _offers_of(root, link)
    assert "reattest" in [o.operation for o in offers]
    with pytest.raises(Refusal) as refused:
        reattest(root, "outside", actor="r")
    assert refused.value.code == "unsafe_path"
    assert all(o.blocked and f"unsafe_path: {refused.value.message}" in o.blocked for o in offers)
    assert path_blocker(root, ".memzoi/records/other.md") is None  # a regular path blocks nothing


def test_record_blockers_is_the_rule_of_each_record_operation():
    stale = finding("stale_attestation", "edited after review", 0, 1)
    secret = finding("credential_token", "a credential", 0, 1)
    assert record_blockers([stale], operation="reattest", status="active") == []  # what re-attesting settles
    assert [b.code for b in record_blockers([stale], operation="supersede", status="active")] == ["stale_attestation"]
    assert [b.code for b in record_blockers([stale, secret], operation="reattest", status="deprecated")] == [
        "credential_token",
        "record_not_active",
    ]


def test_a_symlinked_packet_blocks_review_apply_reject_and_undo(tmp_path):
    root = tmp_path / "repo"
    outside = builders.write(tmp_path / "elsewhere", builders.packet_path("mem-new"), builders.packet("mem-new"))
    link = root / builders.packet_path("mem-new")
    link.parent.mkdir(parents=True)
    link.symlink_to(outside)
    why = path_blocker(root, builders.packet_path("mem-new"))
    assert why is not None and why.startswith("unsafe_path: ")
    ledger = FileLedger(uncertain=[], last=change("c1"))
    offers = file_offers(Role.PENDING, {}, [], readiness([]), ledger, lambda c: True, unsaved=False, unwritable=why)
    assert [o.operation for o in offers] == ["review", "apply", "reject", "undo"]
    assert all(o.blocked == why for o in offers)
    both = file_offers(Role.PENDING, {}, [], readiness([]), None, lambda c: True, unsaved=True, unwritable=why)
    assert {o.blocked for o in both} == {f"{UNSAVED}; {why}"}  # every reason
