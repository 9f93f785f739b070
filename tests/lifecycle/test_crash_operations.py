"""Fault injection across every lifecycle operation and its undo: a forked child hard-exits (``os._exit``, no
cleanup) at every numbered durable step; the parent restarts, reconciles and checks that the status is right,
that every file equals its before or after bytes, that reconciliation wrote nothing (no replay), that nothing was
lost, and that the repository stays usable (re-run, undo or explicit recovery)."""

from __future__ import annotations

import shutil
from collections import Counter
from collections.abc import Callable
from pathlib import Path

import pytest

from memzoi import ledger as L
from memzoi.base.findings import Severity
from memzoi.judge.analysis import analyze_bytes
from memzoi.lifecycle import (
    add_local,
    apply_proposal,
    list_local,
    propose_supersede,
    propose_tombstone,
    reject_proposal,
    route_local,
)
from memzoi.lifecycle.materialize import derive_decision, derive_plan, materialize_apply
from memzoi.lifecycle.materialize_candidate import build_candidate
from memzoi.lifecycle.reattest import reattest

from ..ledger.faults import CRASH_EXIT, run_child, scratch, tree  # noqa: F401 (scratch is a fixture)
from .conftest import PENDING, seed
from .test_materialize import DRAFT


def materialize(root: Path, draft: str = DRAFT):
    """Candidate, plan, decision and apply of a draft record, as the CLI does it."""
    candidate = build_candidate(root, draft)
    plan = derive_plan(candidate)
    return materialize_apply(root, candidate, plan, derive_decision(plan, "2026-07-07T00:00:00Z"), actor="x")


OPERATIONS: dict[str, Callable[[Path], object]] = {
    "apply-create": lambda r: apply_proposal(r, "mem_2026_07_06_testing_procedure", actor="x"),
    "apply-supersede": lambda r: apply_proposal(r, "mem_2026_07_06_auth_supersede", actor="x"),
    "apply-tombstone": lambda r: apply_proposal(r, "mem_2026_07_06_auth_tombstone", actor="x"),
    "reject": lambda r: reject_proposal(r, "mem_2026_07_06_auth_001", reason="no", actor="x"),
    "reject-receipt": lambda r: reject_proposal(r, "mem_2026_07_06_auth_handoff", reason="no", actor="x"),
    "route-local": lambda r: route_local(r, "mem_2026_07_06_auth_001", actor="x"),
    "supersede-packet": lambda r: propose_supersede(
        r, "rust-msrv-is-1-96-1", title="Rust MSRV is 1.97+", body="Support 1.97.", reason="bump", actor="x"
    ),
    "tombstone-packet": lambda r: propose_tombstone(r, "rust-msrv-is-1-96-1", reason="gone", actor="x"),
    "local-add": lambda r: add_local(r, title="Local note", body="Only on this machine.", actor="x"),
    "materialize": materialize,
    "reattest": lambda r: reattest(r, "keep-docs-current", actor="x"),
}
LOCAL_OPS = {"route-local", "local-add"}
#: Operations that purge the bytes they remove (a hash receipt): undo is refused, so there is no undo to crash.
PURGING_OPS = {"reject-receipt"}


@pytest.fixture(scope="module")
def template(tmp_path_factory) -> Path:
    root = seed(tmp_path_factory.mktemp("tpl") / "repo")
    handoff = root / PENDING / "mem_2026_07_06_auth_handoff.md"
    handoff.write_bytes(handoff.read_bytes().replace(b"sensitivity: repo-safe", b"sensitivity: local-only"))
    # An attested record edited by hand afterwards, for re-attestation.
    materialize(
        root,
        DRAFT.replace("prefer-small-modules", "keep-docs-current").replace("Prefer small modules", "Keep docs current"),
    )
    rec = root / ".memzoi" / "records" / "keep-docs-current.md"
    rec.write_bytes(rec.read_bytes().replace(b"500 lines", b"450 lines"))
    return root


def _visible_files(t: dict[str, bytes]) -> dict[str, bytes]:
    return {p: b for p, b in t.items() if not p.rsplit("/", 1)[-1].startswith(".")}


def _classify(files: list[L.FileChange], now: dict[str, bytes], undo: bool) -> str:
    after = all(now.get(f.path) == f.after for f in files)
    before = all(now.get(f.path) == f.before for f in files)
    if not undo:
        return "applied" if after else "failed" if before else "uncertain"
    return "undone" if before else "applied" if after else "uncertain"


