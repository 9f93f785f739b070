"""An uncertain change holds its files (SPEC §6): the ledger refuses any other change of them until the change is
settled (``uncertain_change``, naming it and the recovery to run), lets its recovery and the undo of other changes
through, and a read-only reader (``memzoi check``'s :class:`~memzoi.ledger.LedgerView`, ``memzoi doctor``) sees a
change a dead process left in flight as reconciliation would make it."""

from __future__ import annotations

import subprocess
import sys

import pytest
from hypothesis import given, strategies as st

from memzoi import ledger as L
from memzoi.ledger.model import ChangePlan, FileChange
from memzoi.ledger.reconcile import unsettled_report, writer_alive

from .faults import CRASH_EXIT, run_child, tree
from .test_ledger import plan, project  # noqa: F401 (project is a fixture)
from .test_reconcile_at_start import HOLD_LOCK


def _crash(root, at: str = "apply:file0:done") -> L.ChangeRecord:
    """Run :func:`plan` in a child that dies at step ``at``; the change is left ``applying``."""
    code, steps = run_child(lambda: L.run_change(root, plan, actor="x"), crash_at=at)
    assert code == CRASH_EXIT, steps
    change = L.history(root)[0]
    assert change.status == "applying"
    return change


def _edit(rel: str, after: bytes):
    def build(root):
        return ChangePlan("edit", [FileChange(rel, L.read_file_state(root, rel), after)])

    return build


def test_a_change_touching_a_file_of_an_uncertain_change_is_refused(project):
    crashed = _crash(project)
    [settled] = L.reconcile(project)
    assert settled.status == "uncertain"
    on_disk = tree(project)
    for run in (L.run_change, L.dry_run):
        kwargs = {"actor": "y"} if run is L.run_change else {}
        with pytest.raises(L.Refusal) as err:
            run(project, _edit("gone.md", b"other\n"), **kwargs)  # not yet written by the crashed change
        assert err.value.code == "uncertain_change" and err.value.path == "gone.md"
        assert crashed.id in err.value.message
        assert f"memzoi reconcile --recover {crashed.id} restore-before|complete-after|accept" in err.value.message
    assert tree(project) == on_disk
    assert [c.id for c in L.history(project)] == [crashed.id]  # nothing recorded


def test_a_change_left_in_flight_is_classified_first_then_refused(project):
    crashed = _crash(project)
    with pytest.raises(L.Refusal) as err:
        L.run_change(project, _edit("mod.md", b"again\n"), actor="y")
    assert err.value.code == "uncertain_change" and crashed.id in err.value.message
    assert L.history(project)[0].status == "uncertain"


def test_other_files_its_recovery_and_other_undos_stay_allowed(project):
    (project / "free.md").write_bytes(b"free\n")
    earlier = L.run_change(project, _edit("free.md", b"edited\n"), actor="y")
    crashed = _crash(project)
    L.reconcile(project)
    assert L.run_change(project, _edit("other.md", b"new\n"), actor="y").status == "applied"
    assert L.undo_change(project, earlier.change_id, actor="y").status == "undone"
    assert L.recover(project, crashed.id, "restore-before", actor="y").status == "applied"
    assert L.run_change(project, _edit("mod.md", b"now\n"), actor="y").status == "applied"


def test_the_read_only_view_foresees_what_reconciliation_makes_of_it(project):
    crashed = _crash(project)
    stamp = L.history(project)[0].updated_at
    view = L.LedgerView(project, live=False)
    assert [c.id for c in view.for_file(project / "mod.md").uncertain] == [crashed.id]
    [finding] = view.findings(project / "mod.md", "x\n")
    assert finding.code == "ledger_uncertain" and finding.data["change_id"] == crashed.id
    assert "left applying" in finding.message and "run `memzoi reconcile`" in finding.message
    [change] = L.history(project)
    assert (change.status, change.updated_at) == ("applying", stamp)  # read-only


def test_a_change_whose_files_all_reached_their_after_bytes_reads_as_applied(project):
    crashed = _crash(project, at="apply:written")
    facts = L.LedgerView(project).for_file(project / "mod.md")
    assert facts.uncertain == [] and facts.last is not None and facts.last.id == crashed.id


