"""editors/nvim in a real headless Neovim 0.11 against a real memzoi-lsp: what the server re-judges without an edit
of the buffer reaches the open buffer. Neovim 0.11 pulls diagnostics only on didOpen and didChange and has no
``workspace/diagnostic/refresh``; the client advertises it and answers it by pulling again, so a configuration
change on disk (here a severity in ``[rules]``) re-grades the open record while its buffer stays untouched."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from .conftest import REPO
from .editor_runs import editor, editor_env, run_script

pytestmark = pytest.mark.timeout(300)


def test_a_configuration_change_re_grades_the_open_buffer(tmp_path: Path) -> None:
    nvim, server = editor("nvim")
    root = tmp_path / "repo"
    shutil.copytree(REPO / "examples", root)
    record = root / ".memzoi" / "records" / "release-notes-live-in-changelog.md"
    config = root / ".memzoi" / "config.toml"
    env = editor_env("nvim", tmp_path, server, tmp_path / "memzoi-home")
    run = run_script(nvim, "nvim_refresh.lua", [str(record), str(config)], tmp_path / "out.json", env)
    assert run.proc.returncode == 0, run.ok()
    report = run.report
    assert report["before"] == 2 and report["after"] == 3, report  # WARN, then INFO
    assert report["untouched"] is True and report["repulled"] >= 1, report