def crash_everywhere(tmp_path: Path, template: Path, name: str, *, undo: bool) -> Counter:
    op = OPERATIONS[name]
    outcomes: Counter = Counter()
    k = 0
    while True:
        k += 1
        root = tmp_path / f"{name}-{'u' if undo else 'a'}{k}"
        shutil.copytree(template, root, symlinks=True)
        original = tree(root)
        if undo:
            cid = op(root).change_id
            start = tree(root)
            code, steps = run_child(lambda: L.undo_change(root, cid, actor="x"), crash_at=k)
        else:
            start = original
            code, steps = run_child(lambda: op(root), crash_at=k)
        if code != CRASH_EXIT:
            assert code == 0 and len(steps) == k - 1, (name, code, steps)
            return outcomes
        step = steps[-1]
        crashed = tree(root)
        L.reconcile(root)
        after_reconcile = tree(root)
        assert _visible_files(after_reconcile) == _visible_files(crashed), "reconciliation must never write"
        assert _visible_files(after_reconcile) == after_reconcile, f"temporary files left after {step}"
        changes = [c for c in L.history(root) if not (undo and c.id != cid)]
        if not undo and not changes:
            assert step in ("locked", "planned") and after_reconcile == start, (name, step)
            outcomes["not recorded"] += 1
            assert op(root)  # nothing half-done blocks a fresh attempt
            continue
        change = changes[0]
        for f in change.files:
            assert after_reconcile.get(f.path) in (f.before, f.after), f"{name}: {f.path} torn at {step}"
            # Nothing lost: the snapshots hold the files exactly as they were before and after the change.
            assert f.before == original.get(f.path), (name, f.path)
            if undo:
                assert f.after == start.get(f.path), (name, f.path)
            elif f.after is not None:
                analysis = analyze_bytes(f.after, root / f.path)
                assert not [x for x in analysis.findings if x.severity == Severity.ERROR], (name, f.path)
        expected = _classify(change.files, after_reconcile, undo)
        if undo and step in ("locked", "planned"):
            expected = "applied"
        assert change.status == expected, (name, step, change.status, expected)
        if name in LOCAL_OPS:
            assert bool(list_local(root)) == (change.status == "applied"), (name, step, change.status)
        # The repository stays usable.
        if change.status == "uncertain":
            L.recover(root, change.id, "restore-before", actor="x")
            assert tree(root) == original
        elif change.status == "applied" and name in PURGING_OPS:
            with pytest.raises(L.Refusal) as err:
                L.undo_change(root, change.id, actor="x")
            assert err.value.code == "purged_secret" and tree(root) == after_reconcile
        elif change.status == "applied":
            L.undo_change(root, change.id, actor="x")
            assert tree(root) == original
        elif change.status == "failed":
            assert tree(root) == original
            op(root)
        else:  # undone
            assert tree(root) == original
        outcomes[f"{change.status}"] += 1


@pytest.mark.timeout(900)  # a hang guard: hundreds of forked children, a minute or more on a loaded machine
def test_crash_at_every_step_of_every_operation_and_undo(scratch, template, monkeypatch, capsys):
    tmp_path = scratch
    monkeypatch.setenv("MEMZOI_HOME", str(tmp_path / "home"))
    total: Counter = Counter()
    lines = []
    for name in OPERATIONS:
        for undo in (False, True) if name not in PURGING_OPS else (False,):
            outcomes = crash_everywhere(tmp_path, template, name, undo=undo)
            label = f"undo {name}" if undo else name
            n = sum(outcomes.values())
            assert n >= 3, (label, outcomes)
            lines.append(f"  {label:24} {n:3} points  {dict(sorted(outcomes.items()))}")
            total.update(outcomes)
            multi_file = name not in ("supersede-packet", "tombstone-packet", "local-add", "materialize", "reattest")
            assert outcomes["applied"] >= 1 and (outcomes["undone"] if undo else outcomes["failed"] or not multi_file)
            if multi_file:  # a crash between two file writes leaves a change only explicit recovery settles
                assert outcomes["uncertain"] >= 1, (label, outcomes)
    with capsys.disabled():
        print(
            f"\ninjected {sum(total.values())} crash points over {len(OPERATIONS)} operations and their undo: "
            f"{dict(sorted(total.items()))}"
        )
        print("\n".join(lines))
    assert {"applied", "failed", "uncertain", "undone", "not recorded"} <= set(total)
