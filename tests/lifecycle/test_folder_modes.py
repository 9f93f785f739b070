"""A folder a change creates widens no permission (promise 2), and goes again when the change is taken back.

Under umask 022 with ``.memzoi`` kept at 0750 or 0700, the folders the first apply, reject, supersede, tombstone
or materialization creates (``proposals/resolved/``, ``resolved/applied/``, ``resolved/rejected/``, a record's
sub-folder) get that mode, not 0755. The ledger records them with the change: an undo, a recovery restoring the
before bytes and a reconciliation finding the files at their before bytes remove them while they are empty; a
folder holding anything else, and a folder the change found in place, stay."""

from __future__ import annotations

import os
import sqlite3
import stat
from pathlib import Path

import pytest

from memzoi import ledger as L
from memzoi.base.runtime import LEDGER_DB
from memzoi.lifecycle import apply_proposal, reject_proposal
from memzoi.lifecycle.materialize import derive_decision, derive_plan, materialize_apply
from memzoi.lifecycle.materialize_candidate import build_candidate

from ..ledger.faults import CRASH_EXIT, run_child
from .conftest import PENDING
from .test_materialize import draft

RESOLVED = ".memzoi/proposals/resolved"
APPLIED = f"{RESOLVED}/applied"
REJECTED = f"{RESOLVED}/rejected"
PROPOSALS = {
    "apply": "mem_2026_07_06_auth_001",
    "supersede": "mem_2026_07_06_auth_supersede",
    "tombstone": "mem_2026_07_06_auth_tombstone",
}


def mode(path: Path) -> int:
    return stat.S_IMODE(os.lstat(path).st_mode)


def keep_private(root: Path, bits: int) -> None:
    """``chmod`` ``.memzoi`` and every folder below it to ``bits``, as a user keeping the memory private does."""
    memzoi = root / ".memzoi"
    for d in [memzoi, *(p for p in memzoi.rglob("*") if p.is_dir())]:
        os.chmod(d, bits)


def folders(root: Path) -> set[str]:
    return {p.relative_to(root).as_posix() for p in (root / ".memzoi").rglob("*") if p.is_dir()}


@pytest.mark.parametrize("bits", [0o750, 0o700], ids=oct)
@pytest.mark.parametrize("operation", [*PROPOSALS, "reject"])
def test_the_folders_a_change_creates_take_the_private_mode_and_its_undo_removes_them(repo, umask_022, operation, bits):
    keep_private(repo, bits)
    start = folders(repo)
    if operation == "reject":
        result = reject_proposal(repo, PROPOSALS["apply"], reason="not now", actor="r")
        resolved = REJECTED
    else:
        result = apply_proposal(repo, PROPOSALS[operation], actor="r")
        resolved = APPLIED
    made = folders(repo) - start
    assert made == {RESOLVED, resolved}
    assert {p: mode(repo / p) for p in made} == dict.fromkeys(made, bits)
    L.undo_change(repo, result.change_id, actor="r")
    assert folders(repo) == start  # the folders it made are gone again, the others untouched
    assert {mode(repo / p) for p in start} == {bits}


@pytest.mark.parametrize("bits", [0o750, 0o700], ids=oct)
def test_a_materialized_record_in_a_new_folder(repo, umask_022, bits):
    keep_private(repo, bits)
    start = folders(repo)
    text = draft().replace("id: prefer-small-modules", "id: style/prefer-small-modules")
    assert text != draft()
    cand = build_candidate(repo, text)
    plan = derive_plan(cand)
    result = materialize_apply(repo, cand, plan, derive_decision(plan, "2026-07-07T00:00:00Z"), actor="r")
    assert folders(repo) - start == {".memzoi/records/style"}
    assert mode(repo / ".memzoi/records/style") == bits
    L.undo_change(repo, result.change_id, actor="r")
    assert folders(repo) == start


def test_undo_keeps_a_created_folder_holding_anything_else(repo, umask_022):
    keep_private(repo, 0o700)
    applied = apply_proposal(repo, PROPOSALS["apply"], actor="r")
    rejected = reject_proposal(repo, PROPOSALS["supersede"], reason="no", actor="r")
    (repo / APPLIED / "notes.txt").write_text("kept by hand", encoding="utf-8")
    L.undo_change(repo, applied.change_id, actor="r")
    assert (repo / APPLIED / "notes.txt").read_text(encoding="utf-8") == "kept by hand"
    L.undo_change(repo, rejected.change_id, actor="r")
    assert not (repo / REJECTED).exists()
    assert (repo / RESOLVED).is_dir()  # made by the apply, holding applied/notes.txt: stays


def test_undo_keeps_a_folder_the_change_found_in_place(repo, umask_022):
    (repo / APPLIED).mkdir(parents=True)  # empty, made before the change
    result = apply_proposal(repo, PROPOSALS["apply"], actor="r")
    L.undo_change(repo, result.change_id, actor="r")
    assert (repo / APPLIED).is_dir() and not any((repo / APPLIED).iterdir())


def test_a_change_recorded_without_its_folders_leaves_them_at_undo(repo, umask_022):
    """A change an earlier schema recorded has no folder rows: its undo leaves the (empty) folders, as before."""
    result = apply_proposal(repo, PROPOSALS["apply"], actor="r")
    conn = sqlite3.connect(L.cached_runtime_dir(repo) / LEDGER_DB)
    conn.execute("DELETE FROM change_folder")
    conn.commit()
    conn.close()
    L.undo_change(repo, result.change_id, actor="r")
    assert (repo / PENDING / f"{PROPOSALS['apply']}.md").is_file()  # undone
    assert (repo / APPLIED).is_dir() and not any((repo / APPLIED).iterdir())


def test_recovery_restoring_the_before_bytes_removes_the_folders(repo, umask_022):
    keep_private(repo, 0o700)
    start = folders(repo)
    # Killed once the resolved copy is written, before the pending packet is removed: uncertain.
    code, steps = run_child(
        lambda: reject_proposal(repo, PROPOSALS["apply"], reason="no", actor="r"), crash_at="apply:file0:done"
    )
    assert code == CRASH_EXIT, steps
    L.reconcile(repo)
    [change] = L.history(repo)
    assert change.status == "uncertain" and mode(repo / REJECTED) == 0o700
    L.recover(repo, change.id, "restore-before", actor="r")
    assert folders(repo) == start


def test_reconciliation_finding_the_before_bytes_removes_the_folders(repo, umask_022):
    keep_private(repo, 0o750)
    start = folders(repo)
    # Killed while the resolved copy's temporary file is being written: its folders exist, every file is before.
    code, steps = run_child(
        lambda: reject_proposal(repo, PROPOSALS["apply"], reason="no", actor="r"), crash_at="apply:file0:write"
    )
    assert code == CRASH_EXIT, steps
    assert mode(repo / REJECTED) == 0o750
    [reconciled] = L.reconcile(repo)
    assert reconciled.status == "failed"
    assert folders(repo) == start
