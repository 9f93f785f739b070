"""Full disk and I/O errors at every step of every lifecycle change, its undo, and recovery: each file write step
(temporary file write, chmod, fsync, switch, comparison, link, unlink, directory fsync) fails with ``ENOSPC`` or
``EIO``, and the ledger's own writes (reconciliation, recording, final status) fail as SQLite does on a full disk.
Afterwards every file is at its before or after bytes, the command refused with a clear code (never a
traceback), and after the next command's reconciliation the ledger's status agrees with the files."""

from __future__ import annotations

import errno
import os
import shutil
import sqlite3
from collections import Counter
from collections.abc import Callable
from pathlib import Path

import pytest

from memzoi import ledger as L
from memzoi.base.runtime import LEDGER_DB, project_runtime_dir

from ..ledger.faults import CRASH_EXIT, run_child, scratch, tree  # noqa: F401 (scratch is a fixture)
from .test_crash_operations import OPERATIONS, PURGING_OPS, _classify, template  # noqa: F401 (fixture)

FILE_STEPS = {"write", "chmod", "fsync", "swap", "compare", "link", "restore", "unlink", "dirsync"}
#: Ledger steps right before a database write: reconciliation (after "locked"), recording ("planned"), the outcome.
DB_STEPS = {"locked", "planned", "apply:written", "undo:written"}
CODES = {errno.ENOSPC: "database or disk is full", errno.EIO: "disk I/O error"}


def fault_for(step: str, code: int) -> BaseException | None:
    if step.rsplit(":", 1)[-1] in FILE_STEPS:
        return OSError(code, os.strerror(code))
    if step in DB_STEPS:
        return sqlite3.OperationalError(CODES[code])
    return None


class World:
    """One project directory reused for every trial (same path, so the runtime directory is derived once)."""

    def __init__(self, template: Path, base: Path) -> None:
        self.template = template
        self.root = base / "repo"
        self.rdir: Path | None = None

    def fresh(self) -> Path:
        if self.root.exists():
            shutil.rmtree(self.root)
        shutil.copytree(self.template, self.root, symlinks=True)
        self.rdir = self.rdir or project_runtime_dir(self.root)
        for suffix in ("", "-wal", "-shm"):
            (self.rdir / (LEDGER_DB + suffix)).unlink(missing_ok=True)
        return self.root


def steps_of(fn: Callable[[], object]) -> list[str]:
    seen: list[str] = []
    L.set_fault_hook(seen.append)
    try:
        fn()
    finally:
        L.set_fault_hook(None)
    return seen


def trial(
    world: World, setup: Callable[[Path], Callable[[], object]], k: int, code: int, out: Counter, undo: bool
) -> None:
    root = world.fresh()
    run = setup(root)
    start = tree(root)
    n = 0

    def hook(step: str) -> None:
        nonlocal n
        n += 1
        if n == k:
            fault = fault_for(step, code)
            if fault is not None:
                raise fault

    L.set_fault_hook(hook)
    try:
        try:
            run()
            result = "done"
        except L.Refusal as err:
            result = err.code
    finally:
        L.set_fault_hook(None)
    failed = tree(root)
    L.reconcile(root)  # what the next command does first
    now = tree(root)
    assert {p: b for p, b in now.items() if not p.rsplit("/", 1)[-1].startswith(".")} == {
        p: b for p, b in failed.items() if not p.rsplit("/", 1)[-1].startswith(".")
    }, "reconcile wrote"
    assert not [p for p in now if p.rsplit("/", 1)[-1].startswith(".")], "temporary files left"
    out["completed" if result == "done" else f"refused:{result}"] += 1
    changes = L.history(root)
    if not changes:
        assert now == start
        out["not recorded"] += 1
        return
    change = changes[0]
    for f in change.files:
        assert now.get(f.path) in (f.before, f.after), f"{f.path} torn"
    # The status agrees with the files: applied = all after, failed/undone = all before (reconcile's table).
    expected = _classify(change.files, now, change.phase == "undo")
    assert change.status == expected, (change.status, expected, result)
    if change.status == ("applied" if undo else "failed"):  # rolled back: exactly as before the command
        assert now == start
    out[change.status] += 1


