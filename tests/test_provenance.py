"""Where a record or packet stands (memzoi.lifecycle.provenance): the sentences of the provenance hover, built by the core
from Memzoi's current-assertion, retention and attestation rules, and total on malformed input."""

from __future__ import annotations

from datetime import UTC, datetime

from memzoi.ledger.model import ChangeRecord, FileChange
from memzoi.lifecycle.provenance import (
    change_line,
    current_sentence,
    history_lines,
    packet_targets,
    proposed_via,
    record_standing,
    retention_sentence,
)
from memzoi.read.document import frame

NOW = datetime(2026, 7, 10, tzinfo=UTC)


def change(cid: str, *, status="applied", source="cli", operation="apply", created=True, reason=None):
    return ChangeRecord(
        id=cid,
        seq=1,
        operation=operation,
        actor="ana",
        source=source,
        reason=reason,
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
        files=[FileChange(".memzoi/proposals/pending/p.md", None if created else b"a", b"b")],
    )


def test_current_assertion_names_every_reason_it_is_not():
    assert current_sentence({"status": "active", "lane": "semantic"}, NOW) == "yes"
    assert current_sentence({"status": "superseded", "lane": "semantic"}, NOW) == (
        "no: status is superseded, only active records are current"
    )


def test_retention_of_a_semantic_lane_has_no_age_limit_and_bad_facts_never_raise():
    assert retention_sentence({"lane": "semantic"}, NOW).startswith("semantic lane, no age limit")
    for odd in ({"lane": "episodic", "retention": "forever"}, {"lane": ["x"]}, {"retention": {"expires_at": 5}}):
        assert isinstance(retention_sentence(odd, NOW), str)
        assert isinstance(current_sentence(odd, NOW), str)


def test_a_record_without_a_materialization_block_is_unattested():
    doc = frame("---\nid: use-pnpm\nstatus: active\nlane: semantic\n---\n# Use pnpm\n")
    standing = record_standing(doc, "use-pnpm", valid=True, now=NOW)
    assert standing.current == "yes"
    assert standing.attestation == "unattested (no materialization decision recorded)"


def test_packet_targets_lists_supersedes_then_the_target():
    data = {"supersedes": ["a", "b"], "proposal": {"target": "c"}}
    assert packet_targets(data) == [("supersedes", "a"), ("supersedes", "b"), ("target", "c")]
    assert packet_targets({"supersedes": "a", "proposal": "x"}) == []


def test_history_lines_say_whether_undo_is_still_exact():
    done, undone = change("c" * 20), change("d" * 20, status="undone")
    lines = history_lines([done, undone], lambda c: False)
    assert (
        lines[0]
        == f"apply applied by ana (cli) at 2026-07-01T00:00:00Z, undo unavailable (files changed since) [{'c' * 20}]"
    )
    assert lines[1].startswith("apply undone by ana (cli)") and "undo" not in lines[1].split(")", 1)[1]
    assert change_line(done, True).endswith(f", undo available [{'c' * 20}]")
    assert len(history_lines([done] * 9, lambda c: True)) == 5


def test_proposed_via_names_the_mcp_proposal_that_created_the_packet():
    mcp = change("m1", source="mcp", operation="propose", reason="found in review")
    edit = change("e1", created=False)
    assert proposed_via([edit, mcp]) == "proposed by ana via MCP at 2026-07-01T00:00:00Z; reason: found in review"
    assert proposed_via([change("c1")]) is None and proposed_via([]) is None
