"""The change engine writes created and rewritten files first and deletions last, in apply, undo and recovery alike:
a process killed at any step leaves the bytes a change moves in some file on disk (never only in the ledger's
snapshots), and the rollback, reconciliation and recovery rules stay exact."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from pathlib import Path

import pytest

from memzoi import ledger as L
from memzoi.ledger import ChangePlan, FileChange, Refusal

from .faults import CRASH_EXIT, run_child, scratch, tree  # noqa: F401 (scratch is a fixture)

MOVED = b"moved bytes\n"
COPY = b"a copy\n"
#: A move listed deletion first (as a plan may list it): old.md goes, new/moved.md and new/copy.md come.
BASE = {"old.md": MOVED, "keep.md": b"keep\n"}
AFTER = {"keep.md": b"keep\n", "new/moved.md": MOVED, "new/copy.md": COPY}


def plan(root: Path) -> ChangePlan:
    return ChangePlan(
        "test",
        [
            FileChange("old.md", L.read_file_state(root, "old.md"), None),
            FileChange("new/copy.md", L.read_file_state(root, "new/copy.md"), COPY),
            FileChange("new/moved.md", L.read_file_state(root, "new/moved.md"), MOVED),
        ],
        reason="move",
    )


def visible(root: Path) -> dict[str, bytes]:
    """The files a user sees (temporary ``.name.*.tmp`` copies left out)."""
    return {p: b for p, b in tree(root).items() if not p.rsplit("/", 1)[-1].startswith(".")}


def make(base: Path, name: str) -> Path:
    root = base / name
    root.mkdir(parents=True)
    for rel, data in BASE.items():
        (root / rel).write_bytes(data)
    return root


def crash_points(base: Path, label: str, prepare: Callable[[Path], str], run: Callable[[Path, str], object]) -> Counter:
    """Crash ``run(root, prepare(root))`` at every step, each time in a fresh project (a ledger belongs to its project's
    path); at every point the moved bytes are in a visible file. Returns how many points each phase had."""
    seen: Counter = Counter()
    k = 0
    while True:
        k += 1
        root = make(base, f"{label}{k}")
        ctx = prepare(root)
        code, steps = run_child(lambda: run(root, ctx), crash_at=k)
        if code != CRASH_EXIT:
            assert code == 0 and len(steps) == k - 1, (label, code, steps)
            return seen
        assert MOVED in visible(root).values(), f"{label}: the moved bytes are in no file after {steps[-1]}"
        seen[steps[-1].split(":")[0]] += 1


def uncertain_apply(root: Path) -> str:
    """An apply killed before any write, then one of its files written by hand: reconciliation finds it uncertain.
    Returns its change id."""
    code, _ = run_child(lambda: L.run_change(root, plan, actor="a"), crash_at="recorded")
    assert code == CRASH_EXIT
    (root / "new").mkdir()
    (root / "new" / "copy.md").write_bytes(COPY)
    [settled] = L.reconcile(root)
    assert settled.status == "uncertain"
    return settled.change_id


def test_a_move_listed_deletion_first_is_written_creations_first(tmp_path, monkeypatch):
    monkeypatch.setenv("MEMZOI_HOME", str(tmp_path / "home"))
    root = make(tmp_path, "p")
    order: list[str] = []
    L.set_fault_hook(lambda step: order.append(step) if step.endswith(":done") else None)
    try:
        res = L.run_change(root, plan, actor="a")
        undone = L.undo_change(root, res.change_id, actor="a")
    finally:
        L.set_fault_hook(None)
    assert undone.status == "undone" and tree(root) == BASE
    # apply: copy.md and moved.md first, old.md last; undo: old.md back first, the created files removed last.
    assert order == [f"{p}:file{i}:done" for p in ("apply", "undo") for i in range(3)]
    # The results still list the plan's order (what the change is, not how it is written).
    assert [f.path for f in res.files] == ["old.md", "new/copy.md", "new/moved.md"]


PHASES: dict[str, tuple[Callable[[Path], str], Callable[[Path, str], object]]] = {
    "apply": (lambda r: "", lambda r, _: L.run_change(r, plan, actor="a")),
    "undo": (lambda r: L.run_change(r, plan, actor="a").change_id, lambda r, cid: L.undo_change(r, cid, actor="a")),
    # The recovery creates new/moved.md and deletes old.md: the creation comes first there too.
    "recover": (uncertain_apply, lambda r, cid: L.recover(r, cid, "complete-after", actor="a")),
}


@pytest.mark.parametrize("phase", PHASES)
def test_crash_at_every_step_keeps_the_moved_bytes_on_disk(scratch, monkeypatch, phase):
    monkeypatch.setenv("MEMZOI_HOME", str(scratch / "home"))
    outcomes = crash_points(scratch, phase, *PHASES[phase])
    # The file switches were crashed into, not only the bookkeeping (a recovery is a change: its steps are apply's).
    assert outcomes["undo" if phase == "undo" else "apply"] >= 4, outcomes


def test_rollback_after_drift_undoes_exactly_the_files_written(tmp_path, monkeypatch):
    """The drifted file is the last one written (a deletion): the two creations before it are rolled back."""
    monkeypatch.setenv("MEMZOI_HOME", str(tmp_path / "home"))
    root = make(tmp_path, "p")

    def edit(step: str) -> None:
        if step == "apply:file1:done":  # both creations written; now someone edits the file to be deleted
            (root / "old.md").write_bytes(b"edited meanwhile\n")

    L.set_fault_hook(edit)
    try:
        with pytest.raises(Refusal) as err:
            L.run_change(root, plan, actor="a")
    finally:
        L.set_fault_hook(None)
    assert err.value.code == "external_drift" and err.value.path == "old.md"
    assert tree(root) == {**BASE, "old.md": b"edited meanwhile\n"}
    assert not (root / "new").exists()  # the folder the change made is gone with its files
    assert L.history(root)[0].status == "failed"
