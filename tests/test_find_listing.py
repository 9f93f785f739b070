"""The plane's listing taken by GNU find (:mod:`memzoi.stores.findlisting`, what ``memzoi search`` waits for) is the
Python walk's (:func:`memzoi.stores.planelisting.walk`): the same files, each with the stamp ``os.lstat`` gives bit
for bit, the same devices and folders, on trees of odd entries (a newline, a space, names that are not UTF-8,
symlinks, hidden entries, ``index.md``/``log.md``, a folder named like a record, times before 1970); and where
find cannot be used (missing, BSD find without ``-printf``, an error, a time not spelt as GNU find spells it),
the Python walk's listing is taken instead."""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from memzoi.base.freshness import Stat
from memzoi.stores import findlisting, findstart
from memzoi.stores.findlisting import Ahead, Found, format_item, parse_item
from memzoi.stores.planelisting import Listing, walk

from .test_index_refresh import _odd_entries


def _gnu_find() -> bool:
    exe = shutil.which("find")
    if exe is None:
        return False
    got = subprocess.run([exe, "--version"], capture_output=True)
    return got.returncode == 0 and b"GNU findutils" in got.stdout


needs_gnu_find = pytest.mark.skipif(not _gnu_find(), reason="GNU find is not installed (the walk is then in Python)")


def _same(got: Listing, want: Listing) -> None:
    assert got.root == want.root
    assert got.stamps == want.stamps and sorted(got.unstated) == sorted(want.unstated)
    assert (got.dev, got.devs, got.folders) == (want.dev, want.devs, want.folders)


def _found(root: Path) -> Found:
    finding = findstart.start(root)
    assert finding is not None
    found = findlisting.collect(finding)
    assert found is not None
    return found


def _plane(root: Path) -> Path:
    for sub in ("records", "proposals/pending"):
        (root / ".memzoi" / sub).mkdir(parents=True, exist_ok=True)
    return root


@needs_gnu_find
def test_finds_listing_is_the_walks_on_a_tree_of_odd_entries(tmp_path):
    root = _plane(tmp_path / "proj")
    _odd_entries(root)
    rec = root / ".memzoi/records"
    for name in ("with space.md", "new\nline.md", "tab\there.md", "ünï.md", "-dash.md", "a.md.md", "x.MD"):
        (rec / name).write_text("x")
    (rec / os.fsdecode(b"bad-dir-\xfe")).mkdir()
    (rec / os.fsdecode(b"bad-dir-\xfe") / "inside.md").write_text("x")
    (rec / "sub dir" / "deeper").mkdir(parents=True)
    (rec / "sub dir" / "deeper" / "d.md").write_text("x")
    (root / ".memzoi/proposals/pending/p.md").write_text("x")
    os.mkfifo(rec / "fifo.md")
    old = rec / "before-1970.md"
    old.write_text("x")
    os.utime(old, ns=(0, -1_750_000_000))  # GNU find prints -2.2500000000
    os.utime(rec / "with space.md", ns=(0, 1))
    found = _found(root)
    got, want = found.listing(), walk(root)
    _same(got, want)
    assert found.valid and len(got.stamps) == 11
    for key, stamp in got.stamps.items():  # bit for bit os.lstat's
        s = os.lstat(got.path(key))
        assert stamp == (s.st_size, s.st_mtime_ns, s.st_ino, s.st_ctime_ns)
    assert got.stamps[".memzoi/records/before-1970.md"][1] == -1_750_000_000


NAME = st.lists(st.sampled_from(["a", "b", " ", "\n", ".", "é", "\udcff", "-", "md", "index", "log"]), max_size=5).map(
    "".join
)


@needs_gnu_find
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    entries=st.lists(
        st.tuples(
            st.sampled_from(["records", "proposals", "records/sub", "records/.hid", "records/\udcfe"]),
            NAME,
            st.sampled_from([".md", ".md", "", "/"]),
            st.sampled_from(["file", "file", "dir", "link", "dirlink"]),
            st.integers(-(10**18), 10**18),
        ),
        max_size=12,
    )
)
def test_finds_listing_is_the_walks_on_generated_trees(tmp_path_factory, entries):
    root = _plane(tmp_path_factory.mktemp("gen") / "proj")
    for folder, stem, suffix, kind, mtime in entries:
        where = root / ".memzoi" / folder
        where.mkdir(parents=True, exist_ok=True)
        name = (stem + suffix).rstrip("/") or "x"
        path = where / name
        if os.path.lexists(path):
            continue
        try:
            if kind == "file":
                path.write_bytes(b"x" * (mtime % 5))
                os.utime(path, ns=(0, mtime))
            elif kind == "dir":
                path.mkdir()
                (path / "in.md").write_text("y")
            elif kind == "link":
                path.symlink_to(root / ".memzoi")
            else:
                path.symlink_to(where, target_is_directory=True)
        except (OSError, ValueError):  # a name the file system refuses
            continue
    _same(_found(root).listing(), walk(root))


