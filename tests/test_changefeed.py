"""The change feed's decisions (:mod:`memzoi.stores.changefeed`), without a server: the listing it keeps from the
notified paths equals a fresh walk after every kind of change, it stats only the notified and linked files, and it
walks where notifications cannot vouch (no barrier, a folder event, a burst, another file system, an old walk, a
stopped watcher). The notifications are handed over by the test (:meth:`ChangeFeed.events`); the barrier is held
passed, except where a test is about it."""

from __future__ import annotations

import os
import threading
from pathlib import Path

import pytest

from memzoi.base import freshness
from memzoi.stores import changefeed, planelisting
from memzoi.stores.changefeed import ChangeFeed

from . import builders


def write(root: Path, rid: str, body: str = "Body.") -> Path:
    return builders.write(root, builders.record_path(rid), builders.record(rid, body=body))


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setattr(freshness, "fs_type", lambda dev: "ext4")
    root = tmp_path / "repo"
    (root / ".memzoi" / "proposals" / "pending").mkdir(parents=True)
    for i in range(5):
        write(root, f"facts/f{i}")
    return root


@pytest.fixture
def feed(project: Path, monkeypatch: pytest.MonkeyPatch):
    f = ChangeFeed(project)
    f.running()
    monkeypatch.setattr(f, "barrier", lambda *a, **k: True)
    yield f
    f.close()


def same_as_walk(feed: ChangeFeed) -> None:
    got, want = feed.listing(), planelisting.walk(feed.root)
    assert (got.stamps, sorted(got.unstated), got.folders, got.linked) == (
        want.stamps,
        sorted(want.unstated),
        want.folders,
        want.linked,
    )


def test_the_first_listing_walks_then_notified_edits_are_stated_alone(feed: ChangeFeed, project: Path):
    same_as_walk(feed)
    assert (feed.walks, feed.why) == (1, "no walk yet")
    path = next(project.glob(".memzoi/records/**/f1.md"))
    path.write_text(path.read_text() + "more\n")
    feed.events([str(path)])
    same_as_walk(feed)
    assert (feed.walks, feed.why, feed.stats) == (1, "", 1)


def test_an_edit_without_its_notification_is_not_seen(feed: ChangeFeed, project: Path):
    """The test can fail: what is not notified keeps its old stamp (the watcher's events are what it follows)."""
    feed.listing()
    path = next(project.glob(".memzoi/records/**/f1.md"))
    path.write_text(path.read_text() + "more\n")
    assert feed.listing().stamps != planelisting.walk(project).stamps


@pytest.mark.parametrize("change", ["new", "delete", "rename_over", "rename_away", "symlink", "ignored_name"])
def test_each_kind_of_file_change_gives_the_walks_listing(feed: ChangeFeed, project: Path, change: str):
    feed.listing()
    path = next(project.glob(".memzoi/records/**/f1.md"))
    touched = [str(path)]
    if change == "new":
        touched = [str(write(project, "facts/g1"))]
    elif change == "delete":
        path.unlink()
    elif change == "rename_over":
        tmp = path.with_name("f1.md.tmp")
        tmp.write_text(path.read_text().replace("Body.", "Ydob."))
        os.replace(tmp, path)
        touched.append(str(tmp))
    elif change == "rename_away":
        os.replace(path, path.with_name("f9.md"))
        touched.append(str(path.with_name("f9.md")))
    elif change == "symlink":
        path.unlink()
        path.symlink_to(path.with_name("f2.md"))
    elif change == "ignored_name":
        touched = [str(path.with_name(".f1.md.swp")), str(path.with_name("index.md"))]
        for t in touched:
            Path(t).write_text("x")
    feed.events(touched)
    same_as_walk(feed)
    assert feed.walks == 1


def test_a_file_with_another_link_is_stated_every_time(feed: ChangeFeed, project: Path, tmp_path: Path):
    path = next(project.glob(".memzoi/records/**/f1.md"))
    os.link(path, tmp_path / "outside")
    feed.listing()
    with open(tmp_path / "outside", "a") as fh:  # no notification for the folder of .memzoi
        fh.write("more\n")
    same_as_walk(feed)
    assert feed.walks == 1 and feed.stats == 1