def matrix(world: World, label: str, setup: Callable[[Path], Callable[[], object]], undo: bool = False) -> Counter:
    world.fresh()
    steps = steps_of(setup(world.root))
    out: Counter = Counter()
    for k, step in enumerate(steps, 1):
        for code in CODES:
            if fault_for(step, code) is None:
                continue
            out["trials"] += 1
            trial(world, setup, k, code, out, undo)
    assert out["trials"] >= 4, (label, steps)
    return out


def op_setup(name: str) -> Callable[[Path], Callable[[], object]]:
    return lambda root: lambda: OPERATIONS[name](root)


def undo_setup(name: str) -> Callable[[Path], Callable[[], object]]:
    def setup(root: Path) -> Callable[[], object]:
        cid = OPERATIONS[name](root).change_id
        return lambda: L.undo_change(root, cid, actor="x")

    return setup


def recovery_setup(mode: str) -> Callable[[Path], Callable[[], object]]:
    def setup(root: Path) -> Callable[[], object]:
        code, _ = run_child(lambda: OPERATIONS["apply-supersede"](root), crash_at="apply:file0:done")
        assert code == CRASH_EXIT
        L.reconcile(root)
        cid = L.history(root)[0].id
        assert L.history(root)[0].status == "uncertain"
        return lambda: L.recover(root, cid, mode, actor="x")

    return setup


@pytest.mark.timeout(900)  # a hang guard: hundreds of forked children, a minute or more on a loaded machine
def test_enospc_and_eio_at_every_step(scratch, template, monkeypatch, capsys):  # noqa: F811
    monkeypatch.setenv("MEMZOI_HOME", str(scratch / "home"))
    world = World(template, scratch)
    rows: list[tuple[str, Counter]] = []
    for name in OPERATIONS:
        rows.append((name, matrix(world, name, op_setup(name))))
        if name not in PURGING_OPS:
            rows.append((f"undo {name}", matrix(world, f"undo {name}", undo_setup(name), undo=True)))
    for mode in ("restore-before", "complete-after"):
        rows.append((f"recover {mode}", matrix(world, mode, recovery_setup(mode))))
    total: Counter = Counter()
    for _, c in rows:
        total.update(c)
    with capsys.disabled():
        print(
            f"\nENOSPC/EIO fault matrix: {total['trials']} injected faults over {len(rows)} operations: "
            f"{dict(sorted((k, v) for k, v in total.items() if k != 'trials'))}"
        )
        for label, c in rows:
            print(f"  {label:28} {c['trials']:3} faults  {dict(sorted((k, v) for k, v in c.items() if k != 'trials'))}")
    assert total["completed"] + sum(v for k, v in total.items() if k.startswith("refused:")) == total["trials"]
    # A failing ledger write refuses with the runtime error's own code: ENOSPC as disk_full, EIO as io_error.
    assert {"refused:write_failed", "refused:disk_full", "refused:io_error"} <= set(total), total


@pytest.mark.parametrize("intruder", [False, True], ids=["empty", "used-meanwhile"])
def test_a_failed_change_removes_the_folders_it_created(scratch, template, monkeypatch, intruder):  # noqa: F811
    """A reject on a full disk leaves no empty ``proposals/resolved/rejected/`` behind; a folder something else
    was put in meanwhile stays, with what is in it."""
    monkeypatch.setenv("MEMZOI_HOME", str(scratch / "home"))
    root = World(template, scratch).fresh()
    resolved = root / ".memzoi" / "proposals" / "resolved"
    assert not resolved.exists()
    start = tree(root)

    def hook(step: str) -> None:
        if step.endswith(":write"):  # the first temporary file of the change: its folders exist by now
            assert (resolved / "rejected").is_dir()
            if intruder:
                (resolved / "rejected" / "other.md").write_bytes(b"someone else's\n")
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    L.set_fault_hook(hook)
    try:
        with pytest.raises(L.Refusal) as err:
            OPERATIONS["reject"](root)
    finally:
        L.set_fault_hook(None)
    assert err.value.code == "write_failed" and L.history(root)[0].status == "failed"
    if intruder:
        assert tree(root) == {**start, ".memzoi/proposals/resolved/rejected/other.md": b"someone else's\n"}
    else:
        assert tree(root) == start and not resolved.exists()