def test_a_live_writer_is_left_alone(project):
    _crash(project)
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLD_LOCK, str(project)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline() == "held\n"
        assert writer_alive(project.resolve())
        view = L.LedgerView(project)
        assert view.for_file(project / "mod.md").uncertain == []
        [(message, step)] = unsettled_report(project)
        assert "live memzoi process" in message and "doctor" in step
    finally:
        holder.communicate("")
    assert not writer_alive(project.resolve())
    assert view.for_file(project / "mod.md").uncertain != []  # read again once the writer is gone


def test_the_report_names_every_unsettled_change_and_what_to_run(project):
    crashed = _crash(project)
    [(message, step)] = unsettled_report(project)
    assert crashed.id in message and "left applying" in message
    assert step.startswith("run `memzoi reconcile`, then settle change")
    L.reconcile(project)
    [(message, step)] = unsettled_report(project)
    assert "(uncertain)" in message and f"memzoi reconcile --recover {crashed.id}" in step
    L.recover(project, crashed.id, "accept", actor="y")
    assert unsettled_report(project) == []


NAMES = ["a.md", "b.md", "c/d.md", "e.md"]


def _record(cid: str, status: str, paths: list[str]) -> L.ChangeRecord:
    return L.ChangeRecord(
        cid, 1, "edit", "x", "cli", None, "s", status, "apply", None, {}, "t", "t", None, None, None, None,
        [FileChange(p, b"before", b"after") for p in paths],
    )  # fmt: skip


class _Uncertain:
    """A ledger whose uncertain changes are given (``by_status`` is all :func:`refuse_unsettled` asks)."""

    def __init__(self, changes: list[L.ChangeRecord]) -> None:
        self.changes = changes

    def by_status(self, conn, *statuses: str) -> list[L.ChangeRecord]:
        assert statuses == ("uncertain",)
        return self.changes


@given(
    held=st.lists(st.lists(st.sampled_from(NAMES), min_size=1, max_size=3, unique=True), max_size=3),
    touched=st.lists(st.sampled_from(NAMES), min_size=1, max_size=4, unique=True),
    operation=st.sampled_from(["apply", "reject", "recover", "supersede"]),
)
def test_a_plan_is_refused_exactly_when_it_touches_an_uncertain_changes_file(held, touched, operation):
    from memzoi.ledger.reconcile import refuse_unsettled

    changes = [_record(f"chg_{i}", "uncertain", paths) for i, paths in enumerate(held)]
    plan = ChangePlan(operation, [FileChange(p, None, b"x") for p in touched])
    first = next((c for c in changes if set(touched) & {f.path for f in c.files}), None)
    if operation == "recover" or first is None:
        refuse_unsettled(_Uncertain(changes), None, plan)  # type: ignore[arg-type]
        return
    with pytest.raises(L.Refusal) as err:
        refuse_unsettled(_Uncertain(changes), None, plan)  # type: ignore[arg-type]
    assert err.value.code == "uncertain_change" and err.value.path in touched
    assert f"change {first.id} (edit)" in err.value.message  # the oldest change holding one of its files


def test_the_views_file_history_shows_each_change_as_its_findings_do(project):
    # One core reading for the hover, the findings and the actions: a change a dead process left in flight is listed
    # with the status reconciliation would give it, read-only.
    crashed = _crash(project)
    view = L.LedgerView(project)
    [shown] = view.file_history(project / "mod.md").changes
    assert (shown.id, shown.status) == (crashed.id, "uncertain")
    assert [c.id for c in view.for_file(project / "mod.md").uncertain] == [crashed.id]
    assert L.history(project)[0].status == "applying"  # nothing written
    L.reconcile(project)
    L.recover(project, crashed.id, "accept", actor="y")
    settled = [(c.id, c.status) for c in L.history(project, "mod.md")]  # what the ledger says of settled changes
    assert [(c.id, c.status) for c in view.file_history(project / "mod.md").changes] == settled


def test_a_change_that_reached_its_after_bytes_is_listed_applied(project):
    crashed = _crash(project, at="apply:written")
    [shown] = L.LedgerView(project).file_history("mod.md").changes
    assert (shown.id, shown.status) == (crashed.id, "applied")
