"""The change engine: guarded atomic writes, undo, drift, reconciliation without replay, recovery, the lock."""

from __future__ import annotations

import os
from collections import Counter
from pathlib import Path

import pytest

from memzoi import ledger as L
from memzoi.ledger import ChangePlan, FileChange, Refusal

from .faults import CRASH_EXIT, run_child, tree

BASE = {"keep.md": b"keep\n", "mod.md": b"old\r\nbytes\n", "gone.md": b"delete me\n"}
AFTER = {"keep.md": b"keep\n", "mod.md": b"new bytes\n", "sub/new.md": b"created\n"}


@pytest.fixture
def project(tmp_path, monkeypatch):
    monkeypatch.setenv("MEMZOI_HOME", str(tmp_path / "home"))
    root = tmp_path / "proj"
    root.mkdir()
    for name, data in BASE.items():
        (root / name).write_bytes(data)
    return root


def plan(root: Path) -> ChangePlan:
    """Modify one file, create one (in a new folder), delete one: present→present, absent→present, present→absent."""
    return ChangePlan(
        "test",
        [
            FileChange("mod.md", L.read_file_state(root, "mod.md"), AFTER["mod.md"]),
            FileChange("sub/new.md", L.read_file_state(root, "sub/new.md"), AFTER["sub/new.md"]),
            FileChange("gone.md", L.read_file_state(root, "gone.md"), None),
        ],
        reason="because",
        summary="three files",
    )


def test_apply_and_undo_restore_exact_bytes(project):
    res = L.run_change(project, plan, actor="alice", source="editor")
    assert res.status == "applied"
    assert tree(project) == AFTER
    assert [f.to_json() for f in res.files] == [
        {"path": "mod.md", "before": "present", "after": "present", "change": "modified"},
        {"path": "sub/new.md", "before": "absent", "after": "present", "change": "created"},
        {"path": "gone.md", "before": "present", "after": "absent", "change": "deleted"},
    ]
    undone = L.undo_change(project, res.change_id, actor="bob")
    assert undone.status == "undone"
    assert tree(project) == BASE
    # the result says what the undo did, not what the change did
    assert [(f["path"], f["before"], f["after"]) for f in (x.to_json() for x in undone.files)] == [
        ("mod.md", "present", "present"),
        ("sub/new.md", "present", "absent"),
        ("gone.md", "absent", "present"),
    ]
    (rec,) = L.history(project)
    assert (rec.status, rec.actor, rec.source, rec.reason, rec.undo_actor) == (
        "undone",
        "alice",
        "editor",
        "because",
        "bob",
    )
    assert rec.applied_at and rec.undone_at
    with pytest.raises(Refusal) as err:
        L.undo_change(project, res.change_id, actor="bob")
    assert err.value.code == "not_undoable"


def test_history_filters_by_path_newest_first(project):
    a = L.run_change(project, plan, actor="a")
    b = L.run_change(project, lambda r: ChangePlan("t2", [FileChange("keep.md", b"keep\n", b"k2\n")]), actor="b")
    assert [c.id for c in L.history(project)] == [b.change_id, a.change_id]
    assert [c.id for c in L.history(project, "mod.md")] == [a.change_id]
    assert L.get_change(project, a.change_id[:-2]).id == a.change_id


def test_change_ids_resolve_without_chg_and_ambiguous_prefixes_say_so(project):
    a = L.run_change(project, plan, actor="a")
    b = L.run_change(project, lambda r: ChangePlan("t2", [FileChange("keep.md", b"keep\n", b"k2\n")]), actor="b")
    assert L.get_change(project, a.change_id.removeprefix("chg_")).id == a.change_id
    assert L.get_change(project, b.change_id.removeprefix("chg_")[:-3]).id == b.change_id
    shared = os.path.commonprefix([a.change_id, b.change_id])
    assert len(shared) > len("chg_")  # time-ordered ids: two changes made together share a prefix
    with pytest.raises(Refusal) as err:
        L.undo_change(project, shared.removeprefix("chg_"), actor="c")
    assert err.value.code == "ambiguous_change_id" and "(2 matches)" in err.value.message
    assert L.get_change(project, "chg_ffff") is None
    undone = L.undo_change(project, b.change_id.removeprefix("chg_"), actor="c")
    assert undone.status == "undone"


def test_drift_between_snapshot_and_write_refuses_with_nothing_written(project):
    def edit(step: str) -> None:
        if step == "recorded":
            (project / "gone.md").write_bytes(b"edited by hand\n")

    L.set_fault_hook(edit)
    try:
        with pytest.raises(Refusal) as err:
            L.run_change(project, plan, actor="a")
    finally:
        L.set_fault_hook(None)
    assert err.value.code == "external_drift" and err.value.path == "gone.md"
    assert "nothing was written" in err.value.message
    assert tree(project) == {**BASE, "gone.md": b"edited by hand\n"}
    assert L.history(project)[0].status == "failed"


