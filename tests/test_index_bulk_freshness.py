"""The index refresh's bulk decision (:func:`memzoi.stores.index_fresh.stale`, issue 29: a search at 50,000 records
compares the stored stamps with the walk's in one step) gives exactly the plan of the per-file rule
(``stale(..., bulk=False)``: :func:`memzoi.base.freshness.trusted` asked of every file), on every case the freshness
tests cover (``docs/freshness.md``: an edit keeping size and mtime on ext4 and where the ctime follows the mtime, a
lying stat caught by the sample, the racy window, a rename over the file, a hard-link edit, a row confirmed long
ago, an unknown file system) and on generated mixes of them: which files are re-indexed, which rows are dropped,
which are kept under a new stamp.

The stored rows are those of a real index whose stamps and digests a case rewrites; the files' stats are given
(:func:`memzoi.stores.planelisting.from_files`), so each case is one that a file system can show."""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path

import blake3
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from memzoi.base import freshness
from memzoi.base.freshness import Stat
from memzoi.stores import currentlisting, index_fresh
from memzoi.stores.findlisting import Found, format_item
from memzoi.stores.index import Index
from memzoi.stores.planelisting import from_files
from memzoi.stores.refreshplan import Plan

from . import builders
from .test_current_listing import ahead_of

N = 6
DAY = 86_400 * 10**9
#: File-system types of the two devices a case's files are on: one that keeps its ctime, two whose ctime follows
#: the mtime, one unknown (only a ctime apart from the mtime vouches), one that cannot be told.
KINDS = ["ext4", "fuse.sshfs", "vfat", "somefs", ""]


@dataclass(frozen=True)
class Case:
    """One file of a case: how its current stat and its stored row relate (``field`` of the stamp that differs:
    ``None``, ``size``, ``mtime``, ``ino``, ``ctime``), when its row was confirmed (``fine``, ``racy``, ``old``),
    whether its mtime equals its ctime, its device (0 or 1), whether its bytes are still the row's, and whether it
    is ``listed`` with a stat, ``unstated`` (listed without one), ``gone`` (not listed) or ``new`` (no row)."""

    differs: str | None = None
    checked: str = "fine"
    same_times: bool = False
    device: int = 0
    same_bytes: bool = True
    presence: str = "listed"


@pytest.fixture(scope="module")
def indexed(tmp_path_factory) -> tuple[Path, Path]:
    """A project of :data:`N` records and its index, built once: ``(root, database)``."""
    root = tmp_path_factory.mktemp("bulk") / "proj"
    for i in range(N):
        rid = f"bulk-{i}"
        builders.write(root, builders.record_path(rid), builders.record(rid, title=f"Bulk record {i}"))
    db = root.parent / "index.db"
    with Index(root, path=db, workers=1) as ix:
        assert ix.rebuild().files == N
    return root.resolve(), db


