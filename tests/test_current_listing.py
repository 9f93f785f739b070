"""The mark of a listing a refresh found current (:mod:`memzoi.stores.currentlisting`): a refresh of find's listing
that keeps every file leaves it; the next refresh of the same bytes reads no row's stamp and only reads the files
the sample draws; and the mark is not taken when anything it vouches for changed: a file's stamp (another output),
a row (another generation of ``files``, also when the write came between the judging and the mark), the trust age,
the file system's type, the racy window's length. The plans are the per-file rule's
(``tests/test_index_bulk_freshness.py`` holds that on every freshness case)."""

from __future__ import annotations

import os
import random
import time
from pathlib import Path

import pytest

from memzoi.base import freshness
from memzoi.stores import currentlisting, index_fresh, storedstamps
from memzoi.stores.findlisting import Ahead, Found, format_item
from memzoi.stores.index import Index
from memzoi.stores.planelisting import walk

from . import builders

N = 8


def found_of(root: Path) -> Found:
    """find's output as GNU find prints it for the files ``walk`` lists (their ``os.lstat`` stamps)."""
    listing = walk(root)
    out = b"".join(format_item(key, listing.stat(key)) for key in listing.keys())  # type: ignore[arg-type]
    return Found(str(root.resolve()), listing.dev, out)


class _Finished:
    """A find that has printed ``found`` (:class:`memzoi.stores.findstart.Finding`'s reading side)."""

    def __init__(self, found: Found) -> None:
        self.root, self.dev, self.out = found.root, found.dev, found.out

    def wait(self) -> bytes:
        return self.out


def ahead_of(found: Found) -> Ahead:
    """find's output ``found`` as ``memzoi search`` hands its listing to the refresh (:class:`Ahead`, its find
    started), so that the refresh takes it first and draws its sample from the rows meanwhile."""
    ahead = Ahead.__new__(Ahead)
    ahead.root, ahead.finding, ahead.walking = found.root, _Finished(found), None  # type: ignore[assignment]
    ahead.got = None
    return ahead


@pytest.fixture
def indexed(tmp_path, monkeypatch) -> tuple[Path, Path]:
    """A project of :data:`N` records and its index; the racy window closed, no sample, ext4."""
    monkeypatch.setattr(freshness, "RACY_NS", 0)
    monkeypatch.setattr(freshness, "SAMPLE_SHARE", 0)
    monkeypatch.setattr(freshness, "fs_type", lambda dev: "ext4")
    root = (tmp_path / "proj").resolve()
    for i in range(N):
        builders.write(root, builders.record_path(f"mark-{i}"), builders.record(f"mark-{i}", title=f"Mark {i}"))
    db = tmp_path / "index.db"
    with Index(root, path=db, workers=1) as ix:
        ix.rebuild()
        ix.refresh(walked=lambda: found_of(root))  # the first refresh of find's listing leaves the mark
        assert currentlisting.holds(ix.db, currentlisting.digest(found_of(root)), time.time_ns()) is not None
    return root, db


def no_stored_read(monkeypatch) -> None:
    def read(*args, **kwargs):
        raise AssertionError("the rows' stamps were read")

    monkeypatch.setattr(storedstamps, "read", read)


def test_a_listing_found_current_is_not_compared_again(indexed, monkeypatch):
    root, db = indexed
    no_stored_read(monkeypatch)
    with Index(root, path=db, workers=1) as ix:
        plan = index_fresh.stale(ix.db, root, found_of(root))
        assert (plan.changed, plan.gone, plan.restamp, plan.git_changed) == ([], [], [], False)
        assert ix.refresh(walked=ahead_of(found_of(root))).files == 0


def test_an_edit_is_another_output(indexed):
    root, db = indexed
    path = root / builders.record_path("mark-3")
    builders.write(root, builders.record_path("mark-3"), builders.record("mark-3", title="Edited"))
    with Index(root, path=db, workers=1) as ix:
        assert index_fresh.stale(ix.db, root, found_of(root)).changed == [path]


def test_a_write_to_the_rows_is_another_generation(indexed):
    root, db = indexed
    with Index(root, path=db, workers=1) as ix:
        found = found_of(root)
        ix.db.execute("UPDATE files SET sha = ? WHERE path = ?", ("0" * 64, builders.record_path("mark-2")))
        assert currentlisting.holds(ix.db, currentlisting.digest(found), time.time_ns()) is None
        assert index_fresh.stale(ix.db, root, found).changed == []  # the stamps still vouch (by the per-file rule)


def test_no_mark_is_left_when_the_rows_changed_after_they_were_judged(indexed):
    root, db = indexed
    with Index(root, path=db, workers=1) as ix:
        ix.db.execute("DELETE FROM meta WHERE key = ?", (currentlisting.KEY,))
        plan = index_fresh.stale(ix.db, root, found_of(root))
        assert plan.mark is not None
        ix.db.execute("UPDATE files SET checked_ns = checked_ns WHERE path = ?", (builders.record_path("mark-1"),))
        currentlisting.write_stamps(ix.db, plan)  # another process's write came between
        assert ix.db.execute("SELECT 1 FROM meta WHERE key = ?", (currentlisting.KEY,)).fetchone() is None


