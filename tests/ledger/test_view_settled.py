"""``LedgerView.settled``: the view a batch of questions asked at once uses (the server's scan, per chunk) answers
as the live view does for every file, and keeps the ledger as it was when it was taken."""

from __future__ import annotations

from pathlib import Path

from memzoi.ledger import LedgerView
from tests.lsp.test_verdict_parity import build


def test_a_settled_view_answers_as_the_live_one(tmp_path: Path, monkeypatch):
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("MEMZOI_HOME", str(home))
    root = tmp_path / "ws"
    build(root, home)
    live = LedgerView(root)
    settled = live.settled()
    files = sorted(p for p in (root / ".memzoi").rglob("*.md"))
    found = {p: [(f.code, f.start, f.end, f.message) for f in live.findings(p, p.read_text())] for p in files}
    assert any(found.values()), "the fixture holds a ledger-drifted record"
    for p in files:
        assert [(f.code, f.start, f.end, f.message) for f in settled.findings(p, p.read_text())] == found[p], p
    assert not settled.live and live.live
