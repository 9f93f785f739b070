"""``proposals apply`` while a helper process saves an edit of the packet at a random step: the edit is kept on
disk every time (the long run is ``python -m tests.ledger.races --apply``)."""

from __future__ import annotations

from ..ledger.races import run_apply_races


def test_packet_edits_during_apply_are_never_lost(repo):
    counts = run_apply_races(repo, 80, seed=3)
    assert counts["lost"] == 0, counts
    assert counts["refused"] > 0 and counts["edited_after"] > 0, counts
