"""The ledger diagnostics of one file (``ledger_uncertain``, ``ledger_drift``) as the core computes them."""

from __future__ import annotations

from memzoi.ledger import ChangeRecord, FileChange, ledger_findings


def _change(cid: str, status: str, files: list[FileChange]) -> ChangeRecord:
    return ChangeRecord(
        cid, 1, "apply", "me", "cli", None, "", status, "done", None, {}, "t", "t", None, None, None, None, files
    )


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


def test_drift_names_the_full_change_id_and_advice_fitting_the_file():
    cid = "chg_01a2437c0f4ce7b2a3d04179"
    for rel, advice, wrong in (
        (".memzoi/records/x.md", "re-attest the record", None),
        (".memzoi/proposals/pending/p.md", "review the packet", "re-attest"),
        (".memzoi/proposals/resolved/applied/p.md", "memzoi history", "re-attest"),
    ):
        [drift] = ledger_findings([], _change(cid, "applied", [FileChange(rel, None, b"after")]), rel, b"x", "---\n")
        assert f"change {cid} (apply)" in drift.message.casefold() and advice in drift.message
        assert wrong is None or wrong not in drift.message
    uncertain = _change(cid, "uncertain", [FileChange(".memzoi/records/x.md", None, b"a")])
    [found] = ledger_findings([uncertain], None, ".memzoi/records/x.md", None, "---\n")
    assert f"change {cid} (apply)" in found.message.casefold()
