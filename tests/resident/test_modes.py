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


@pytest.mark.parametrize("folder_mode", [0o750, 0o700], ids=oct)
def test_the_folder_of_a_new_resident_file_is_no_wider_than_the_project(project, folder_mode):
    """The resident file's folder (made by the companion lock, then holding the file) takes the project folder's
    mode under umask 022, not 0755."""
    os.chmod(project, folder_mode)
    old = os.umask(0o022)
    try:
        cand = service.propose(
            project, scope="project", action="add", content="Run make lint.", reason="asked", confidence=0.5, actor="a"
        ).candidate
        service.apply(project, cand.id, actor="me")
    finally:
        os.umask(old)
    path = rules(project)
    assert "Run make lint." in path.read_text(encoding="utf-8")
    assert mode(path.parent) == folder_mode
