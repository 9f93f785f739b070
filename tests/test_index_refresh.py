"""The index's cheap refresh (``memzoi search``): the stat walk finds exactly the files of the git plane, and a
refresh re-indexes what changed, adds what is new and drops what is gone, without scanning unchanged paths."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from memzoi.judge import pathsafety
from memzoi.project.crossfile import git_plane_files
from memzoi.stores.index import Index
from memzoi.stores.index_queries import _REDACTED_PREFIX
from memzoi.stores.planelisting import walk

from .test_index import home, project  # noqa: F401 (fixtures)


def _odd_entries(root: Path) -> None:
    """Everything the walk must skip or take, beside the corpus files."""
    rec = root / ".memzoi/records"
    (rec / ".hidden.md").write_text("x")
    (rec / ".hidden-dir").mkdir()
    (rec / ".hidden-dir/in.md").write_text("x")
    (rec / "index.md").write_text("x")
    (rec / "log.md").write_text("x")
    (rec / "notes.txt").write_text("x")
    (rec / "deep/er/still").mkdir(parents=True)
    (rec / "deep/er/still/found.md").write_text("x")
    (rec / "folder.md").mkdir()  # a folder named like a record
    (rec / "folder.md/inside.md").write_text("x")
    (rec / "link.md").symlink_to(rec / "deep/er/still/found.md")
    (rec / "linked-dir").symlink_to(rec / "deep")
    (root / ".memzoi/elsewhere.md").write_text("x")  # not below records or proposals
    if os.name == "posix":
        try:
            (rec / os.fsdecode(b"bad-\xff.md")).write_text("x")
        except OSError:  # a file system that refuses names that are not UTF-8
            pass


def test_the_walk_lists_exactly_the_git_plane_files(project):
    _odd_entries(project)
    expected = {p.relative_to(project).as_posix(): p for p in git_plane_files(project / ".memzoi")}
    got = walk(project)
    assert set(got.keys()) == set(expected) and not got.unstated and not got.devs
    assert got.dev == os.stat(project / ".memzoi").st_dev
    for rel in got.keys():
        path, stat = got.path(rel), got.stat(rel)
        st = os.stat(path)
        assert stat is not None and os.path.samefile(path, expected[rel])
        assert stat == (
            (st.st_size, st.st_mtime_ns, st.st_ino, st.st_ctime_ns),
            st.st_dev,
        )
    assert got.folders == {os.path.dirname(got.path(rel)) for rel in got.keys()}


def test_the_walk_of_a_symlinked_plane_is_empty(project, tmp_path):
    moved = tmp_path / "real-records"
    shutil.move(project / ".memzoi/records", moved)
    (project / ".memzoi/records").symlink_to(moved)
    assert not any(rel.startswith(".memzoi/records/") for rel in walk(project).keys())
    assert set(walk(project).keys()) == {
        p.relative_to(project).as_posix() for p in git_plane_files(project / ".memzoi")
    }
    whole = tmp_path / "other"
    whole.mkdir()
    (whole / ".memzoi").symlink_to(project / ".memzoi")
    assert walk(whole).keys() == []  # a symlinked .memzoi is never entered


def test_the_redaction_marker_is_pathsafetys():
    assert _REDACTED_PREFIX == pathsafety.REDACTED_PREFIX


def test_refresh_reindexes_changed_new_and_gone_files_and_scans_only_new_paths(home, project, monkeypatch):
    with Index(project) as ix:
        ix.rebuild()
        before = ix.counts()
        rec = sorted((project / ".memzoi/records").rglob("*.md"))
        changed, gone = rec[0], rec[1]
        changed.write_bytes(changed.read_bytes() + b"\nA new line about zanzibarite.\n")
        gone.unlink()
        new = rec[2].parent / "brand-new.md"
        shutil.copyfile(rec[2], new)
        scanned: list[str] = []
        real = pathsafety.shown_path
        monkeypatch.setattr(pathsafety, "shown_path", lambda p: scanned.append(os.fspath(p)) or real(p))
        ix.refresh()
        # Unchanged paths are looked up as the index holds them; only the new one is scanned for its key (and the
        # re-indexed files where their rows are written).
        assert not any(s.endswith(rec[3].name) for s in scanned)
        assert any(s.endswith("brand-new.md") for s in scanned)
        assert ix.counts()["files"] == before["files"]  # one gone, one new
        assert ix.search("zanzibarite") and ix.drift().clean
        assert ix.refresh().files == 0  # nothing changed since


def test_a_file_indexed_under_its_redacted_path_is_not_scanned_again_by_a_refresh(home, project, monkeypatch):
    rec = sorted((project / ".memzoi/records").rglob("*.md"))
    secret = rec[0].parent / ("ghp_" + "aB3dE5fG7hJ9kL1mN2pQ4" + "rS6tU8vW0xY2zA4.md")  # assembled at run time
    shutil.copyfile(rec[0], secret)
    with Index(project) as ix:
        ix.rebuild()
        held = [r[0] for r in ix.db.execute("SELECT path FROM files")]
        assert secret.name not in repr(held) and any(p.startswith(_REDACTED_PREFIX) for p in held)
        scanned: list[str] = []
        real = pathsafety.shown_path
        monkeypatch.setattr(pathsafety, "shown_path", lambda p: scanned.append(os.fspath(p)) or real(p))
        assert ix.refresh().files == 0  # the same files: nothing re-indexed, nothing dropped
        assert scanned == []  # the redacted key is a hash of the path, found without the detectors
        secret.write_bytes(secret.read_bytes() + b"\nMore.\n")
        os.utime(secret, ns=(secret.stat().st_atime_ns, secret.stat().st_mtime_ns + 10**9))
        assert ix.refresh().files == 1  # a change under the redacted key is still seen
        assert [r[0] for r in ix.db.execute("SELECT path FROM files")] == held


def test_a_secret_value_that_is_part_of_a_path_never_merges_two_files_into_one_key():
    from memzoi.stores.index_rows import _scrub

    value = "-".join(["4111", "1111"])  # built at run time; any detected value that a file name also holds
    keys = []
    for name in ("a", "b"):
        path = f".memzoi/records/{name}-{value}.md"
        rows = {"file": {"path": path, "findings": "[]"}, "record": {"path": path, "body": f"x {value} y"}}
        _scrub(rows, [value])
        assert rows["file"]["path"] == rows["record"]["path"] and rows["file"]["path"].startswith(_REDACTED_PREFIX)
        assert value not in repr(rows)
        keys.append(rows["file"]["path"])
    assert keys[0] != keys[1]


def test_a_walk_ahead_gives_the_walks_listing_or_its_error(project, monkeypatch):
    """``memzoi search`` starts the walk before its imports (planelisting.walk_ahead): the listing it waits for is
    the walk's, and a walk that fails raises in the caller."""
    from memzoi.stores import planelisting

    _odd_entries(project)
    assert planelisting.walk_ahead(project)() == walk(project)

    def broken(root):
        raise OSError("walk failed")

    monkeypatch.setattr(planelisting, "walk", broken)
    wait = planelisting.walk_ahead(project)
    try:
        wait()
    except OSError as err:
        assert str(err) == "walk failed"
    else:
        raise AssertionError("the walk's error was not raised")
