"""The stat of many files (:mod:`memzoi.base.statmany`), the plane's folder listing it is given
(:func:`memzoi.stores.planelisting.walk`) and the batch form of the freshness rule the index's refresh asks
(:func:`memzoi.base.freshness.trusted`), without a server or an index."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import given, strategies as st

from memzoi.base import freshness, statmany
from memzoi.judge.workspace import plane_entries
from memzoi.stores.planelisting import walk


def _tree(root: Path, n: int) -> list[tuple[str, list[str]]]:
    folders = []
    for d in range(3):
        folder = root / f"d{d}"
        folder.mkdir()
        names = [f"f{d}-{i}.md" for i in range(n)]
        for k, name in enumerate(names):
            (folder / name).write_bytes(b"x" * (k % 7))
        folders.append((str(folder), names))
    return folders


def _listed_stamps(got: list[tuple[str, list[str], list[os.stat_result | None]]]) -> dict[str, tuple[int, ...] | None]:
    return {
        os.path.join(folder, name): None if s is None else (s.st_size, s.st_mtime_ns, s.st_ino, s.st_ctime_ns, s.st_dev)
        for folder, names, stats in got
        for name, s in zip(names, stats, strict=True)
    }


@pytest.mark.parametrize("threads", [1, 2, 4])
def test_every_name_gets_its_own_stat_on_any_number_of_threads(tmp_path, monkeypatch, threads):
    monkeypatch.setattr(statmany, "THREAD_THRESHOLD", 5)  # so that 3 × 40 names are cut up
    folders = _tree(tmp_path, 40)
    got = _listed_stamps(statmany.lstat_listed([folder for folder, _ in folders], threads=threads))
    want = {
        os.path.join(folder, name): _listed_stamps([(folder, [name], [os.lstat(os.path.join(folder, name))])])[
            os.path.join(folder, name)
        ]
        for folder, names in folders
        for name in names
    }
    assert got == want and len(got) == 120


def test_no_thread_is_left_running(tmp_path, monkeypatch):
    import threading

    monkeypatch.setattr(statmany, "THREAD_THRESHOLD", 1)
    before = set(threading.enumerate())
    statmany.lstat_listed([folder for folder, _ in _tree(tmp_path, 10)], threads=3)
    assert set(threading.enumerate()) == before


def test_a_listing_stats_every_entry_but_the_hidden_ones(tmp_path, monkeypatch):
    """:func:`memzoi.base.statmany.lstat_listed`: every entry of each folder but hidden ones, with its lstat of any
    type (a file, a folder, a link), on one thread or several; a folder that is a link or is gone is left out."""
    monkeypatch.setattr(statmany, "THREAD_THRESHOLD", 2)
    folder = tmp_path / "f"
    (folder / "sub.md").mkdir(parents=True)
    for name in ("a.md", "b.txt", ".hidden.md"):
        (folder / name).write_text("x")
    (folder / "link.md").symlink_to(folder / "a.md")
    (tmp_path / "linked").symlink_to(folder)
    for threads in (1, 3):
        got = statmany.lstat_listed([str(folder), str(tmp_path / "linked"), str(tmp_path / "missing")], threads=threads)
        assert [(f, sorted(n)) for f, n, _ in got] == [(str(folder), ["a.md", "b.txt", "link.md", "sub.md"])]
        kinds = {n: st.st_mode for n, st in zip(got[0][1], got[0][2], strict=True)}
        assert os.path.isfile(folder / "a.md") and kinds["a.md"] == os.lstat(folder / "a.md").st_mode
        assert kinds["sub.md"] == os.lstat(folder / "sub.md").st_mode  # a folder
        assert kinds["link.md"] == os.lstat(folder / "link.md").st_mode  # the link itself
    assert statmany.lstat_listed([]) == []


def test_the_walk_holds_exactly_the_plane_entries(tmp_path):
    memzoi = tmp_path / ".memzoi"
    rec = memzoi / "records"
    (rec / "deep/er").mkdir(parents=True)
    (memzoi / "proposals/pending").mkdir(parents=True)
    for rel in ("a.md", "deep/b.md", "deep/er/c.md", ".hidden.md", "index.md", "log.md", "notes.txt"):
        (rec / rel).write_text("x")
    (rec / ".hidden-dir").mkdir()
    (rec / ".hidden-dir/in.md").write_text("x")
    (rec / "folder.md").mkdir()
    (rec / "folder.md/inside.md").write_text("x")
    (rec / "link.md").symlink_to(rec / "a.md")
    (rec / "linked-dir").symlink_to(rec / "deep")
    (rec / "empty").mkdir()
    (memzoi / "proposals/pending/p.md").write_text("x")
    (memzoi / "elsewhere.md").write_text("x")
    want = {e.path for e in plane_entries(str(memzoi))}
    got = walk(tmp_path)
    assert sorted(got.paths()) == sorted(want) and len(want) == 5 and not got.unstated
    assert got.folders == {os.path.dirname(p) for p in want}  # a folder without a file is not among them


_NS = st.integers(min_value=0, max_value=10**12)


@given(
    size=st.integers(0, 3),
    mtime=_NS,
    ctime=_NS,
    checked=_NS,
    now=_NS,
    same=st.booleans(),
    kind=st.sampled_from(["ext4", "fuse.sshfs", "vfat", ""]),
    draw=st.floats(0, 1),
)
def test_trusted_is_vouches_for_a_stamp_at_hand(size, mtime, ctime, checked, now, same, kind, draw):
    stamp = (size, mtime, 7, ctime)
    stored = stamp if same else (size, mtime, 8, ctime)
    mp = pytest.MonkeyPatch()
    try:
        mp.setattr(freshness, "fs_type", lambda dev: kind)
        mp.setattr(freshness.random, "random", lambda: draw)
        mp.setattr(freshness.time, "time_ns", lambda: now)
        assert freshness.trusted(stamp, 3, stored, checked, now) == freshness.vouches(
            freshness.Stat(stamp, 3), stored, checked
        )
    finally:
        mp.undo()
