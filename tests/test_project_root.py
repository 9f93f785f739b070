"""The project root rule (Memzoi reference §7.2) in :mod:`memzoi.judge.projectroot`, written with :mod:`os` alone so
that ``memzoi search`` can find the root before anything else is imported, is the rule it replaced, written with
:mod:`pathlib`, on trees of nested folders with each marker anywhere (and symlinked starts)."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from hypothesis import given, settings, strategies as st

from memzoi.cli._common import project_root
from memzoi.judge.projectroot import discover, root_of
from memzoi.judge.workspace import find_project_root


def _pathlib_rule(start: Path) -> Path:
    """The rule as ``workspace.find_project_root`` spelt it before (the reference the new one is held to)."""
    here = start.resolve()
    if not here.is_dir():
        here = here.parent
    chain = [here, *here.parents]
    for d in chain:
        m = d / ".memzoi"
        if (m / "records").is_dir() or (m / "config.toml").is_file():
            return d
    for d in chain:
        if (d / ".git").exists():
            return d
    return here


MARKERS = ["records", "config", "git", "memzoi-only", "records-file", "none"]


@settings(max_examples=60, deadline=None)
@given(
    marks=st.lists(st.sampled_from(MARKERS), min_size=1, max_size=5),
    depth=st.integers(min_value=0, max_value=4),
    as_file=st.booleans(),
    linked=st.booleans(),
)
def test_the_os_rule_is_the_pathlib_rule(marks, depth, as_file, linked):
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp).resolve()
        folder = base
        for i, mark in enumerate(marks):  # one marker per level of folders
            folder = folder / f"d{i}"
            folder.mkdir()
            if mark == "records":
                (folder / ".memzoi" / "records").mkdir(parents=True)
            elif mark == "config":
                (folder / ".memzoi").mkdir()
                (folder / ".memzoi" / "config.toml").write_text("")
            elif mark == "git":
                (folder / ".git").mkdir()
            elif mark == "memzoi-only":
                (folder / ".memzoi").mkdir()
            elif mark == "records-file":
                (folder / ".memzoi").mkdir()
                (folder / ".memzoi" / "records").write_text("")
        start = base / "d0"
        for i in range(1, min(depth, len(marks) - 1) + 1):
            start = start / f"d{i}"
        if as_file:
            start = start / "file.md"
            start.write_text("")
        if linked:
            link = base / "link"
            link.symlink_to(start)
            start = link
        want = _pathlib_rule(start)
        assert Path(discover(start)) == want == find_project_root(start)
        assert Path(discover(os.path.relpath(start))) == want  # relative to the current folder


def test_root_of_is_the_option_resolved_or_the_discovery_from_here(tmp_path, monkeypatch):
    (tmp_path / "proj" / ".memzoi" / "records" / "deep").mkdir(parents=True)
    (tmp_path / "alias").symlink_to(tmp_path / "proj")
    monkeypatch.chdir(tmp_path / "proj" / ".memzoi" / "records" / "deep")
    assert root_of(None) == str((tmp_path / "proj").resolve())
    assert root_of(str(tmp_path / "alias")) == str((tmp_path / "proj").resolve())
    assert root_of("") == root_of(None)  # an empty --root is no --root, as before

    class Args:
        root = str(tmp_path / "alias")

    assert project_root(Args()) == (tmp_path / "proj").resolve()  # type: ignore[arg-type]
