"""The ledger diagnostics of one file (``ledger_uncertain``, ``ledger_drift``) as the core computes them."""

from __future__ import annotations

from memzoi.ledger import ChangeRecord, FileChange, ledger_findings


def _change(cid: str, status: str, files: list[FileChange]) -> ChangeRecord:
    return ChangeRecord(cid, 1, "apply", "me", "cli", None, "", status, "done", None, {}, "t", "t", None, None, None,
                        None, files)


def test_uncertain_and_drift():
    text = "---\nid: x\n"
    rel = ".memzoi/records/x.md"
    applied = _change("a" * 32, "applied", [FileChange(rel, None, b"after")])
    uncertain = _change("b" * 32, "uncertain", [FileChange(rel, b"after", b"next")])
    assert ledger_findings([], applied, rel, b"after", text) == []
    [drift] = ledger_findings([], applied, rel, b"edited", text)
    assert drift.code == "ledger_drift" and (drift.start, drift.end) == (0, 3) and drift.data["change_id"] == "a" * 32
    found = ledger_findings([uncertain], applied, rel, None, text)
    assert [f.code for f in found] == ["ledger_uncertain", "ledger_drift"]
    assert "recover" in found[0].message
