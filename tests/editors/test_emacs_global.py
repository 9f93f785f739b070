"""Which project the global resident file belongs to in editors/emacs, in a batch Emacs with no server: the project
it is used from (the command line's rule), never Zuno's config folder (newuser5 D4: the listing named a made-up
``<zuno>/memory/.zuno/RULES.md`` and missed the project's candidates)."""

from __future__ import annotations

import pytest

from .editor_runs import editor, editor_env, run_script

pytestmark = pytest.mark.timeout(120)


@pytest.mark.editor_packages
def test_the_global_file_belongs_to_the_project_emacs_works_in(tmp_path):
    emacs, server = editor("emacs")
    root, elsewhere, zuno = tmp_path / "r1", tmp_path / "elsewhere", tmp_path / "zuno"
    (root / ".memzoi" / "records").mkdir(parents=True)
    (root / "src").mkdir()
    (root / "src" / "main.c").write_text("int main(void) { return 0; }\n", encoding="utf-8")
    elsewhere.mkdir()
    env = editor_env("emacs", tmp_path, server, tmp_path / "memzoi-home", ZUNO_CONFIG_DIR=str(zuno))
    run = run_script(emacs, "emacs_global.el", [str(root), str(elsewhere)], tmp_path / "out.json", env, timeout=60)
    assert run.proc.returncode == 0, run.ok()
    r = run.report
    assert r["after_a_project_file"] == f"{root}/", r
    assert r["started_in_the_project"] == f"{root}/", r
    assert r["outside"] is False, r  # none: Zuno's config folder is not a project