@pytest.mark.parametrize("where", ["new_folder", "removed_folder", "records_itself", "memzoi_itself"])
def test_a_folder_event_walks(feed: ChangeFeed, project: Path, where: str):
    feed.listing()
    records = project / ".memzoi" / "records"
    if where == "new_folder":
        (records / "notes").mkdir()
        write(project, "notes/n1")
        event = records / "notes"
    elif where == "removed_folder":
        folder = next(project.glob(".memzoi/records/**/f1.md")).parent
        for p in folder.iterdir():
            p.unlink()
        folder.rmdir()
        event = folder
    else:
        event = records if where == "records_itself" else project / ".memzoi"
    feed.events([str(event)])
    same_as_walk(feed)
    # an event of .memzoi itself: its watches may be gone, so every refresh walks from then on
    assert feed.walks == 2 and ("replaced" if where == "memzoi_itself" else "folder changed") in feed.why


@pytest.mark.parametrize("to", ["inside_memzoi", "outside_memzoi"])
def test_a_folder_holding_only_folders_moved_away_walks(feed: ChangeFeed, project: Path, to: str):
    """A folder whose files are all in folders below it (``records/deep/sub/x.md``): moved away, the one event is
    the gone ``records/deep``, no file event comes, and its files must leave the listing (else a moved record is
    still served, as usable memory, from its old path)."""
    write(project, "deep/sub/gnu")
    feed.listing()
    away = project / ".memzoi" / "parked" if to == "inside_memzoi" else project / "parked"
    os.rename(project / ".memzoi" / "records" / "deep", away)
    feed.events([str(project / ".memzoi" / "records" / "deep")])
    same_as_walk(feed)
    assert feed.walks == 2 and "folder changed" in feed.why


@pytest.mark.parametrize("folder", [".hidden", ".hidden/inner", "deep/.git"])
def test_a_new_file_in_a_hidden_folder_is_not_listed(feed: ChangeFeed, project: Path, folder: str):
    """Memzoi's walk enters no hidden folder (``workspace.plane_entries``); a file made there after the walk, its
    event stated alone, must not enter the listing either (else recall serves a record ``memzoi check`` never
    judged)."""
    (project / ".memzoi" / "records" / folder).mkdir(parents=True)
    feed.listing()
    made = write(project, f"{folder}/h1")
    feed.events([str(made)])
    same_as_walk(feed)


def test_a_memzoi_folder_replaced_by_another_walks_from_then_on(feed: ChangeFeed, project: Path):
    """``.memzoi`` renamed away and another put in its place: the watches follow the old folder, so no event of
    the new one ever comes; every refresh walks from then on (here without any event handed over)."""
    feed.listing()
    memzoi = project / ".memzoi"
    os.rename(memzoi, project / ".memzoi.old")
    memzoi.mkdir()
    os.rename(project / ".memzoi.old" / "records", memzoi / "records")
    path = next(project.glob(".memzoi/records/**/f1.md"))
    path.write_text(path.read_text() + "more\n")
    same_as_walk(feed)
    assert "replaced" in feed.why
    write(project, "facts/g1")
    same_as_walk(feed)
    assert feed.walks == 3


def test_a_memzoi_folder_removed_and_made_again_walks_from_then_on(feed: ChangeFeed, project: Path):
    """``.memzoi`` removed and made again (its inode may be reused, so its event is what tells): the watches went
    with the old folder, so every refresh walks from then on."""
    import shutil

    feed.listing()
    shutil.copytree(project / ".memzoi", project / "saved")
    shutil.rmtree(project / ".memzoi")
    feed.events([str(project / ".memzoi")])
    shutil.copytree(project / "saved", project / ".memzoi")
    same_as_walk(feed)
    path = next(project.glob(".memzoi/records/**/f1.md"))
    path.write_text(path.read_text() + "more\n")
    same_as_walk(feed)
    assert feed.walks == 3 and "replaced" in feed.why


def test_a_change_of_the_mounts_walks(feed: ChangeFeed, project: Path, monkeypatch: pytest.MonkeyPatch):
    """A file system mounted over a folder of the plane after the walk hides its files and shows others, and no
    notification says so: a change of the mount table (here its reading replaced) walks."""
    line = "36 25 0:32 / {} rw,relatime shared:1 - {} none rw\n"
    table = [line.format("/", "ext4").encode()]
    monkeypatch.setattr(freshness, "mount_table", lambda: table[0])
    feed.listing()
    assert feed.walks == 1
    table[0] += line.format("/elsewhere", "tmpfs").encode()
    feed.listing()
    assert feed.walks == 2 and "mount" in feed.why
    feed.listing()
    assert feed.walks == 2
    # a mount point below .memzoi (an empty one holds no listed file to tell it): every refresh walks
    below = str(project.resolve() / ".memzoi" / "records" / "my facts").replace(" ", "\\040")
    table[0] += line.format(below, "tmpfs").encode()
    feed.listing()
    feed.listing()
    assert feed.walks == 4 and "mounted below" in feed.why