def test_drift_in_the_middle_rolls_back_earlier_writes(project):
    def edit(step: str) -> None:
        if step == "apply:file0:done":  # mod.md written; now someone creates sub/new.md
            (project / "sub").mkdir(exist_ok=True)
            (project / "sub" / "new.md").write_bytes(b"theirs\n")

    L.set_fault_hook(edit)
    try:
        with pytest.raises(Refusal) as err:
            L.run_change(project, plan, actor="a")
    finally:
        L.set_fault_hook(None)
    assert err.value.code == "external_drift"
    assert tree(project) == {**BASE, "sub/new.md": b"theirs\n"}
    assert L.history(project)[0].status == "failed"


def test_undo_refused_after_hand_edit(project):
    res = L.run_change(project, plan, actor="a")
    (project / "mod.md").write_bytes(b"hand edit\n")
    with pytest.raises(Refusal) as err:
        L.undo_change(project, res.change_id, actor="a")
    assert err.value.code == "undo_drift" and err.value.path == "mod.md"
    assert (project / "mod.md").read_bytes() == b"hand edit\n"
    assert L.history(project)[0].status == "applied"
    state = L.file_ledger_state(project, "mod.md", b"hand edit\n")
    assert state["drift"] and not state["undo_available"]
    assert L.undo_available(project, L.history(project)[0]) is False  # what the history views show


def test_undo_available_says_what_undo_change_would_do(project):
    res = L.run_change(project, plan, actor="a")
    assert L.undo_available(project, L.get_change(project, res.change_id)) is True
    (project / "sub" / "new.md").unlink()  # a file of the change, not only the one a view looks at
    assert L.undo_available(project, L.get_change(project, res.change_id)) is False
    (project / "sub" / "new.md").write_bytes(AFTER["sub/new.md"])
    L.undo_change(project, res.change_id, actor="a")
    assert L.undo_available(project, L.get_change(project, res.change_id)) is False  # undone: only applied ones


def test_symlinks_are_never_followed(project, tmp_path):
    outside = tmp_path / "outside.md"
    outside.write_bytes(b"secret place\n")
    (project / "link.md").symlink_to(outside)
    with pytest.raises(Refusal) as err:
        L.run_change(
            project,
            lambda r: ChangePlan("t", [FileChange("link.md", L.read_file_state(r, "link.md"), b"x")]),
            actor="a",
        )
    assert err.value.code == "unsafe_path"
    assert outside.read_bytes() == b"secret place\n"
    with pytest.raises(Refusal):
        L.safe_path(project, "../escape.md")


def _expected(files: list[FileChange], now: dict[str, bytes], phase: str) -> str:
    after = all(now.get(f.path) == f.after for f in files)
    before = all(now.get(f.path) == f.before for f in files)
    if phase == "apply":
        return "applied" if after else "failed" if before else "uncertain"
    return "undone" if before else "applied" if after else "uncertain"


def crash_matrix(tmp_path, monkeypatch, *, undo: bool) -> Counter:
    """Crash at every step of one change (or of its undo), restart, reconcile, check. Returns outcome counts."""
    outcomes: Counter = Counter()
    k = 0
    while True:
        k += 1
        monkeypatch.setenv("MEMZOI_HOME", str(tmp_path / f"home{k}"))
        root = tmp_path / f"p{k}"
        root.mkdir()
        for name, data in BASE.items():
            (root / name).write_bytes(data)
        change_id = None
        if undo:
            change_id = L.run_change(root, plan, actor="a").change_id
            start = tree(root)
            code, steps = run_child(lambda: L.undo_change(root, change_id, actor="a"), crash_at=k)
        else:
            start = tree(root)
            code, steps = run_child(lambda: L.run_change(root, plan, actor="a"), crash_at=k)
        if code != CRASH_EXIT:
            assert code == 0 and len(steps) == k - 1, (code, steps)
            return outcomes
        crashed = tree(root)
        results = L.reconcile(root)
        reconciled = tree(root)
        # Nothing replayed: reconciliation changed no file (it only removes temporary files).
        assert {p: b for p, b in reconciled.items() if not p.rsplit("/", 1)[-1].startswith(".")} == {
            p: b for p, b in crashed.items() if not p.rsplit("/", 1)[-1].startswith(".")
        }
        assert not [p for p in reconciled if p.rsplit("/", 1)[-1].startswith(".")], "temporary files left"
        changes = L.history(root)
        if not changes:
            assert steps[-1] in ("locked", "planned"), steps
            assert reconciled == start
            outcomes["not-recorded"] += 1
            continue
        (change,) = changes
        phase = "undo" if undo else "apply"
        # Nothing lost: the snapshots are exactly the bytes before and after.
        assert {f.path: f.before for f in change.files if f.before is not None} == {
            p: b for p, b in BASE.items() if p in {f.path for f in change.files}
        }
        for f in change.files:
            assert reconciled.get(f.path) in (f.before, f.after), f"{f.path} torn at step {steps[-1]}"
        expected = _expected(change.files, reconciled, phase)
        if undo and steps[-1] in ("locked", "planned"):
            expected = "applied"
        assert change.status == expected, (steps[-1], change.status, expected)
        if results:
            assert [r.change_id for r in results] == [change.id]
            assert L.RECONCILED in change.diagnostic
        else:  # crashed after the final status was durable
            assert steps[-1] in ("committed", "unlocking") or (undo and steps[-1] in ("locked", "planned")), steps
        if change.status == "uncertain":
            # Explicit recovery, itself a change, restores the exact before bytes.
            rec = L.recover(root, change.id, "restore-before", actor="a")
            assert rec.status == "applied"
            assert tree(root) == BASE
            assert L.get_change(root, change.id).status == ("undone" if undo else "failed")
        outcomes[f"{steps[-1].split(':')[0]}->{change.status}"] += 1


