"""The ledger's write lock (the repository lifecycle lock, :func:`memzoi.base.lock.lifecycle_lock`) held by another
process: a change, an undo and a reconciliation refuse with ``lock_busy`` and a message saying what to do, before
anything is computed, recorded or written; the ledger and the project's files are as they were. Released, the same
command goes through.

The lock is held by a real second process (``flock`` on the lock file, :func:`memzoi.base.lock.hold`); no test waits
on a clock: the holder reports that it holds the lock, the command runs with no wait for it (``timeout`` 0), then
the holder is told to let go.
"""

from __future__ import annotations

import hashlib
import importlib
import json
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from memzoi.base.lock import lifecycle_lock
from memzoi.base.runtime import LOCK_FILE
from memzoi.ledger import (
    ChangePlan,
    FileChange,
    Refusal,
    cached_runtime_dir,
    reconcile,
    run_change,
    undo_change,
    writer,
)

from .test_damaged_ledger import PROPOSAL, ledger, run, tree  # noqa: F401 (fixture)

#: The module, not the function the package exports under the same name.
reconcile_module = importlib.import_module("memzoi.ledger.reconcile")

HOLDER = (
    "import sys\n"
    "from pathlib import Path\n"
    "from memzoi.base.lock import hold\n"
    "fd = hold(Path(sys.argv[1]))\n"
    "print('held' if fd is not None else 'busy', flush=True)\n"
    "sys.stdin.readline()\n"
)


@contextmanager
def held_elsewhere(root: Path) -> Iterator[None]:
    """The lifecycle lock of ``root`` held by another process for the ``with`` block."""
    lock = cached_runtime_dir(root) / LOCK_FILE
    proc = subprocess.Popen(
        [sys.executable, "-c", HOLDER, str(lock)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    try:
        assert proc.stdout is not None and proc.stdout.readline().strip() == "held"
        yield
    finally:
        assert proc.stdin is not None
        proc.stdin.write("\n")
        proc.stdin.close()
        proc.wait(timeout=60)


@pytest.fixture
def no_wait(monkeypatch) -> None:
    """The commands' lock wait (10 s) made a single try: the lock, and the process holding it, stay real."""

    def at_once(root, *, timeout, runtime_dir=None):
        return lifecycle_lock(root, timeout=0, runtime_dir=runtime_dir)

    monkeypatch.setattr(writer, "lifecycle_lock", at_once)
    monkeypatch.setattr(reconcile_module, "lifecycle_lock", at_once)


def assert_lock_busy(error: dict) -> None:
    assert error["code"] == "lock_busy", error
    assert "another memzoi process" in error["message"] and "wait for it to finish and retry" in error["message"]


def digest(path: Path) -> dict[str, str]:
    """The bytes of the ledger and its companions (``-wal``, ``-shm``) that exist."""
    return {
        p.name: hashlib.sha256(p.read_bytes()).hexdigest()
        for p in path.parent.iterdir()
        if p.name.startswith(path.name)
    }


@pytest.mark.parametrize("as_json", [True, False])
def test_apply_refuses_while_another_process_holds_the_ledgers_lock(repo, ledger, capsys, no_wait, as_json):
    files, db, history = tree(repo), digest(ledger), run(capsys, repo, "history", "--json")[1]
    with held_elsewhere(repo):
        code, out, err = run(capsys, repo, "proposals", "apply", PROPOSAL, *(["--json"] if as_json else []))
        assert code == 1 and "Traceback" not in out + err, (out, err)
        if as_json:
            assert_lock_busy(json.loads(out)["error"])
        else:
            line = err.strip().splitlines()[-1]
            assert line.startswith("memzoi: lock_busy: "), err
            assert_lock_busy({"code": "lock_busy", "message": line})
        assert tree(repo) == files and digest(ledger) == db  # nothing written, nothing recorded
    assert run(capsys, repo, "history", "--json")[1] == history
    code, out, _ = run(capsys, repo, "proposals", "apply", PROPOSAL, "--json")  # released: the same command goes
    assert code == 0 and json.loads(out)["status"] == "applied", out


def test_undo_and_reconcile_refuse_while_the_lock_is_held(repo, ledger, capsys, no_wait):
    [cid] = [c["change_id"] for c in json.loads(run(capsys, repo, "history", "--json")[1])["changes"]]
    files, db = tree(repo), digest(ledger)
    with held_elsewhere(repo):
        for argv in (("undo", cid), ("reconcile",)):
            code, out, err = run(capsys, repo, *argv, "--json")
            assert code == 1 and "Traceback" not in out + err, (argv, out, err)
            assert_lock_busy(json.loads(out)["error"])
        assert tree(repo) == files and digest(ledger) == db
    code, out, _ = run(capsys, repo, "undo", cid, "--json")
    assert code == 0 and json.loads(out)["status"] == "undone", out


def test_the_core_refuses_before_it_plans_or_records(tmp_path, monkeypatch):
    monkeypatch.setenv("MEMZOI_HOME", str(tmp_path / "home"))
    root = tmp_path / "proj"
    root.mkdir()
    first = run_change(root, lambda r: ChangePlan("t", [FileChange("a.md", None, b"a\n")]), actor="a")
    db = cached_runtime_dir(root) / "memzoi-lsp-ledger.db"
    before, planned = digest(db), []

    def plan(r: Path) -> ChangePlan:
        planned.append(r)
        return ChangePlan("t2", [FileChange("a.md", b"a\n", b"b\n")])

    with held_elsewhere(root):
        for act in (
            lambda: run_change(root, plan, actor="a", lock_timeout=0),
            lambda: undo_change(root, first.change_id, actor="a", lock_timeout=0),
            lambda: reconcile(root, lock_timeout=0),
        ):
            with pytest.raises(Refusal) as err:
                act()
            assert_lock_busy({"code": err.value.code, "message": err.value.message})
        assert planned == [] and (root / "a.md").read_bytes() == b"a\n" and digest(db) == before
    assert run_change(root, plan, actor="a", lock_timeout=0).status == "applied"
    assert (root / "a.md").read_bytes() == b"b\n"
