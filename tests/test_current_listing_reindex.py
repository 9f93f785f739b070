"""The mark of a current listing (:mod:`memzoi.stores.currentlisting`) left by a refresh that re-indexed files:
where every new row carries the stamp find listed for its file (the stamp of the bytes the re-index read) and no
other write came between, and with the racy rows listed in the mark, which every search taking it reads again and
compares by content (git's racy-entry rule). The cases of the freshness tests: an edit within the racy window, a
further edit of a racy file that keeps its stamp whole, an edit between find's stat and the read, a rename over
the file, an edit through a hard link, a file system whose ctime follows its mtime, a write of another process."""

from __future__ import annotations

import os
import time
from pathlib import Path

import blake3
import pytest

from memzoi.base import freshness
from memzoi.stores import currentlisting, index_fresh
from memzoi.stores.findlisting import Found, format_item
from memzoi.stores.index import Index
from memzoi.stores.planelisting import walk

from . import builders
from .test_current_listing import ahead_of, found_of, no_stored_read

N = 6
#: A racy window long enough that every write of a test is within it (each row the tests write stays racy).
LONG = 10**15


def _project(root: Path) -> Path:
    for i in range(N):
        builders.write(root, builders.record_path(f"re-{i}"), builders.record(f"re-{i}", title=f"Re {i}"))
    return root


@pytest.fixture
def quiet(monkeypatch) -> None:
    """No sample, ext4."""
    monkeypatch.setattr(freshness, "SAMPLE_SHARE", 0)
    monkeypatch.setattr(freshness, "fs_type", lambda dev: "ext4")


def _indexed(tmp_path: Path) -> tuple[Path, Path]:
    root = _project((tmp_path / "proj").resolve())
    db = tmp_path / "index.db"
    with Index(root, path=db, workers=1) as ix:
        ix.rebuild()
        ix.refresh(walked=lambda: found_of(root))
    return root, db


def _edit(root: Path, rid: str, title: str) -> Path:
    return builders.write(root, builders.record_path(rid), builders.record(rid, title=title))


def _same_size_edit(path: Path) -> None:
    """Flip the last byte before the newline, keeping the size and the mtime (the ctime moves, as on ext4)."""
    data = bytearray(path.read_bytes())
    at = len(data.rstrip(b"\n")) - 1
    data[at] = ord("X") if data[at] != ord("X") else ord("Y")
    st = os.stat(path)
    path.write_bytes(bytes(data))
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))


def _holds(ix: Index, found: Found) -> currentlisting.Mark | None:
    return currentlisting.holds(ix.db, currentlisting.digest(found), time.time_ns())


def _current(ix: Index, root: Path) -> None:
    """Every file's row holds the file's bytes, and no row is without its file."""
    rows = dict(ix.db.execute("SELECT path, sha FROM files").fetchall())
    files = {k: blake3.blake3((root / k).read_bytes()).hexdigest() for k in walk(root).keys()}
    assert rows == files


def _with_row_stamp(found: Found, root: Path, key: str, ix: Index) -> Found:
    """``found`` with ``key`` listed under its row's stamp: what find prints where a write kept the stamp whole
    (within one tick of the kernel's clock on any file system; every write where the ctime follows the mtime)."""
    row = ix.db.execute("SELECT size, mtime_ns, ino, ctime_ns FROM files WHERE path = ?", (key,)).fetchone()
    listing = found.listing()
    items = []
    for k in listing.keys():
        st = listing.stat(k)
        assert st is not None
        if k == key:
            st = freshness.Stat(tuple(row), st.dev)  # type: ignore[arg-type]
        items.append(format_item(k, st))
    return Found(str(root), found.dev, b"".join(items))


