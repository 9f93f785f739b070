"""Writes through a temporary file renamed over the target leave no temporary file when the rename or the write
fails (a folder in the way, a full disk): the tool stamp's digest store and a maintenance plan's ``--output``."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from memzoi.agent.maintenance_output import write_plan
from memzoi.stores import toolstamp


def test_the_tool_stamps_store_leaves_no_temporary_file_when_it_cannot_be_written(tmp_path: Path):
    code = tmp_path / "pkg"
    code.mkdir()
    (code / "a.py").write_text("x = 1\n")
    store = tmp_path / "state" / "digests.json"
    store.mkdir(parents=True)  # a folder in the way: the rename fails
    digest = toolstamp.source_digest(str(code), store)
    assert digest == toolstamp.source_digest(str(code), None)  # the digest is right all the same
    assert sorted(os.listdir(store.parent)) == ["digests.json"]


def test_a_plan_output_that_cannot_be_replaced_leaves_no_temporary_file(tmp_path: Path):
    root = tmp_path / "repo"
    root.mkdir()
    out = tmp_path / "out" / "plan.json"
    (out / "inside").mkdir(parents=True)  # a non-empty folder in the way: the rename fails
    with pytest.raises(OSError):
        write_plan(root, {"schema": "x"}, out)
    assert sorted(os.listdir(out.parent)) == ["plan.json"]
