"""A folder memzoi creates is never more open than the folder it is made in (promise 2): the permission bits of
the nearest existing folder above it, narrowed by the umask; the kernel's setgid inheritance kept, never a setuid
or sticky bit; the guarded and atomic writes, ``memzoi init`` and a resident file's folder follow the rule."""

from __future__ import annotations

import json
import os
import shutil
import stat
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from hypothesis import given, settings, strategies as st

from memzoi.base.fsio import atomic_write
from memzoi.base.fsutil import swap_file
from memzoi.base.newfolders import folder_bits, make_folders, nearest_existing
from memzoi.cli.main import main


def mode(path: Path) -> int:
    return stat.S_IMODE(os.lstat(path).st_mode)


@contextmanager
def umask(value: int) -> Iterator[None]:
    old = os.umask(value)
    try:
        yield
    finally:
        os.umask(old)


@pytest.mark.parametrize("parent_mode", [0o750, 0o700, 0o755], ids=oct)
def test_new_folders_take_the_mode_of_the_folder_above(tmp_path, parent_mode):
    parent = tmp_path / "private"
    parent.mkdir()
    os.chmod(parent, parent_mode)
    with umask(0o022):
        made = make_folders(parent / "a" / "b" / "c")
    assert made == [parent / "a", parent / "a" / "b", parent / "a" / "b" / "c"]
    assert {mode(d) for d in made} == {parent_mode}
    assert mode(parent) == parent_mode
    assert make_folders(parent / "a" / "b") == []  # already there: nothing made, nothing changed


def test_the_umask_still_narrows_a_new_folder(tmp_path):
    os.chmod(tmp_path, 0o777)
    with umask(0o027):
        [made] = make_folders(tmp_path / "new")
    assert mode(made) == 0o750  # 0777 above, but never wider than the umask's mode


def test_an_existing_folder_keeps_its_mode_and_only_the_missing_ones_are_made(tmp_path):
    os.chmod(tmp_path, 0o700)
    (tmp_path / "open").mkdir()
    os.chmod(tmp_path / "open", 0o755)
    with umask(0o022):
        made = make_folders(tmp_path / "open" / "x" / "y")
    assert made == [tmp_path / "open" / "x", tmp_path / "open" / "x" / "y"]
    assert mode(tmp_path / "open") == 0o755 and {mode(d) for d in made} == {0o755}  # the nearest existing: "open"


def test_a_file_in_the_way_raises_and_makes_nothing(tmp_path):
    (tmp_path / "f").write_text("x", encoding="utf-8")
    with pytest.raises(FileExistsError):
        make_folders(tmp_path / "f")
    with pytest.raises(OSError):
        make_folders(tmp_path / "f" / "below")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["f"]


def test_nearest_existing_and_bits(tmp_path):
    os.chmod(tmp_path, 0o710)
    assert nearest_existing(tmp_path / "a" / "b") == tmp_path
    assert folder_bits(tmp_path / "a" / "b") == 0o710


def test_a_group_shared_folder_keeps_setgid_and_its_group(tmp_path):
    shared = tmp_path / "shared"
    shared.mkdir()
    if os.geteuid() == 0:
        os.chown(shared, -1, 4242)  # a group this process is not in, as a team's folder often is
    os.chmod(shared, 0o2770)
    if not mode(shared) & stat.S_ISGID:
        pytest.skip("this file system does not keep a setgid bit on a folder")
    with umask(0o022):
        made = make_folders(shared / "a" / "b")
    group = os.lstat(shared).st_gid
    for d in made:
        st_ = os.lstat(d)
        assert stat.S_IMODE(st_.st_mode) == 0o2750 and st_.st_gid == group, d


@pytest.mark.parametrize("special", [stat.S_ISVTX, stat.S_ISUID])
def test_a_new_folder_never_gets_a_sticky_or_setuid_bit(tmp_path, special):
    parent = tmp_path / "p"
    parent.mkdir()
    os.chmod(parent, 0o770 | special)
    with umask(0o002):
        [made] = make_folders(parent / "n")
    assert mode(made) == 0o770


@settings(max_examples=60, deadline=None)
@given(
    parent_bits=st.integers(0, 0o777).map(lambda m: m | 0o700),  # this user may write in it
    mask=st.integers(0, 0o077),
    depth=st.integers(1, 3),
)
def test_property_a_new_folder_is_never_wider_than_its_parent_or_the_umask(parent_bits, mask, depth):
    base = Path(tempfile.mkdtemp(prefix="newfolders-"))
    try:
        parent = base / "p"
        parent.mkdir()
        os.chmod(parent, parent_bits)
        deepest = parent.joinpath(*(f"d{i}" for i in range(depth)))
        with umask(mask):
            made = make_folders(deepest)
        assert len(made) == depth and deepest.is_dir()
        for d in made:
            got = mode(d)
            assert got == parent_bits & ~mask & 0o777, (oct(parent_bits), oct(mask), oct(got))
            assert got & ~parent_bits == 0 and got & ~(0o777 & ~mask) == 0
        assert mode(parent) == parent_bits
    finally:
        shutil.rmtree(base)


def test_the_guarded_and_the_atomic_write_make_their_folders_so(tmp_path):
    os.chmod(tmp_path, 0o700)
    with umask(0o022):
        swap_file(tmp_path / "a" / "b" / "f.md", None, b"x")
        atomic_write(tmp_path / "c" / "d" / "g.toml", b"y")
    assert {mode(tmp_path / p) for p in ("a", "a/b", "c", "c/d")} == {0o700}


@pytest.mark.parametrize("root_mode", [0o700, 0o750], ids=oct)
def test_init_makes_its_folders_no_wider_than_the_project_folder(tmp_path, monkeypatch, capsys, root_mode):
    monkeypatch.setenv("MEMZOI_HOME", str(tmp_path / "home"))
    proj = tmp_path / "proj"
    proj.mkdir()
    os.chmod(proj, root_mode)
    with umask(0o022):
        assert main(["init", str(proj), "--json"]) == 0
    assert len(json.loads(capsys.readouterr().out)["created"]) == 3
    made = [".memzoi", ".memzoi/records", ".memzoi/proposals", ".memzoi/proposals/pending"]
    assert {p: mode(proj / p) for p in made} == dict.fromkeys(made, root_mode)