@pytest.mark.parametrize("undo", [False, True], ids=["apply", "undo"])
def test_crash_at_every_step_reconciles_without_replay(tmp_path, monkeypatch, undo, capsys):
    outcomes = crash_matrix(tmp_path, monkeypatch, undo=undo)
    total = sum(outcomes.values())
    with capsys.disabled():
        print(f"\n[{'undo' if undo else 'apply'}] injected {total} crash points: {dict(sorted(outcomes.items()))}")
    assert total >= 12
    statuses = {k.split("->")[1] for k in outcomes if "->" in k}
    assert statuses >= ({"applied", "uncertain", "undone"} if undo else {"applied", "failed", "uncertain"})


def test_recovery_modes_are_ledgered_changes(project):
    # Each round builds an uncertain change: a crash after the first of three files was written.
    for mode, expect_files, settled in [
        ("complete-after", AFTER, "applied"),
        ("accept", None, "failed"),
        ("restore-before", BASE, "failed"),
    ]:
        code, steps = run_child(lambda: L.run_change(project, plan, actor="a"), crash_at="apply:file0:done")
        assert code == CRASH_EXIT and steps[-1] == "apply:file0:done", steps
        [outcome] = L.reconcile(project)
        assert outcome.status == "uncertain"
        mixed = tree(project)
        rec = L.recover(project, outcome.change_id, mode, actor="carol", reason="settle it")
        assert rec.operation == "recover" and rec.details["recovers"] == outcome.change_id
        assert tree(project) == (expect_files or mixed)
        assert L.get_change(project, outcome.change_id).status == settled
        # Undoing the recovery puts the files back and the original change back to uncertain.
        L.undo_change(project, rec.change_id, actor="carol")
        assert tree(project) == mixed
        assert L.get_change(project, outcome.change_id).status == "uncertain"
        L.recover(project, outcome.change_id, "restore-before", actor="carol")
        assert tree(project) == BASE
    with pytest.raises(Refusal) as err:
        L.recover(project, outcome.change_id, "accept", actor="x")
    assert err.value.code == "not_uncertain"


def test_two_processes_never_interleave_a_change(project, tmp_path):
    log = tmp_path / "steps.log"
    (project / "shared.md").write_bytes(b"")

    def worker(tag: str) -> None:
        for i in range(8):

            def build(root: Path, i: int = i) -> ChangePlan:
                # Every change appends to the worker's own file; the kept (even) ones also to a shared file,
                # which only stays consistent if the read-modify-write of each change runs alone.
                files = []
                for name in [f"{tag}.md"] + (["shared.md"] if i % 2 == 0 else []):
                    cur = L.read_file_state(root, name) or b""
                    files.append(FileChange(name, L.read_file_state(root, name), cur + f"{tag}{i}\n".encode()))
                return ChangePlan("append", files)

            res = L.run_change(project, build, actor=tag)
            if i % 2:
                L.undo_change(project, res.change_id, actor=tag)

    pids = []
    for tag in ("a", "b"):
        pid = os.fork()
        if pid == 0:
            code, _ = run_child(lambda tag=tag: worker(tag), log=log)
            os._exit(code)
        pids.append(pid)
    for pid in pids:
        _, status = os.waitpid(pid, 0)
        assert os.waitstatus_to_exitcode(status) == 0
    lines = [line.split() for line in log.read_text().splitlines()]
    owner = None
    sections = 0
    for pid, step in lines:
        if step == "locked":
            assert owner is None, "two processes inside the lock at once"
            owner, sections = pid, sections + 1
        else:
            assert pid == owner, f"step {step} of {pid} ran while {owner} held the lock"
            if step == "unlocking":
                owner = None
    assert sections == 2 * (8 + 4)
    changes = L.history(project)
    assert Counter(c.status for c in changes) == {"applied": 8, "undone": 8}
    # Undone appends were the last write to the file when undone; the survivors are all there.
    text = (project / "shared.md").read_text()
    assert sorted(text.split()) == sorted(f"{t}{i}" for t in "ab" for i in range(0, 8, 2))
    for t in "ab":
        assert (project / f"{t}.md").read_text().split() == [f"{t}{i}" for i in range(0, 8, 2)]


def test_readers_never_create_a_runtime_directory(tmp_path, monkeypatch):
    home = tmp_path / "home"
    monkeypatch.setenv("MEMZOI_HOME", str(home))
    (tmp_path / "p").mkdir()
    assert L.history(tmp_path / "p") == [] and L.get_change(tmp_path / "p", "chg_x") is None
    assert not home.exists()
