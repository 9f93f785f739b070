"""The one rule of which lifecycle operations a file offers (memzoi.lifecycle.offers): packets by the can-apply
rule, records by their status and findings, every file by its ledger facts; unsaved edits block them all."""

from __future__ import annotations

from memzoi.base.findings import finding
from memzoi.judge.workspace import Role
from memzoi.ledger.model import RECOVERY_MODES, ChangeRecord, FileChange
from memzoi.ledger.view import FileLedger
from memzoi.lifecycle.offers import INACTIVE, UNSAVED, file_offers
from memzoi.lifecycle.readiness import readiness


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
    assert offers[1].blocked == r.statement() and "sensitivity_not_repo_safe" in offers[1].blocked
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
    assert ops(offers) == [("supersede", "fix the 1 error(s) first"), ("tombstone", "fix the 1 error(s) first")]
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