@needs_gnu_find
def test_a_symlinked_plane_folder_is_not_listed(tmp_path):
    root = _plane(tmp_path / "proj")
    (tmp_path / "elsewhere").mkdir()
    (tmp_path / "elsewhere/r.md").write_text("x")
    shutil.rmtree(root / ".memzoi/records")
    (root / ".memzoi/records").symlink_to(tmp_path / "elsewhere")
    (root / ".memzoi/proposals/pending/p.md").write_text("x")
    _same(_found(root).listing(), walk(root))
    assert list(walk(root).stamps) == [".memzoi/proposals/pending/p.md"]


@given(
    size=st.integers(0, 2**40),
    mtime=st.integers(-(2**62), 2**62),
    ino=st.integers(0, 2**63),
    ctime=st.integers(-(2**62), 2**62),
    dev=st.integers(0, 2**40),
)
def test_an_item_reads_back_as_the_stat_it_was_printed_from(size, mtime, ino, ctime, dev):
    st_ = Stat((size, mtime, ino, ctime), dev)
    assert parse_item(format_item(".memzoi/records/a b.md", st_)[:-1]) == (".memzoi/records/a b.md", st_)


def test_a_time_not_spelt_as_gnu_finds_is_refused():
    for bad in (b"1.5", b"1.123456789", b"1.12345678901", b"1.1234567891", b"1", b"x.1234567890"):
        with pytest.raises(ValueError):
            parse_item(b"1 2 3 " + bad + b" 1.0000000000 .memzoi/records/a.md")


def _fake_find(tmp_path: Path, script: str) -> str:
    exe = tmp_path / "bin" / "find"
    exe.parent.mkdir(exist_ok=True)
    exe.write_text(f"#!{sys.executable}\n{script}\n")
    exe.chmod(exe.stat().st_mode | stat.S_IXUSR)
    return str(exe)


@pytest.mark.parametrize(
    "script",
    [
        None,  # no find on the PATH
        "import sys; sys.stderr.write('find: -printf: unknown primary or operator\\n'); sys.exit(1)",  # BSD find
        "import sys; sys.stdout.write('partial'); sys.stderr.write('find: Permission denied\\n'); sys.exit(1)",
    ],
    ids=["missing", "bsd-find", "error"],
)
def test_where_find_cannot_be_used_the_walk_is_taken(tmp_path, monkeypatch, script):
    root = _plane(tmp_path / "proj")
    _odd_entries(root)
    exe = None if script is None else _fake_find(tmp_path, script)
    monkeypatch.setattr(findstart.shutil, "which", lambda name: exe)
    got = Ahead(root)()
    assert isinstance(got, Listing)
    _same(got, walk(root))
    assert got.stamps


def test_a_rounded_time_falls_back_to_the_walk(tmp_path, monkeypatch):
    root = _plane(tmp_path / "proj")
    (root / ".memzoi/records/a.md").write_text("x")
    script = "import sys; sys.stdout.write('1 2 3 4.5 4.5 .memzoi/records/a.md\\0')"
    monkeypatch.setattr(findstart.shutil, "which", lambda name: _fake_find(tmp_path, script))
    got = Ahead(root)()
    assert isinstance(got, Found)
    _same(got.listing(), walk(root))
    assert not got.valid  # and so never marked current (memzoi.stores.currentlisting)


def _many_records(root: Path, count: int) -> None:
    records = root / ".memzoi" / "records"
    for i in range(count):
        (records / f"a-record-with-a-long-name-to-fill-the-output-{i:05d}.md").write_text("x")


@needs_gnu_find
def test_find_runs_to_its_end_while_the_caller_is_busy(tmp_path):
    # More output than a pipe holds (64 KB): written to an anonymous file, find exits without anyone reading, so
    # it lists the files beside the caller's imports, not after them.
    root = _plane(tmp_path / "proj")
    _many_records(root, 1500)
    finding = findstart.start(root)
    assert finding is not None
    assert finding.proc.wait(timeout=60) == 0  # no read of its output first
    found = findlisting.collect(finding)
    assert found is not None and len(found.out) > 65536
    _same(found.listing(), walk(root))


@needs_gnu_find
def test_without_memfd_find_writes_to_a_temporary_file(tmp_path, monkeypatch):
    root = _plane(tmp_path / "proj")
    _many_records(root, 1500)

    def refuse(*args: object) -> int:
        raise OSError("memfd_create: function not implemented")

    monkeypatch.setattr(findstart.os, "memfd_create", refuse, raising=False)
    found = _found(root)
    _same(found.listing(), walk(root))


@needs_gnu_find
def test_find_writing_errors_falls_back_to_the_walk(tmp_path, monkeypatch):
    # stderr goes to an anonymous file too: any byte there means find met a problem (the walk then lists)
    root = _plane(tmp_path / "proj")
    (root / ".memzoi/records/a.md").write_text("x")
    script = "import sys; sys.stdout.write('1 2 3 4.0000000000 4.0000000000 .memzoi/records/a.md\\0'); " + (
        "sys.stderr.write('find: warning\\n' * 20000)"  # more than a pipe holds: no dead lock either
    )
    monkeypatch.setattr(findstart.shutil, "which", lambda name: _fake_find(tmp_path, script))
    got = Ahead(root)()
    assert isinstance(got, Listing)
    _same(got, walk(root))
