"""At most once under crashes (reference §3, §9): a kill at every durable step of apply and of undo, then a
restart; reconciliation classifies the candidate from the file and never replays the write."""

from __future__ import annotations

import pytest

from memzoi.resident import candidates as db, service
from memzoi.resident.format import serialize

from ..ledger.faults import CRASH_EXIT, run_child, tree
from .conftest import rules

BEFORE = ["Use tabs."]
AFTER = ["Use tabs.", "Run make lint before pushing."]
APPLY_STEPS = ["locked", "planned", "recorded", "apply:temp", "apply:renamed", "apply:written", "committed"]
UNDO_STEPS = [s.replace("apply:", "undo:") for s in APPLY_STEPS]


def _setup(root):
    path = rules(root)
    path.parent.mkdir(parents=True)
    path.write_text(serialize(BEFORE), encoding="utf-8")
    return service.propose(
        root, scope="project", action="add", content=AFTER[1], reason="r", confidence=0.5, actor="a"
    ).candidate


def _status(cid):
    with db.connect() as conn:
        return db.get(conn, cid).status


def test_steps_of_a_full_apply_and_undo(project):
    cand = _setup(project)
    code, steps = run_child(lambda: service.apply(project, cand.id, actor="a"))
    assert (code, steps) == (0, APPLY_STEPS)
    code, steps = run_child(lambda: service.undo(project, cand.id, actor="a"))
    assert (code, steps) == (0, UNDO_STEPS)


# step killed at -> (status right after the kill, status after reconciliation, entries on disk)
_APPLY = {
    "locked": ("pending", "pending", BEFORE),
    "planned": ("pending", "pending", BEFORE),
    "recorded": ("applying", "failed", BEFORE),
    "apply:temp": ("applying", "failed", BEFORE),
    "apply:renamed": ("applying", "applied", AFTER),
    "apply:written": ("applying", "applied", AFTER),
    "committed": ("applied", "applied", AFTER),
}
_UNDO = {
    "locked": ("applied", "applied", AFTER),
    "planned": ("applied", "applied", AFTER),
    "recorded": ("undoing", "applied", AFTER),
    "undo:temp": ("undoing", "applied", AFTER),
    "undo:renamed": ("undoing", "undone", BEFORE),
    "undo:written": ("undoing", "undone", BEFORE),
    "committed": ("undone", "undone", BEFORE),
}


@pytest.mark.parametrize("step", APPLY_STEPS)
def test_kill_during_apply_then_restart(project, step):
    cand = _setup(project)
    code, steps = run_child(lambda: service.apply(project, cand.id, actor="a"), crash_at=APPLY_STEPS.index(step) + 1)
    assert code == CRASH_EXIT and steps[-1] == step
    killed, settled, entries = _APPLY[step]
    assert _status(cand.id) == killed
    at_kill = {k: v for k, v in tree(project).items() if not k.startswith(".zuno/.RULES.md.")}
    service.reconcile(project)
    assert _status(cand.id) == settled
    assert tree(project) == at_kill  # nothing replayed; an interrupted write's temporary file is removed
    assert rules(project).read_text(encoding="utf-8") == serialize(entries)
    if settled in ("pending", "failed"):  # the candidate can still be approved, once
        assert service.apply(project, cand.id, actor="a").status == "applied"
        assert rules(project).read_text(encoding="utf-8") == serialize(AFTER)


@pytest.mark.parametrize("step", UNDO_STEPS)
def test_kill_during_undo_then_restart(project, step):
    cand = _setup(project)
    service.apply(project, cand.id, actor="a")
    code, steps = run_child(lambda: service.undo(project, cand.id, actor="a"), crash_at=UNDO_STEPS.index(step) + 1)
    assert code == CRASH_EXIT and steps[-1] == step
    killed, settled, entries = _UNDO[step]
    assert _status(cand.id) == killed
    at_kill = {k: v for k, v in tree(project).items() if not k.startswith(".zuno/.RULES.md.")}
    service.reconcile(project)
    assert _status(cand.id) == settled
    assert tree(project) == at_kill
    assert rules(project).read_text(encoding="utf-8") == serialize(entries)
    if settled == "applied":
        assert service.undo(project, cand.id, actor="a").status == "undone"
        assert rules(project).read_text(encoding="utf-8") == serialize(BEFORE)


def test_reconciliation_runs_before_the_next_operation(project):
    cand = _setup(project)
    run_child(lambda: service.apply(project, cand.id, actor="a"), crash_at=APPLY_STEPS.index("apply:written") + 1)
    assert _status(cand.id) == "applying"
    other = service.propose(
        project, scope="project", action="add", content="third", reason="r", confidence=0.5, actor="a"
    ).candidate
    assert _status(cand.id) == "applied"  # classified by the next operation on the file, not replayed
    assert service.apply(project, other.id, actor="a").after == [*AFTER, "third"]


def test_list_reconciles_first(project, capsys):
    from memzoi.cli.main import main

    cand = _setup(project)
    run_child(lambda: service.apply(project, cand.id, actor="a"), crash_at=APPLY_STEPS.index("apply:renamed") + 1)
    assert main(["resident", "list", "--root", str(project)]) == 0
    assert f"{cand.id}  applied" in capsys.readouterr().out


# A CR file with a byte order mark: the temporary copy an interrupted write leaves holds the file's own layout, is
# recognised and removed; the file holds the exact before or after bytes; an undo afterwards gives the first back.
_CR_BEFORE = b"\xef\xbb\xbfUse tabs.\r\xc2\xa7\rOld rule.\r"
_CR_AFTER = b"\xef\xbb\xbfUse tabs.\r"


@pytest.mark.parametrize("step", APPLY_STEPS)
def test_kill_during_apply_of_a_cr_file_with_a_bom(project, step):
    path = rules(project)
    path.parent.mkdir(parents=True)
    path.write_bytes(_CR_BEFORE)
    cand = service.propose(
        project, scope="project", action="remove", old_text="Old", reason="r", confidence=0.5, actor="a"
    ).candidate
    code, steps = run_child(lambda: service.apply(project, cand.id, actor="a"), crash_at=APPLY_STEPS.index(step) + 1)
    assert code == CRASH_EXIT and steps[-1] == step
    at_kill = {k: v for k, v in tree(project).items() if not k.startswith(".zuno/.RULES.md.")}
    service.reconcile(project)
    assert tree(project) == at_kill  # nothing replayed; the temporary copy is removed
    settled = _status(cand.id)
    assert path.read_bytes() == (_CR_AFTER if settled == "applied" else _CR_BEFORE)
    if settled != "applied":
        assert service.apply(project, cand.id, actor="a").status == "applied"
        assert path.read_bytes() == _CR_AFTER
    assert service.undo(project, cand.id, actor="a").status == "undone"
    assert path.read_bytes() == _CR_BEFORE