def test_a_refresh_that_re_indexed_a_file_leaves_the_mark(tmp_path, quiet, monkeypatch):
    monkeypatch.setattr(freshness, "RACY_NS", 0)  # nothing racy: the mark lists no row to read again
    root, db = _indexed(tmp_path)
    _edit(root, "re-2", "Edited")
    with Index(root, path=db, workers=1) as ix:
        assert ix.refresh(walked=lambda: found_of(root)).files == 1
        found = found_of(root)
        mark = _holds(ix, found)
        assert mark is not None and mark.racy == ()
        no_stored_read(monkeypatch)  # the next search compares no stamp
        for given in (found, ahead_of(found)):
            plan = index_fresh.stale(ix.db, root, given)
            assert (plan.changed, plan.gone, plan.restamp) == ([], [], [])
        _current(ix, root)


def test_an_edit_within_the_racy_window_is_seen_by_every_search_after_it(tmp_path, quiet, monkeypatch):
    root, db = _indexed(tmp_path)
    monkeypatch.setattr(freshness, "RACY_NS", LONG)  # from here every write is racy
    key = builders.record_path("re-3")
    path = _edit(root, "re-3", "Edited in the window")
    with Index(root, path=db, workers=1) as ix:
        assert ix.refresh(walked=lambda: found_of(root)).files == 1  # the first search re-indexes it
        found = found_of(root)
        mark = _holds(ix, found)
        assert mark is not None and key in mark.racy  # marked, its row listed as racy
        _current(ix, root)
        # a same-size edit keeping the stamp whole (as within one clock tick): find prints what it printed
        _same_size_edit(path)
        same = _with_row_stamp(found_of(root), root, key, ix)
        assert same.out == found.out and _holds(ix, same) is not None
        for given in (same, ahead_of(same)):  # the racy row is read again, through the mark
            assert index_fresh.stale(ix.db, root, given).changed == [path]
        ix.refresh(walked=lambda: same)
        _current(ix, root)  # the second search sees the edit
        assert ix.refresh(walked=lambda: found_of(root)).files == 0
        _current(ix, root)


def test_a_racy_row_read_again_and_found_unchanged_stays_listed(tmp_path, quiet, monkeypatch):
    root, db = _indexed(tmp_path)
    monkeypatch.setattr(freshness, "RACY_NS", LONG)
    key = builders.record_path("re-1")
    _edit(root, "re-1", "Racy")
    with Index(root, path=db, workers=1) as ix:
        ix.refresh(walked=lambda: found_of(root))
        found = found_of(root)
        for _ in range(2):  # read again at each search, still racy: not written again (the same stamp), listed still
            plan = index_fresh.stale(ix.db, root, found)
            assert (plan.changed, plan.restamp) == ([], [])
            ix.refresh(walked=lambda: found)
            mark = _holds(ix, found)
            assert mark is not None and key in mark.racy


def test_an_edit_between_finds_stat_and_the_read_leaves_no_mark(tmp_path, quiet, monkeypatch):
    monkeypatch.setattr(freshness, "RACY_NS", 0)
    root, db = _indexed(tmp_path)
    _edit(root, "re-4", "First")
    found = found_of(root)  # find's stat of the first edit
    _edit(root, "re-4", "Second, longer than the first")  # the re-index reads this one
    with Index(root, path=db, workers=1) as ix:
        assert ix.refresh(walked=lambda: found).files == 1
        assert _holds(ix, found) is None  # its row's stamp is not the one find listed
        assert _holds(ix, found_of(root)) is None
        assert ix.refresh(walked=lambda: found_of(root)).files == 0
        _current(ix, root)