@pytest.mark.parametrize(
    "change",
    ["trust age passed", "ctime follows mtime", "racy window", "another digest"],
)
def test_the_mark_holds_only_for_what_it_vouches(indexed, monkeypatch, change):
    root, db = indexed
    digest, now = currentlisting.digest(found_of(root)), time.time_ns()
    with Index(root, path=db, workers=1) as ix:
        assert currentlisting.holds(ix.db, digest, now) is not None
        if change == "trust age passed":
            now += freshness.MAX_TRUST_NS + 10**9
        elif change == "ctime follows mtime":
            monkeypatch.setattr(freshness, "fs_type", lambda dev: "fuse.sshfs")
        elif change == "racy window":
            monkeypatch.setattr(freshness, "RACY_NS", 2 * 10**9)
        else:
            digest = "0" * 64
        assert currentlisting.holds(ix.db, digest, now) is None


def test_a_lying_stamp_drawn_by_the_sample_is_read(indexed, monkeypatch):
    root, db = indexed
    key = builders.record_path("mark-5")
    with Index(root, path=db, workers=1) as ix:
        found = found_of(root)
        # the row's bytes are no longer the file's under a kept stamp: a lying stamp, only the sample can tell
        ix.db.execute("UPDATE files SET sha = ? WHERE path = ?", ("0" * 64, key))
        assert currentlisting.holds(ix.db, currentlisting.digest(found), time.time_ns()) is None
        ix.refresh(walked=lambda: found)  # keeps every file by its stamp: marked again
        assert currentlisting.holds(ix.db, currentlisting.digest(found), time.time_ns()) is not None
        monkeypatch.setattr(freshness, "SAMPLE_SHARE", 1)
        no_stored_read(monkeypatch)
        assert index_fresh.stale(ix.db, root, found).changed == [root / key]


def test_the_draws_are_each_files_own_chance(monkeypatch):
    monkeypatch.setattr(freshness, "SAMPLE_SHARE", 0)
    assert currentlisting.draws(100) == []
    monkeypatch.setattr(freshness, "SAMPLE_SHARE", 1)
    assert currentlisting.draws(5) == [0, 1, 2, 3, 4]
    monkeypatch.setattr(freshness, "SAMPLE_SHARE", 1 / 8)
    random.seed(29)
    counts = [0] * 16
    trials = 4000
    for _ in range(trials):
        got = currentlisting.draws(16)
        assert got == sorted(set(got)) and all(0 <= i < 16 for i in got)
        for i in got:
            counts[i] += 1
    assert all(abs(c / trials - 1 / 8) < 0.03 for c in counts), counts  # each position 1/8 (±5 sigma)


def test_a_files_generation_counts_every_write(indexed):
    root, db = indexed
    with Index(root, path=db, workers=1) as ix:
        before = int(currentlisting.generation(ix.db) or -1)
        ix.update_paths([root / builders.record_path("mark-0")])  # a delete and an insert
        assert int(currentlisting.generation(ix.db) or -1) == before + 2
        os.remove(root / builders.record_path("mark-0"))
        ix.update_paths([root / builders.record_path("mark-0")])
        assert int(currentlisting.generation(ix.db) or -1) == before + 3


def test_a_file_under_a_redacted_key_is_drawn_by_offset_and_its_path_never_stored(indexed, monkeypatch):
    root, db = indexed
    token = "ghp_" + "aB3dE5fG7hJ9kL1mN2pQ4" + "rS6tU8vW0xY2zA4"  # assembled at run time
    secret = root / ".memzoi/records" / f"{token}.md"
    secret.write_bytes((root / builders.record_path("mark-0")).read_bytes())
    with Index(root, path=db, workers=1) as ix:
        ix.refresh(walked=lambda: found_of(root))  # indexed under its redacted key
        ix.refresh(walked=lambda: found_of(root))  # marked, the file by the offset of its item
        found = found_of(root)
        assert currentlisting.holds(ix.db, currentlisting.digest(found), time.time_ns()) is not None
        stored = repr([tuple(r) for r in ix.db.execute("SELECT key, value FROM meta")])
        leaked = token in stored
        assert not leaked, "the path that bears a secret was stored"  # its value never printed
        assert '"redacted": [["<redacted-path:' in stored
        key = next(r[0] for r in ix.db.execute("SELECT path FROM files") if r[0].startswith("<redacted-path:"))
        ix.db.execute("UPDATE files SET sha = ? WHERE path = ?", ("0" * 64, key))  # a lying stamp
        ix.refresh(walked=lambda: found)  # kept by its stamp: marked again
        monkeypatch.setattr(freshness, "SAMPLE_SHARE", 1)
        no_stored_read(monkeypatch)
        for given in (found, ahead_of(found)):  # drawn from the output, and from the rows while find runs
            assert index_fresh.stale(ix.db, root, given).changed == [secret]


def test_a_refresh_without_find_draws_no_sample_ahead(indexed, monkeypatch):
    """The MCP server's and the language server's refreshes (a walk in Python, or a caller's listing) never read a
    sample from the rows ahead: their listing can never hold a mark, so those reads would be lost."""
    root, db = indexed

    def presample(*args):
        raise AssertionError("a sample was drawn ahead of a listing that is not find's")

    monkeypatch.setattr(currentlisting, "presample", presample)
    with Index(root, path=db, workers=1) as ix:
        assert ix.refresh().files == 0
        assert ix.refresh(walked=lambda: walk(root)).files == 0