def plans(root: Path, db: Path, cases: list[Case], kinds: tuple[str, str], share: float, monkeypatch) -> tuple:
    """The plan of the bulk decision and of the per-file rule for ``cases`` (one per file of the project), with the
    devices of ``kinds`` and the sample share ``share``."""
    monkeypatch.setattr(freshness, "SAMPLE_SHARE", share)
    monkeypatch.setattr(freshness, "fs_type", lambda dev: kinds[dev - 1] if dev in (1, 2) else "ext4")
    now = time.time_ns()
    stats: dict[str, Stat | None] = {}
    with Index(root, path=db, workers=1) as ix:
        keys = sorted(r[0] for r in ix.db.execute("SELECT path FROM files"))
        assert len(keys) >= len(cases)
        ix.db.execute("BEGIN")
        try:
            for key, case in zip(keys, cases, strict=False):
                path = str(root / key)
                data = Path(path).read_bytes()
                mtime = now - 3 * DAY  # before every clock of a read below
                ctime = mtime if case.same_times else mtime + 10**9
                stored = (len(data), mtime, 1000 + keys.index(key), ctime)
                checked = {"fine": now - 10 * 10**9, "racy": ctime + 10**6, "old": now - 2 * DAY}[case.checked]
                sha = blake3.blake3(data if case.same_bytes else data + b"other").hexdigest()
                current = list(stored)
                if case.differs is not None:
                    at = ["size", "mtime", "ino", "ctime"].index(case.differs)
                    current[at] += 1
                stats[path] = {
                    "listed": Stat(tuple(current), case.device + 1),  # type: ignore[arg-type]
                    "unstated": None,
                    "gone": None,
                    "new": Stat(tuple(current), case.device + 1),  # type: ignore[arg-type]
                }[case.presence]
                if case.presence == "new":
                    ix.db.execute("DELETE FROM files WHERE path = ?", (key,))
                    continue
                ix.db.execute(
                    "UPDATE files SET size = ?, mtime_ns = ?, ino = ?, ctime_ns = ?, checked_ns = ?, sha = ? "
                    "WHERE path = ?",
                    (*stored, checked, sha, key),
                )
            listed = [p for p, case in zip(stats, cases, strict=False) if case.presence != "gone"]
            got = {}
            for bulk in (True, False):
                listing = from_files(root, listed, stats.get, lambda p: None)
                got[bulk] = _plan(index_fresh.stale(ix.db, root, listing, bulk=bulk))
            got["found"] = _found_plans(ix.db, root, listed, stats)
        finally:
            ix.db.execute("ROLLBACK")
    assert got["found"][0] == got[False]
    return got[True], got[False], keys


def _plan(plan: Plan) -> tuple:
    restamped = [(*r[:4], r[5]) for r in plan.restamp]  # not the clock of the read
    return (plan.changed, sorted(plan.gone), restamped, plan.git, plan.git_changed)


def _found_plans(db, root: Path, listed: list[str], stats: dict) -> list[tuple]:
    """The plans of find's listing of the same stats (:class:`memzoi.stores.findlisting.Found`: a file listed
    without a stat is not printed), before and after each plan's writes of stamps and mark
    (:func:`memzoi.stores.currentlisting.write_stamps`, as a refresh writes them), each checked against the per-file
    rule then: the second and third go through the mark where the first left one, the third with its sample drawn
    from the rows while find runs (:func:`memzoi.stores.currentlisting.presample`)."""
    with_stat = [p for p in listed if stats[p] is not None]
    out = b"".join(format_item(Path(p).relative_to(root).as_posix(), stats[p]) for p in with_stat)
    out += format_item(".memzoi/records/index.md", Stat((1, 2, 3, 4), 1))  # printed, but no record: never judged
    found = Found(str(root), 1, out)
    plans = []
    for listing in (found, found, ahead_of(found)):  # the last as find still running: its sample drawn from the rows
        plain = _plan(index_fresh.stale(db, root, from_files(root, listed, stats.get, lambda p: None), bulk=False))
        plan = index_fresh.stale(db, root, listing)
        assert _plan(plan) == plain
        plans.append(plain)
        currentlisting.write_stamps(db, plan)
    return plans


