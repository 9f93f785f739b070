"""editors/emacs after a change on disk, in a batch Emacs with no server (the ``memzoi/changed`` handler given the
contract's params): the buffer of a file the change created is reverted (the case Neovim's ``:checktime`` missed),
and a buffer with unsaved edits is kept and the user told its file changed on disk."""

from __future__ import annotations

import pytest

from .editor_runs import editor, editor_env, run_script

pytestmark = pytest.mark.timeout(120)


@pytest.mark.editor_packages
def test_emacs_reverts_a_created_file_and_keeps_unsaved_edits(tmp_path):
    emacs, server = editor("emacs")
    root = tmp_path / "repo"
    root.mkdir()
    env = editor_env("emacs", tmp_path, server, tmp_path / "memzoi-home")
    run = run_script(emacs, "emacs_reload.el", [str(root)], tmp_path / "out.json", env, timeout=60)
    assert run.proc.returncode == 0, run.ok()
    r = run.report
    assert r["reverted"] == 1 and r["created"] == "- Always run pytest -q before committing.\n", r
    assert r["created_modified"] is None, r  # nil: the buffer is the file
    assert r["kept_reverted"] == 0 and r["kept"].endswith("typed by the user\n"), r
    assert "Memzoi: your edits kept; file changed on disk: RULES.md" in r["messages"], r
