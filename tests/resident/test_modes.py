"""Resident files keep their permissions (promise 2): approving a candidate rewrites the file in place with its
mode, the ``.bak`` copy of a hand-edited file gets that mode too, and an undo keeps it."""

from __future__ import annotations

import os
import stat

import pytest

from memzoi.resident import service

from .conftest import rules


def mode(path) -> int:
    return stat.S_IMODE(os.lstat(path).st_mode)


@pytest.mark.parametrize("file_mode", [0o600, 0o640])
def test_approve_and_undo_keep_the_resident_file_mode_and_the_backup_gets_it(project, file_mode):
    path = rules(project)
    path.parent.mkdir(parents=True)
    path.write_text("a hand-written rule", encoding="utf-8")  # no review saw it: approve keeps a .bak copy
    os.chmod(path, file_mode)
    cand = service.propose(
        project, scope="project", action="add", content="Run make lint.", reason="asked", confidence=0.5, actor="a"
    ).candidate
    service.apply(project, cand.id, actor="me")
    (bak,) = path.parent.glob("RULES.md.bak.*")
    assert bak.read_text(encoding="utf-8") == "a hand-written rule"
    assert (mode(path), mode(bak)) == (file_mode, file_mode)
    service.undo(project, cand.id, actor="me")
    assert mode(path) == file_mode and "Run make lint." not in path.read_text(encoding="utf-8")