@pytest.mark.parametrize("how", ["rename over the file", "edit through a hard link"])
def test_a_rename_over_or_a_hard_link_edit_after_a_marked_re_index_is_seen(tmp_path, quiet, monkeypatch, how):
    monkeypatch.setattr(freshness, "RACY_NS", 0)
    root, db = _indexed(tmp_path)
    path = _edit(root, "re-0", "Edited")
    link = tmp_path / "link.md"
    os.link(path, link)
    with Index(root, path=db, workers=1) as ix:
        ix.refresh(walked=lambda: found_of(root))  # re-indexed and marked
        before = found_of(root)
        assert _holds(ix, before) is not None
        st = os.stat(path)
        if how == "rename over the file":
            other = tmp_path / "other.md"
            other.write_bytes(path.read_bytes().replace(b"Edited", b"Edites"))
            os.utime(other, ns=(st.st_atime_ns, st.st_mtime_ns))
            os.replace(other, path)
        else:
            _same_size_edit(link)
        assert _holds(ix, found_of(root)) is None  # another inode or ctime: another output
        assert ix.refresh(walked=lambda: found_of(root)).files == 1
        _current(ix, root)
        assert _holds(ix, found_of(root)) is not None


def test_no_mark_where_the_ctime_follows_the_mtime(tmp_path, quiet, monkeypatch):
    monkeypatch.setattr(freshness, "RACY_NS", 0)
    root, db = _indexed(tmp_path)
    monkeypatch.setattr(freshness, "fs_type", lambda dev: "fuse.sshfs")
    _edit(root, "re-5", "Edited")
    with Index(root, path=db, workers=1) as ix:
        ix.db.execute("DELETE FROM meta WHERE key = ?", (currentlisting.KEY,))
        assert ix.refresh(walked=lambda: found_of(root)).files == 1
        assert ix.db.execute("SELECT 1 FROM meta WHERE key = ?", (currentlisting.KEY,)).fetchone() is None
        _current(ix, root)


@pytest.mark.parametrize("when", ["before the re-index", "after the re-index"])
def test_no_mark_where_another_write_came_between(tmp_path, quiet, monkeypatch, when):
    monkeypatch.setattr(freshness, "RACY_NS", 0)
    root, db = _indexed(tmp_path)
    path = _edit(root, "re-2", "Edited")
    other = builders.record_path("re-1")
    with Index(root, path=db, workers=1) as ix:
        ix.db.execute("DELETE FROM meta WHERE key = ?", (currentlisting.KEY,))
        plan = index_fresh.stale(ix.db, root, found_of(root))
        assert plan.changed == [path] and plan.mark is not None
        if when == "before the re-index":
            ix.db.execute("UPDATE files SET checked_ns = checked_ns WHERE path = ?", (other,))
        ix.update_paths(plan.changed)
        if when == "after the re-index":
            ix.db.execute("UPDATE files SET checked_ns = checked_ns WHERE path = ?", (other,))
        currentlisting.write_stamps(ix.db, plan, ix._wrote)
        assert ix.db.execute("SELECT 1 FROM meta WHERE key = ?", (currentlisting.KEY,)).fetchone() is None


def test_a_file_judged_one_by_one_that_the_sample_draws_keeps_the_mark(tmp_path, quiet, monkeypatch):
    # A file under a redacted key is judged one by one; where the sample draws it and the read confirms its row
    # under the listed stamp, the mark is left all the same (at 50,000 records a few hundred such files made a
    # mark after an edit all but impossible).
    monkeypatch.setattr(freshness, "RACY_NS", 0)
    root, db = _indexed(tmp_path)
    token = "ghp_" + "aB3dE5fG7hJ9kL1mN2pQ4" + "rS6tU8vW0xY2zA4"  # assembled at run time
    (root / ".memzoi/records" / f"{token}.md").write_bytes((root / builders.record_path("re-0")).read_bytes())
    with Index(root, path=db, workers=1) as ix:
        ix.refresh(walked=lambda: found_of(root))  # indexed under its redacted key
        ix.db.execute("DELETE FROM meta WHERE key = ?", (currentlisting.KEY,))
        monkeypatch.setattr(freshness, "SAMPLE_SHARE", 1)  # every file drawn
        ix.refresh(walked=lambda: found_of(root))
        assert _holds(ix, found_of(root)) is not None
