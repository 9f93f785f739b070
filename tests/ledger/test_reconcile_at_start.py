"""``reconcile_at_start``: what a process starting on a project does with the changes a dead one left in flight
(SPEC §6): classified when there is a ledger, nothing made when there is none, and left to a live holder of the
lifecycle lock."""

from __future__ import annotations

import subprocess
import sys

from memzoi import ledger as L

from .faults import CRASH_EXIT, run_child, tree
from .test_ledger import plan, project  # noqa: F401 (project is a fixture)

HOLD_LOCK = """
import sys
from memzoi.base.lock import lifecycle_lock
with lifecycle_lock(sys.argv[1]):
    print("held", flush=True)
    sys.stdin.read()
"""


def test_a_project_without_a_ledger_gets_nothing_made(project):
    assert L.reconcile_at_start(project) is None
    assert not (project.parent / "home").exists()


def test_a_change_left_applying_is_classified_and_never_replayed(project):
    code, steps = run_child(lambda: L.run_change(project, plan, actor="x"), crash_at="apply:file0:done")
    assert code == CRASH_EXIT, steps
    [change] = L.history(project)
    assert change.status == "applying"
    crashed = tree(project)
    [settled] = L.reconcile_at_start(project) or []
    assert (settled.change_id, settled.previous, settled.status) == (change.id, "applying", "uncertain")
    assert tree(project) == crashed  # nothing replayed
    assert L.reconcile_at_start(project) == []  # nothing left in flight


def test_a_live_holder_of_the_lock_is_left_alone(project):
    code, _ = run_child(lambda: L.run_change(project, plan, actor="x"), crash_at="apply:file0:done")
    assert code == CRASH_EXIT
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLD_LOCK, str(project)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline() == "held\n"
        assert L.reconcile_at_start(project) is None
        assert L.history(project)[0].status == "applying"
    finally:
        holder.communicate("")
    [settled] = L.reconcile_at_start(project) or []
    assert settled.status == "uncertain"
