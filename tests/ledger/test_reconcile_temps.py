"""Reconciliation removes the temporary files (``.<name>.<random>.tmp``) a change killed in flight left beside its
target files, at every step the kill can land on, so a later ``git add -A`` cannot commit one; a temporary file
holding other bytes (an edit displaced when the process died) stays."""

from __future__ import annotations

from pathlib import Path

import pytest

from memzoi import ledger as L

from .faults import CRASH_EXIT, run_child
from .test_ledger import plan, project  # noqa: F401 (project is a fixture)


def temps(root: Path) -> list[str]:
    """The temporary files of an atomic write under ``root`` (:func:`memzoi.base.fsutil.temp_name`)."""
    return sorted(p.relative_to(root).as_posix() for p in root.rglob(".*.tmp"))


def steps(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The durable steps of one apply of :func:`plan`, in order."""
    monkeypatch.setenv("MEMZOI_HOME", str(tmp_path / "dry-home"))
    root = tmp_path / "dry"
    root.mkdir()
    from .test_ledger import BASE  # noqa: PLC0415

    for name, data in BASE.items():
        (root / name).write_bytes(data)
    code, reached = run_child(lambda: L.run_change(root, plan, actor="x"))
    assert code == 0, reached
    return reached


def test_a_change_killed_at_any_step_leaves_no_temporary_file_after_reconciliation(tmp_path, monkeypatch, project):
    home = tmp_path / "home"
    all_steps = steps(tmp_path, monkeypatch)
    monkeypatch.setenv("MEMZOI_HOME", str(home))
    seen_leftover = False
    for n in range(1, len(all_steps) + 1):
        root = tmp_path / f"p{n}"
        root.mkdir()
        for p in project.rglob("*"):
            if p.is_file():
                (root / p.relative_to(project)).write_bytes(p.read_bytes())
        monkeypatch.setenv("MEMZOI_HOME", str(tmp_path / f"home{n}"))
        code, _ = run_child(lambda root=root: L.run_change(root, plan, actor="x"), crash_at=n)
        assert code == CRASH_EXIT
        seen_leftover |= bool(temps(root))
        L.reconcile_at_start(root)
        assert temps(root) == [], all_steps[n - 1]
    assert seen_leftover  # the kill did land where a temporary file was on disk


def test_a_temporary_file_with_other_bytes_stays(tmp_path, monkeypatch, project):
    code, _ = run_child(lambda: L.run_change(project, plan, actor="x"), crash_at="apply:file0:done")
    assert code == CRASH_EXIT
    foreign = project / ".mod.md.0123456789ab.tmp"
    foreign.write_bytes(b"a hand edit displaced by the dead writer\n")
    L.reconcile_at_start(project)
    assert foreign.read_bytes() == b"a hand edit displaced by the dead writer\n"
