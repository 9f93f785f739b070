"""A replay of ``memzoi check`` skips the walk when its folders' listing is current
(:mod:`memzoi.stores.walklisting`): every change to what a folder lists (a file added, removed or renamed, a new
folder, a symlink, an editor or hidden file) is still seen, and a folder whose stamp changed while it lists the same
is walked once, then trusted again.

The racy window is closed and no folder is drawn for a re-check here (``settled``), so that a listing is trusted at
once; whether a run walked is told by wrapping :func:`memzoi.runs.checkreplay.walk`. Nothing here measures time.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import pytest

from memzoi.base import freshness
from memzoi.runs import checkreplay

from .builders import edit
from .test_admission import rec
from .test_replay import every_format, judged_again, planned, repo, run  # noqa: F401 - fixtures


@pytest.fixture
def settled(monkeypatch):
    """No racy window and no re-check draw: a folder's or file's stamp is trusted as soon as it was taken."""
    monkeypatch.setattr(freshness, "RACY_NS", 0)
    monkeypatch.setattr(freshness, "SAMPLE_SHARE", 0.0)


@pytest.fixture
def walks(monkeypatch):
    """How many times a replay walked its arguments since the last reset."""
    n = {"walks": 0}
    real = checkreplay.walk

    def counting(args):
        n["walks"] += 1
        return real(args)

    monkeypatch.setattr(checkreplay, "walk", counting)
    return n


def test_an_unchanged_workspace_replays_without_walking(repo, capsys, planned, settled, walks):
    base = every_format(capsys, "--no-cache")
    every_format(capsys)  # stores each format's report with its listing
    walks["walks"] = planned["runs"] = 0
    assert every_format(capsys) == base
    assert planned["runs"] == 0 and walks["walks"] == 0


def _records(root: Path) -> Path:
    return root / ".memzoi/records"


def _nothing(root: Path) -> None:
    pass


CHANGES: dict[str, tuple[Callable[[Path], object], Callable[[Path], object]]] = {
    "a new record": (_nothing, lambda r: (_records(r) / "delta.md").write_text(rec("delta"), encoding="utf-8")),
    "a new record in a folder that was empty": (
        lambda r: (_records(r) / "procedural").mkdir(),
        lambda r: (_records(r) / "procedural/delta.md").write_text(rec("delta"), encoding="utf-8"),
    ),
    "a new folder": (
        _nothing,
        lambda r: ((_records(r) / "sub").mkdir(), (_records(r) / "sub/delta.md").write_text(rec("delta"))),
    ),
    "a record renamed": (_nothing, lambda r: os.rename(_records(r) / "alpha.md", _records(r) / "alpha-2.md")),
    "a record removed": (_nothing, lambda r: os.unlink(_records(r) / "gamma.md")),
    "a symlink": (_nothing, lambda r: os.symlink(_records(r) / "beta.md", _records(r) / "link.md")),
    "an editor swap file": (_nothing, lambda r: (_records(r) / ".beta.md.swp").write_text("x")),
    "a hidden file": (_nothing, lambda r: (_records(r) / ".notes.md").write_text("token: x\n")),
}


@pytest.mark.parametrize("name", list(CHANGES))
def test_a_change_of_what_a_folder_lists_is_never_replayed(repo, capsys, planned, settled, walks, name):
    setup, change = CHANGES[name]
    setup(repo)
    every_format(capsys)
    every_format(capsys)
    walks["walks"] = 0
    assert every_format(capsys) and walks["walks"] == 0  # the listing is trusted before the change
    change(repo)
    judged_again(capsys, planned)


def test_a_touched_folder_is_walked_once_then_its_new_listing_is_kept(repo, capsys, planned, settled, walks):
    every_format(capsys)
    base = run(capsys, ".memzoi", "--format", "json")
    os.utime(_records(repo))  # a new stamp, the same entries
    walks["walks"] = planned["runs"] = 0
    assert run(capsys, ".memzoi", "--format", "json") == base
    assert walks["walks"] == 1 and planned["runs"] == 0  # walked, found the same, replayed
    assert run(capsys, ".memzoi", "--format", "json") == base
    assert walks["walks"] == 1  # the walk's listing was kept: not walked again


def test_a_racy_folder_or_a_file_argument_is_always_walked(repo, capsys, planned, walks, monkeypatch):
    monkeypatch.setattr(freshness, "SAMPLE_SHARE", 0.0)
    monkeypatch.setattr(freshness, "RACY_NS", 10**18)  # every stamp taken within the racy window
    every_format(capsys)
    walks["walks"] = planned["runs"] = 0
    every_format(capsys)
    assert walks["walks"] == 4 and planned["runs"] == 0  # walked each time, and replayed
    monkeypatch.setattr(freshness, "RACY_NS", 0)
    one = str(_records(repo) / "alpha.md")
    run(capsys, one, "--format", "json")
    walks["walks"] = 0
    run(capsys, one, "--format", "json")
    assert walks["walks"] == 1  # a file argument: more than a folder's listing decides


@pytest.mark.parametrize("spelled", [".memzoi", ".memzoi/", "ABS"])
def test_an_edit_is_re_judged_partially_without_a_walk_as_no_cache_prints_it(
    repo, capsys, planned, settled, walks, spelled
):
    arg = str(repo / ".memzoi") if spelled == "ABS" else spelled
    run(capsys, arg, "--format", "json")
    path = _records(repo) / "bad.md"  # a file with a finding: its display path is printed
    path.write_text(edit(path.read_text(encoding="utf-8"), "Body text of bad", "Body text of bad, edited"))
    walks["walks"] = planned["runs"] = planned["partial"] = 0
    got = run(capsys, arg, "--format", "json")
    assert planned["partial"] == 1 and walks["walks"] == 0  # re-judged partially, display paths from the listing
    assert got == run(capsys, arg, "--format", "json", "--no-cache") and "bad.md" in got[1]
    planned["runs"] = 0
    assert run(capsys, arg, "--format", "text") == run(capsys, arg, "--format", "text", "--no-cache")
    assert planned["runs"] == 1  # the --no-cache run only: the report of the partial run replayed in text