def test_config_and_other_memzoi_files_are_not_stated(feed: ChangeFeed, project: Path):
    feed.listing()
    (project / ".memzoi" / "config.toml").write_text("[rules]\n")
    feed.events([str(project / ".memzoi" / "config.toml")])
    feed.listing()
    assert (feed.walks, feed.stats) == (1, 0)


def test_no_barrier_a_burst_an_old_walk_or_a_stopped_watcher_walk(feed: ChangeFeed, monkeypatch):
    feed.listing()
    monkeypatch.setattr(feed, "barrier", lambda *a, **k: False)
    feed.listing()
    assert feed.walks == 2 and "barrier" in feed.why
    monkeypatch.setattr(feed, "barrier", lambda *a, **k: True)
    feed.events([f"{feed.memzoi}/records/x{i}.md" for i in range(changefeed.DIRTY_LIMIT + 1)])
    feed.listing()
    assert feed.walks == 3 and "at once" in feed.why
    monkeypatch.setattr(changefeed, "MAX_AGE_NS", -1)
    feed.listing()
    assert feed.walks == 4 and "older" in feed.why
    monkeypatch.setattr(changefeed, "MAX_AGE_NS", 60 * 10**9)
    feed.failed("gone")
    feed.listing()
    feed.listing()
    assert feed.walks == 6 and "stopped" in feed.why


def test_a_walk_before_the_watches_are_in_place_is_not_kept(feed: ChangeFeed, project: Path, monkeypatch):
    """A walk whose barrier did not pass (the watcher not set up yet) may precede the watches: a change between
    the two would never be notified, so the next refresh walks again instead of keeping it."""
    monkeypatch.setattr(feed, "barrier", lambda *a, **k: False)
    feed.listing()
    path = next(project.glob(".memzoi/records/**/f1.md"))
    path.write_text(path.read_text() + "more\n")  # no notification: the watches were not there yet
    monkeypatch.setattr(feed, "barrier", lambda *a, **k: True)
    same_as_walk(feed)
    assert feed.walks == 2 and feed.why == "no walk yet"
    feed.listing()
    assert feed.walks == 2 and feed.served == 1


@pytest.mark.parametrize("kind", ["fuse.sshfs", "nfs4", "cifs", "vfat", ""])
def test_where_notifications_are_not_relied_on_every_refresh_walks(feed: ChangeFeed, monkeypatch, kind: str):
    monkeypatch.setattr(freshness, "fs_type", lambda dev: kind)
    feed.listing()
    feed.listing()
    assert feed.walks == 2 and "not relied on" in feed.why


def test_the_barrier_waits_for_its_own_event(project: Path):
    """A barrier passes once the watcher hands over a barrier file's event, created after the call began: here a
    thread plays the watcher and hands over what it finds in the barrier's folder."""
    f = ChangeFeed(project)
    stop = threading.Event()

    def watcher() -> None:
        f.running()
        while not stop.is_set():
            f.events([os.path.join(f.sentinels, n) for n in os.listdir(f.sentinels)])
            stop.wait(0.01)

    t = threading.Thread(target=watcher)
    t.start()
    try:
        assert f.barrier(timeout=30)
    finally:
        stop.set()
        t.join()
    f.failed("stopped")
    assert not f.barrier(timeout=30)  # a stopped watcher: at once, no wait
    f.close()
    assert not os.path.exists(f.sentinels)


def test_without_a_watcher_event_the_barrier_does_not_pass(project: Path):
    f = ChangeFeed(project)
    f.running()
    assert not f.barrier(timeout=0.2)
    f.close()


def test_the_registry(project: Path):
    with changefeed.refreshing(project) as walked:
        assert walked is None
    f = ChangeFeed(project)
    changefeed.register(f)
    try:
        assert changefeed.feed_of(project) is f
        with changefeed.refreshing(project) as walked:  # not vouching yet: find's listing, without the lock
            assert walked is not None and not f.refreshing.locked()
            walked()
        f.vouches = lambda: True  # type: ignore[method-assign]
        with changefeed.refreshing(project):
            assert f.refreshing.locked()
    finally:
        changefeed.unregister(project)
    assert changefeed.feed_of(project) is None and not os.path.exists(f.sentinels)


def test_a_watcher_never_seen_to_pass_a_barrier_is_not_waited_for(project: Path):
    """Until one barrier event has come, the watcher may still be setting up its watches: a refresh walks at once,
    and that walk is not kept."""
    f = ChangeFeed(project)
    f.running()
    try:
        assert f.listing().stamps == planelisting.walk(project).stamps
        assert f.walks == 1 and "setting up" in f.why and f.listing() is not f.listing()
    finally:
        f.close()
