"""A ``memzoi check`` judged while a live process held the lifecycle lock over a change in flight (its change is left
to it, so no ``ledger_uncertain``) is never replayed once that process is gone without touching the ledger again:
whether the lock is held is an input of the stored report (SPEC §6, promise 3: one verdict, never a stale one)."""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
from pathlib import Path

from memzoi import ledger as L
from memzoi.base.runtime import STORE_DB
from memzoi.stores import publishset, replay

from ..ledger.test_reconcile_at_start import HOLD_LOCK
from .test_unsettled_cli import _crash_apply, memzoi


def _holder(repo: Path) -> subprocess.Popen[str]:
    """A process holding the lifecycle lock of ``repo`` until its stdin closes; returned once it holds it."""
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLD_LOCK, str(repo)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    assert holder.stdout is not None and holder.stdout.readline() == "held\n"
    return holder


def _uncertain(out: subprocess.CompletedProcess[str]) -> list[dict]:
    return [f for f in json.loads(out.stdout)["findings"] if f["code"] == "ledger_uncertain"]


def _stored_reports(home: Path) -> int:
    [db] = sorted(home.rglob(STORE_DB))
    with sqlite3.connect(db) as conn:
        return int(conn.execute("SELECT count(*) FROM reports").fetchone()[0])


def test_a_check_judged_under_a_live_writer_is_not_replayed_after_it_died(repo, tmp_path):
    crashed = _crash_apply(repo)
    holder = _holder(repo)
    try:
        first = memzoi(repo, "check", "--format", "json")
        assert first.returncode == 0 and not _uncertain(first), first.stdout + first.stderr
        assert _stored_reports(tmp_path / "home") >= 1  # the verdict was stored, so a later check may replay it
        again = memzoi(repo, "check", "--format", "json")
        assert (again.returncode, again.stdout) == (0, first.stdout)  # replayed while the writer lives
    finally:
        holder.communicate("")
    # the writer died without touching the ledger: its change is judged again, as reconciliation will make it
    after = memzoi(repo, "check", "--format", "json")
    assert after.returncode == 1, after.stdout + after.stderr
    found = _uncertain(after)
    assert found and all(crashed.id in f["message"] and "memzoi reconcile" in f["message"] for f in found)
    assert L.history(repo)[0].status == "applying"  # check stays read-only


def test_the_project_inputs_of_replay_and_warm_start_hold_whether_the_lock_is_held(repo):
    """The inputs ``memzoi check``'s replay and the server's stored publish set are both checked against."""
    _crash_apply(repo)
    roots = {str(repo): {str(repo / ".memzoi")}}
    free = replay.project_inputs(roots)
    holder = _holder(repo)
    try:
        held = replay.project_inputs(roots)
        assert publishset.project_inputs(repo, [str(repo / ".memzoi" / "x.md")]) == held
    finally:
        holder.communicate("")
    assert held != free == replay.project_inputs(roots)


def test_a_project_without_a_ledger_probes_no_lock(tmp_path, monkeypatch):
    """No ledger, no ledger facts: the lock is not looked at (its file is not even made)."""
    from memzoi.base import lock

    monkeypatch.setenv("MEMZOI_HOME", str(tmp_path / "home"))
    root = tmp_path / "plain"
    root.mkdir()
    monkeypatch.setattr(lock, "held", lambda path: (_ for _ in ()).throw(AssertionError(path)))
    assert replay._ledger_stamp(root)[-1] is None
