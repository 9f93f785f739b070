"""An undo of an apply killed at any step never leaves the proposal in no file of the repository: the packet is
re-created before the record and the ``resolved/applied`` copy are deleted (the change engine writes created files
first, deletions last), so ``git status`` never shows a deletion whose replacement is not on disk yet."""

from __future__ import annotations

import shutil
from collections import Counter
from pathlib import Path

import pytest

from memzoi import ledger as L
from memzoi.lifecycle import apply_proposal

from ..ledger.faults import CRASH_EXIT, run_child, scratch, tree  # noqa: F401 (scratch is a fixture)
from .conftest import PENDING, seed

PROPOSALS = ["mem_2026_07_06_auth_001", "mem_2026_07_06_auth_supersede"]


def _visible(t: dict[str, bytes]) -> dict[str, bytes]:
    """The files a user sees and might commit (temporary ``.name.*.tmp`` copies left out)."""
    return {p: b for p, b in t.items() if not p.rsplit("/", 1)[-1].startswith(".")}


@pytest.fixture(scope="module")
def template(tmp_path_factory) -> Path:
    return seed(tmp_path_factory.mktemp("tpl") / "repo")


@pytest.mark.parametrize("proposal", PROPOSALS)
def test_undo_of_an_apply_keeps_the_proposal_in_a_file_at_every_crash_point(scratch, template, monkeypatch, proposal):
    monkeypatch.setenv("MEMZOI_HOME", str(scratch / "home"))
    packet_rel = f"{PENDING}/{proposal}.md"
    packet = (template / packet_rel).read_bytes()
    original = tree(template)
    statuses: Counter = Counter()
    k = 0
    while True:
        k += 1
        root = scratch / f"{proposal}-{k}"
        shutil.copytree(template, root, symlinks=True)
        result = apply_proposal(root, proposal, actor="x")
        applied = tree(root)
        [resolved_rel] = [f.path for f in result.files if "/resolved/applied/" in f.path]
        deleted_by_undo = [f.path for f in result.files if f.before is None]  # the record and the resolved copy
        code, steps = run_child(lambda: L.undo_change(root, result.change_id, actor="x"), crash_at=k)
        if code != CRASH_EXIT:
            assert code == 0 and len(steps) == k - 1, (code, steps)
            break
        step = steps[-1]
        seen = _visible(tree(root))
        # The proposal is in a file a user sees: as the packet the undo re-creates, or as the resolved copy.
        assert packet in seen.values() or applied[resolved_rel] in seen.values(), f"proposal in no file after {step}"
        # No deletion shows before the packet is back.
        if any(p not in seen for p in deleted_by_undo):
            assert seen.get(packet_rel) == packet, f"a file deleted before the packet is back, at {step}"
        # Reconciliation and recovery still settle every point exactly.
        L.reconcile(root)
        [change] = [c for c in L.history(root) if c.id == result.change_id]
        statuses[change.status] += 1
        if change.status == "uncertain":
            L.recover(root, change.id, "restore-before", actor="x")
        elif change.status == "applied":
            assert _visible(tree(root)) == applied
            L.undo_change(root, change.id, actor="x")
        assert tree(root) == original, (step, change.status)
    # The crash points cover the three outcomes an interrupted undo can have.
    assert statuses["applied"] and statuses["uncertain"] and statuses["undone"], statuses