#: The freshness tests' cases (tests/test_index_freshness.py, tests/test_freshness.py, docs/freshness.md), as
#: ``(name, the file's case, the devices' kinds, sample share)``; the other files are unchanged.
NAMED = [
    ("unchanged, trusted", Case(), ("ext4", "ext4"), 0),
    ("edit keeping size and mtime on ext4 (the ctime moves)", Case("ctime", same_bytes=False), ("ext4", "ext4"), 0),
    ("edit keeping the stat where ctime follows mtime", Case(same_bytes=False), ("fuse.sshfs", "ext4"), 0),
    ("the same on FAT media", Case(same_bytes=False), ("vfat", "ext4"), 0),
    ("lying stat where ctime is kept: trusted", Case(same_bytes=False), ("ext4", "ext4"), 0),
    ("lying stat where ctime is kept: the sample draws it", Case(same_bytes=False), ("ext4", "ext4"), 1),
    ("edit within the racy window", Case(checked="racy", same_bytes=False), ("ext4", "ext4"), 0),
    ("unchanged within the racy window: restamped", Case(checked="racy"), ("ext4", "ext4"), 0),
    ("rename over the file (another inode)", Case("ino", same_bytes=False), ("ext4", "ext4"), 0),
    ("rename of the same bytes over the file: restamped", Case("ino"), ("ext4", "ext4"), 0),
    ("edit through a hard link (the ctime moves)", Case("ctime", same_bytes=False), ("ext4", "ext4"), 0),
    ("touch: another mtime, the same bytes", Case("mtime"), ("ext4", "ext4"), 0),
    ("append: another size", Case("size", same_bytes=False), ("ext4", "ext4"), 0),
    ("confirmed longer ago than the trust age", Case(checked="old"), ("ext4", "ext4"), 0),
    ("unknown file system, ctime apart", Case(), ("somefs", "ext4"), 0),
    ("unknown file system, ctime equal to mtime", Case(same_times=True), ("somefs", "ext4"), 0),
    ("untold file system, ctime equal to mtime", Case(same_times=True), ("", "ext4"), 0),
    ("a mount below .memzoi whose ctime follows mtime", Case(device=1, same_bytes=False), ("ext4", "fuse.sshfs"), 0),
    ("gone", Case(presence="gone"), ("ext4", "ext4"), 0),
    ("listed, then gone before its stat", Case(presence="unstated"), ("ext4", "ext4"), 0),
    ("new", Case(presence="new"), ("ext4", "ext4"), 0),
]


@pytest.mark.parametrize("case,kinds,share", [n[1:] for n in NAMED], ids=[n[0] for n in NAMED])
def test_the_bulk_decision_is_the_per_file_rules_on_each_freshness_case(indexed, monkeypatch, case, kinds, share):
    root, db = indexed
    bulk, plain, keys = plans(root, db, [case, *[Case()] * (N - 1)], kinds, share, monkeypatch)
    assert bulk == plain
    changed = [p for p in plain[0] if p == root / keys[0]]  # the case's file (the others may be read too)
    gone = [k for k in plain[1] if k == keys[0]]
    restamped = [r for r in plain[2] if r[-1] == keys[0]]
    if case.presence == "new":
        assert len(changed) == 1 and not gone and not restamped
    elif case.presence != "listed":
        assert len(gone) == 1 and not changed and not restamped
    else:  # what the rule says of the file (the per-file rule is not merely equal to itself)
        vouches = case.differs is None and case.checked == "fine" and share == 0
        vouches = vouches and (kinds[case.device] == "ext4" or (kinds[case.device] == "somefs" and not case.same_times))
        assert (len(changed), len(restamped)) == ((0, 0) if vouches else (0, 1) if case.same_bytes else (1, 0))


def test_every_unchanged_file_is_kept_without_a_read(indexed, monkeypatch):
    root, db = indexed
    reads: list[str] = []
    monkeypatch.setattr(freshness, "confirm", lambda path, *a: reads.append(path))
    bulk, plain, _ = plans(root, db, [Case()] * N, ("ext4", "ext4"), 0, monkeypatch)
    assert bulk == plain == ([], [], [], bulk[3], bulk[4]) and reads == []


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    cases=st.lists(
        st.builds(
            Case,
            differs=st.sampled_from([None, None, "size", "mtime", "ino", "ctime"]),
            checked=st.sampled_from(["fine", "fine", "racy", "old"]),
            same_times=st.booleans(),
            device=st.sampled_from([0, 0, 1]),
            same_bytes=st.booleans(),
            presence=st.sampled_from(["listed", "listed", "listed", "unstated", "gone", "new"]),
        ),
        min_size=N,
        max_size=N,
    ),
    kinds=st.tuples(st.sampled_from(KINDS), st.sampled_from(KINDS)),
    share=st.sampled_from([0, 1]),
)
def test_the_bulk_decision_is_the_per_file_rules_on_any_mix(indexed, monkeypatch, cases, kinds, share):
    root, db = indexed
    with monkeypatch.context() as m:
        bulk, plain, _ = plans(root, db, cases, kinds, share, m)
    assert bulk == plain
