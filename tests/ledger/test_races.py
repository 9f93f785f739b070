"""A hand edit that lands at any moment of a change is preserved on disk or the change is refused: never lost
(renameat2 exchange, and the portable rename/link path). The long run is ``python -m tests.ledger.races``."""

from __future__ import annotations

import pytest

from memzoi.base import fsutil

from .faults import scratch  # noqa: F401 (fixture)
from .races import run_races


@pytest.mark.parametrize("exchange,n", [(True, 300), (False, 150)], ids=["exchange", "portable"])
def test_concurrent_edits_are_never_lost(scratch, monkeypatch, exchange, n):  # noqa: F811
    monkeypatch.setenv("MEMZOI_HOME", str(scratch / "home"))
    monkeypatch.setattr(fsutil, "use_exchange", exchange)
    counts = run_races(scratch, n, seed=7)
    assert counts["lost"] == 0, counts
    # Both outcomes happen: edits before the switch refuse the change, edits after it land on the new file.
    assert counts["refused"] > 0 and counts["edited_after"] > 0, counts
    assert sum(v for k, v in counts.items() if "/" in k) == n
