"""The mark of a current listing (:mod:`memzoi.stores.currentlisting`) against GNU find itself and real file
operations: once a search through find has left the mark, every way of changing a file's bytes or its place that
keeps the file's size (and, where it can be set back, its mtime) is another output of find, and the next search
re-indexes the file. The racy window is closed here (``RACY_NS`` 0), so that no row is read again for being racy:
only find's output (the ctime and the inode, which no ``utime`` sets back) tells the edit. Each edit is made once
the file system's clock has passed the files' last ctime (waited for, never slept), as it has after any pause; an
edit within that tick is the racy case of ``tests/test_current_listing_reindex.py``."""

from __future__ import annotations

import os
import shutil
import subprocess
import threading
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from memzoi.base import freshness
from memzoi.stores import currentlisting
from memzoi.stores.findlisting import Ahead
from memzoi.stores.index import Index
from memzoi.stores.index_schema import generation

from . import builders
from .test_current_listing_reindex import _current
from .test_find_listing import _found


def _gnu_find() -> bool:
    exe = shutil.which("find")
    if exe is None:
        return False
    out = subprocess.run([exe, "--version"], capture_output=True, text=True, check=False).stdout
    return "GNU findutils" in out


pytestmark = pytest.mark.skipif(not _gnu_find(), reason="GNU find is needed")

N = 6


def _rid(i: int) -> str:
    return f"adv-{i}" if i % 2 else f"nested/adv-{i}"  # half of them in a folder of their own


@pytest.fixture
def project(tmp_path, monkeypatch) -> tuple[Path, Path]:
    """A project of :data:`N` records, its index, and a first search through find that left the mark."""
    monkeypatch.setattr(freshness, "RACY_NS", 0)
    monkeypatch.setattr(freshness, "SAMPLE_SHARE", 0)  # nothing read by chance: find's output alone decides
    monkeypatch.setattr(freshness, "fs_type", lambda dev: "ext4")
    root = (tmp_path / "proj").resolve()
    for i in range(N):
        builders.write(root, builders.record_path(_rid(i)), builders.record(_rid(i), title=f"Adversary {i}"))
    db = tmp_path / "index.db"
    with Index(root, path=db, workers=1) as ix:
        ix.rebuild()
    _search(root, db)
    _search(root, db)
    assert _marked(root, db)
    return root, db


def _search(root: Path, db: Path) -> int:
    """What ``memzoi search`` does before its query: find started ahead, then the refresh; the files re-indexed."""
    with Index(root, path=db, workers=1) as ix:
        return ix.refresh(walked=Ahead(root)).files


def _marked(root: Path, db: Path) -> bool:
    """Whether the mark holds for what find prints now."""
    found = _found(root)
    with Index(root, path=db, workers=1) as ix:
        return currentlisting.holds(ix.db, currentlisting.digest(found), time.time_ns()) is not None


def _past_last_ctime(root: Path) -> None:
    """Wait until a file written now gets a ctime after every file's of the project (the clock's tick passed)."""
    last = max(os.lstat(p).st_ctime_ns for p in (root / ".memzoi").rglob("*"))
    probe = root.parent / "probe"
    while True:
        probe.write_bytes(b"x")
        if os.lstat(probe).st_ctime_ns > last:
            return


def _flip(data: bytes) -> bytes:
    """The same bytes but for the title's last letter (the size kept)."""
    at = data.index(b"\n", data.index(b"title: ")) - 2
    return data[:at] + (b"Q" if data[at : at + 1] != b"Q" else b"Z") + data[at + 1 :]


def _same_size_in_place(path: Path) -> None:
    st = os.stat(path)
    with open(path, "r+b") as fh:  # the same inode, never truncated
        data = fh.read()
        fh.seek(0)
        fh.write(_flip(data))
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))


def _touched_back(path: Path) -> None:
    path.write_bytes(_flip(path.read_bytes()))
    os.utime(path, (978307200, 978307200))  # touch -d 2001-01-01


def _renamed_over(path: Path) -> None:
    st = os.stat(path)
    new = path.with_name("new.tmp")
    new.write_bytes(_flip(path.read_bytes()))
    os.utime(new, ns=(st.st_atime_ns, st.st_mtime_ns))
    os.replace(new, path)


def _re_created(path: Path) -> None:
    st, data = os.stat(path), path.read_bytes()
    path.unlink()
    path.write_bytes(_flip(data))
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))


def _through_a_hard_link(path: Path) -> None:
    link = path.parents[2].parent / "outside.md"  # outside the plane
    os.link(path, link)
    _same_size_in_place(link)


def _symlinked(path: Path) -> None:
    target = path.parents[2].parent / "elsewhere.md"
    target.write_bytes(_flip(path.read_bytes()))
    path.unlink()
    path.symlink_to(target)


def _folder_renamed(path: Path) -> None:
    folder = path.parent
    folder.rename(folder.with_name(folder.name + "-moved"))


EDITS: dict[str, Callable[[Path], None]] = {
    "same size in place, mtime set back": _same_size_in_place,
    "edited, then touch -d into the past": _touched_back,
    "a same-size copy renamed over it": _renamed_over,
    "deleted and re-created, same size and mtime": _re_created,
    "edited through a hard link outside the plane": _through_a_hard_link,
    "replaced by a symlink to an edited copy": _symlinked,
    "its folder renamed": _folder_renamed,
}


@pytest.mark.parametrize("edit", sorted(EDITS))
def test_an_edit_after_the_mark_is_seen_by_the_next_search(project, edit):
    root, db = project
    _past_last_ctime(root)
    EDITS[edit](root / builders.record_path(_rid(2)))
    assert not _marked(root, db)  # another output of find
    _search(root, db)
    with Index(root, path=db, workers=1) as ix:
        _current(ix, root)
    assert _marked(root, db)  # and the search left the mark again


def test_edits_racing_two_searches_at_once_leave_the_index_current(project):
    root, db = project
    paths = [root / builders.record_path(_rid(i)) for i in (1, 2, 3)]
    stop = threading.Event()

    def edit() -> None:
        while not stop.is_set():
            for p in paths:
                _same_size_in_place(p)

    editor = threading.Thread(target=edit)
    editor.start()
    try:
        for _ in range(3):
            searches = [threading.Thread(target=_search, args=(root, db)) for _ in range(2)]
            for s in searches:
                s.start()
            for s in searches:
                s.join()
    finally:
        stop.set()
        editor.join()
    _past_last_ctime(root)  # the edits are over: the next search sees them all
    _search(root, db)
    with Index(root, path=db, workers=1) as ix:
        _current(ix, root)


def test_a_file_dated_in_the_future_is_read_by_every_search_but_written_once(project):
    # a clock set back, or an archive from a machine ahead, dates a file after every read: its stamp stays racy, so
    # each search reads it again, but the same stamp is not written again (else every search writes the index)
    root, db = project
    path, key = root / builders.record_path(_rid(3)), builders.record_path(_rid(3))
    future = time.time_ns() + 3600 * 10**9
    os.utime(path, ns=(future, future))
    _search(root, db)  # its new stamp kept, racy: listed in the mark
    with Index(root, path=db, workers=1) as ix:
        gen = generation(ix.db)
    for _ in range(2):
        assert _search(root, db) == 0
        with Index(root, path=db, workers=1) as ix:
            assert generation(ix.db) == gen  # nothing written
    assert _marked(root, db)
    with Index(root, path=db, workers=1) as ix:
        mark = currentlisting.holds(ix.db, currentlisting.digest(_found(root)), time.time_ns())
        assert mark is not None and key in mark.racy  # still read by every search
        _current(ix, root)
