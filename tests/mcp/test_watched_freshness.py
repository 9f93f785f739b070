"""The freshness cases of the index's and the searches' tests hold for refreshes made while the MCP server's watcher
runs (:mod:`memzoi.stores.changefeed`, fed by :class:`memzoi_mcp.watching.Watching`'s watchfiles thread): each
test below is one of ``tests/test_index_freshness.py``, ``tests/test_search_freshness.py`` or of this module, run
with a watcher on the project, its calls made right after the write (no wait in between: the refresh's barrier
drains the events in flight). Each asserts, once done, that refreshes were served from the notifications (not by
a walk) where the file system is one whose notifications are relied on, so a missed event would serve old text."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from memzoi.agent import recall
from memzoi.ledger import Refusal
from memzoi.stores import changefeed
from memzoi_mcp.watching import Watching

from .. import builders
from ..index_setup import NEW, OLD, closed, fact, same_size_edit  # noqa: F401 - fixtures
from ..test_index_freshness import (  # noqa: F401 - the cases, collected here again under the watcher
    test_a_project_id_change_re_judges_every_row,
    test_a_rename_over_the_file,
    test_an_edit_keeping_size_and_mtime_on_ext4,
    test_an_edit_keeping_the_stat_where_ctime_follows_mtime,
    test_an_edit_through_a_hard_link,
    test_an_edit_within_the_racy_window,
    test_an_ignore_rule_withholds_an_untracked_record,
    test_git_add_commit_and_rm_cached_re_judge_admission,
)
from ..test_search_freshness import (  # noqa: F401
    test_a_retention_boundary_passing_reaches_every_search,
    test_an_ignore_rule_reaches_every_search,
    test_git_add_and_a_commit_reach_every_search,
)
from .conftest import FACT_ID, home, project  # noqa: F401 - fixtures


def opened(feed: changefeed.ChangeFeed) -> bool:
    """What the server's opening refresh does first: wait for the watches to be in place, then list the plane
    through the feed, after which it vouches and the refreshes take its listing."""
    if not feed.barrier(timeout=60):
        return False
    with feed.refreshing:
        feed.listing()
    return feed.vouches()


@pytest.fixture(autouse=True)
def watched(project: Path):
    """A watcher on ``project`` for the whole test, as the MCP server starts it; afterwards: the refreshes after the
    first were served from notifications, unless the file system is one where they are not relied on."""
    watching = Watching()
    watching.serve(project)
    feed = changefeed.feed_of(project)
    assert feed is not None
    assert opened(feed)  # the watches in place and the plane listed, as by the opening refresh
    yield feed
    why, walks, served = feed.why, feed.walks, feed.served
    watching.stop()
    if "not relied on" not in why and walks + served > 1:
        assert served > 0, why


def body(project: Path) -> str:
    return recall.get_memory(project, FACT_ID)["body"]


def ids(project: Path, word: str) -> list[str]:
    from memzoi.agent.search import search_memory

    return [h["id"] for h in search_memory(project, word)["results"]]


def test_a_new_file_and_a_delete_right_before_the_call(project, closed, watched):
    assert ids(project, "zebrafish") == []
    rid = "facts/zebrafish"
    path = builders.write(project, builders.record_path(rid), builders.record(rid, title="About the zebrafish"))
    assert ids(project, "zebrafish") == [rid]
    path.unlink()
    assert ids(project, "zebrafish") == []
    assert watched.walks == 1


def test_an_edit_keeping_size_and_mtime_right_before_each_of_many_calls(project, closed, watched):
    from ..index_setup import renamed

    path = fact(project)
    for i in range(10):
        word, other = (NEW, OLD) if i % 2 == 0 else (OLD, NEW)
        st = path.stat()
        text = path.read_text(encoding="utf-8")
        path.write_text(renamed(text) if i % 2 == 0 else text.replace(f"{NEW}", f"{OLD}"), encoding="utf-8")
        os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
        assert ids(project, word) == [FACT_ID] and ids(project, other) == []
    assert watched.walks == 1


def test_a_new_folder_is_walked(project, closed, watched):
    assert ids(project, "zebrafish") == []
    rid = "notes/deep/zebrafish"
    builders.write(project, builders.record_path(rid), builders.record(rid, title="About the zebrafish"))
    assert ids(project, "zebrafish") == [rid]
    assert watched.walks == 2 and "folder" in watched.why
    assert ids(project, "zebrafish") == [rid] and watched.walks == 2


def test_a_folder_holding_only_folders_moved_away(project, closed, watched):
    """``records/deep`` holds only ``sub/``: moved out of the plane (within ``.memzoi`` and out of it), its record
    is no longer found, nor handed out by ``get_memory``; moved back, it is found again."""
    rid = "deep/sub/gnu"
    builders.write(project, builders.record_path(rid), builders.record(rid, title="About the gnu"))
    assert ids(project, "gnu") == [rid]
    records = project / ".memzoi" / "records"
    for away in (project / ".memzoi" / "parked", project / "parked"):
        os.rename(records / "deep", away)
        assert ids(project, "gnu") == []
        with pytest.raises(Refusal, match="no record"):
            recall.get_memory(project, rid)
        os.rename(away, records / "deep")
        assert ids(project, "gnu") == [rid]


@pytest.mark.parametrize("how", ["renamed", "removed"])
def test_a_memzoi_folder_swapped_for_a_copy(project, closed, watched, how):
    """``.memzoi`` renamed away (or removed) and a copy renamed into its place (a sync tool's or a script's swap,
    the copy's folder perhaps on the freed inode): the copy's
    edits are seen (the watches stayed on the folder renamed away)."""
    import shutil

    shutil.copytree(project / ".memzoi", project / ".memzoi.new")
    if how == "renamed":
        os.rename(project / ".memzoi", project / ".memzoi.old")
    else:
        shutil.rmtree(project / ".memzoi")
    os.rename(project / ".memzoi.new", project / ".memzoi")
    assert ids(project, OLD) == [FACT_ID]
    same_size_edit(fact(project))
    assert ids(project, NEW) == [FACT_ID] and ids(project, OLD) == []
    assert NEW in body(project)
    watched.walks = watched.served = 0  # walked from the swap on, as it must: not served from notifications


@pytest.mark.skipif(os.geteuid() != 0, reason="mounting a tmpfs needs root")
def test_a_file_system_mounted_over_a_records_folder(project, closed, watched):
    """A tmpfs mounted over ``records/facts`` after the walk: its record is no longer found (the mount hides it)
    and a record written on the mount is; unmounted, the record is found again."""
    import subprocess

    folder = fact(project).parent
    assert ids(project, OLD) == [FACT_ID]
    if subprocess.run(["mount", "-t", "tmpfs", "none", str(folder)], capture_output=True).returncode:
        pytest.skip("mount refused")
    try:
        assert ids(project, OLD) == []
        rid = "facts/okapi"
        builders.write(project, builders.record_path(rid), builders.record(rid, title="About the okapi"))
        assert ids(project, "okapi") == [rid]
    finally:
        subprocess.run(["umount", str(folder)], check=True)
    assert ids(project, OLD) == [FACT_ID] and ids(project, "okapi") == []


def test_a_project_served_through_a_symlink(project, closed, tmp_path):
    """The watcher served on a path through a symlink (the index resolves its root): the refresh neither fails
    nor serves the old text of an edit keeping size and mtime, asked through either path."""
    alias = tmp_path / "alias"
    alias.symlink_to(project)
    watching = Watching()
    watching.serve(alias)
    try:
        feed = changefeed.feed_of(alias)
        assert feed is not None and opened(feed)
        assert ids(alias, OLD) == [FACT_ID]
        same_size_edit(fact(project))
        assert ids(alias, NEW) == [FACT_ID] and ids(project, OLD) == []
        assert feed.served > 0
    finally:
        watching.stop()


# --- the server itself, driven by the SDK's stdio client -------------------------------------------------------------


async def test_a_session_serves_each_change_made_right_before_the_call(project, home):
    """``memzoi-mcp --root``: its watcher and opening refresh start once the client is initialized; an edit keeping
    size and mtime, a delete, a new file, an ignore rule with ``git rm --cached`` and a project-id change are each
    seen by the call made right after them."""
    from ..index_setup import SCOPED, git, renamed, scoped
    from .test_stdio_e2e import connect

    async def found(s, word: str) -> list[str]:
        res = await s.call_tool("search_memory", {"query": word})
        assert not res.is_error, res.content[0].text
        return [h["id"] for h in res.structured_content["results"] if h["admitted"]]

    path = fact(project)
    scoped(project)
    async with connect(project, home) as s:
        assert await found(s, OLD) == [FACT_ID] and await found(s, "zebrafish") == [SCOPED]
        st = path.stat()
        path.write_text(renamed(path.read_text(encoding="utf-8")), encoding="utf-8")
        os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
        assert await found(s, NEW) == [FACT_ID] and await found(s, OLD) == []
        rid = "facts/okapi"
        new = builders.write(project, builders.record_path(rid), builders.record(rid, title="About the okapi"))
        assert await found(s, "okapi") == [rid]
        new.unlink()
        assert await found(s, "okapi") == []
        git(project, "add", ".memzoi")
        git(project, "commit", "-q", "-m", "records")
        assert await found(s, NEW) == [FACT_ID]
        (project / ".gitignore").write_text(".memzoi/records/\n")
        git(project, "rm", "-q", "-r", "--cached", ".memzoi/records")
        assert await found(s, NEW) == []  # untracked and ignored: refused
        (project / ".gitignore").write_text("")
        assert await found(s, NEW) == [FACT_ID]
        (project / ".memzoi/config.toml").write_text('[project]\nid = "other"\n')
        assert await found(s, "zebrafish") == []  # scoped to the project "demo": refused now
        assert await found(s, NEW) == [FACT_ID]


def test_a_watcher_that_stops_leaves_every_refresh_to_a_walk(tmp_path, closed):
    """A watcher that cannot watch (here: ``.memzoi`` is not there when it starts) stops, and from then on each
    refresh walks: nothing is taken from notifications that did not come."""
    root = tmp_path / "late"
    root.mkdir()
    watching = Watching()
    watching.serve(root)
    feed = changefeed.feed_of(root)
    assert feed is not None
    try:
        with feed._cond:
            assert feed._cond.wait_for(lambda: feed.why.startswith("the watcher stopped"), 60)
        (root / ".memzoi" / "records").mkdir(parents=True)
        builders.write(root, builders.record_path("facts/a"), builders.record("facts/a"))
        assert list(feed.listing().stamps) == [".memzoi/records/facts/a.md"]
        assert list(feed.listing().stamps) == [".memzoi/records/facts/a.md"]
        assert feed.walks == 2 and feed.served == 0
    finally:
        watching.stop()
