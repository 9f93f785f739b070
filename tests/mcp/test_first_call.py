"""The first tool calls of an MCP session, made before the change feed vouches for its listing (issue 29: the
first ``search_memory`` at 50,000 records): they list the plane by find, as a one-shot ``memzoi search`` does
(:func:`memzoi.stores.changefeed.refreshing`), without waiting for the opening refresh, and still serve every edit
made after ``initialize`` and before the call, whether the watches are in place yet or not."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from memzoi.agent import recall
from memzoi.base import dirwatch
from memzoi.stores import changefeed
from memzoi.stores.findlisting import Ahead
from memzoi.stores.index import Index
from memzoi_mcp.watching import Watching

from ..index_setup import NEW, OLD, closed, fact, same_size_edit  # noqa: F401 - fixtures
from .conftest import FACT_ID, home, project  # noqa: F401 - fixtures


def ids(project: Path, word: str) -> list[str]:
    from memzoi.agent.search import search_memory

    return [h["id"] for h in search_memory(project, word)["results"]]


def current_with_a_mark(project: Path) -> None:
    """Leave the index current as ``memzoi search`` leaves it (by find's listing, twice: the second finds it
    current and leaves the mark), so that a first call could take the mark if it were wrong to."""
    for _ in range(2):
        index = Index(project, workers=1)
        try:
            index.refresh(walked=Ahead(project))
        finally:
            index.close()


@pytest.mark.parametrize("keep_mtime", [True, False], ids=["same size, mtime put back", "plain edit"])
async def test_an_edit_between_initialize_and_the_first_call_is_served(project, home, keep_mtime):
    from .test_stdio_e2e import connect

    path = fact(project)
    current_with_a_mark(project)
    async with connect(project, home) as s:  # initialized: the watcher and the opening refresh start now
        same_size_edit(path, keep_mtime=keep_mtime)
        res = await s.call_tool("search_memory", {"query": NEW})
        assert not res.is_error, res.content[0].text
        assert [h["id"] for h in res.structured_content["results"]] == [FACT_ID]
        res = await s.call_tool("search_memory", {"query": OLD})
        assert [h["id"] for h in res.structured_content["results"]] == []


def test_a_call_while_the_watches_are_being_set_up(project, closed, monkeypatch):
    """The watcher is held before it sets up any watch: the calls neither wait for it nor take the feed's listing
    (no walk, nothing served from notifications), and each serves the edit made right before it."""
    setting_up, release = threading.Event(), threading.Event()
    real = dirwatch.changed_paths

    def slow(*args, **kwargs):
        setting_up.set()
        release.wait(60)
        yield from real(*args, **kwargs)

    monkeypatch.setattr(dirwatch, "changed_paths", slow)
    path = fact(project)
    current_with_a_mark(project)
    watching = Watching()
    watching.serve(project)
    feed = changefeed.feed_of(project)
    assert feed is not None
    try:
        assert setting_up.wait(60) and not feed.vouches()
        assert ids(project, OLD) == [FACT_ID]
        same_size_edit(path)
        assert ids(project, NEW) == [FACT_ID] and ids(project, OLD) == []
        assert NEW in recall.get_memory(project, FACT_ID)["body"]
        assert feed.walks == 0 and feed.served == 0 and not feed.refreshing.locked()
    finally:
        release.set()
        watching.stop()


def test_the_first_call_does_not_wait_for_the_opening_refresh(project, closed):
    """A refresh holding the feed (as the opening refresh does while it lists) does not hold up a call made before
    the feed vouches: the call lists by find and answers meanwhile."""
    current_with_a_mark(project)
    watching = Watching()
    watching.serve(project)
    feed = changefeed.feed_of(project)
    assert feed is not None
    try:
        with feed.refreshing:
            answered: list[list[str]] = []
            call = threading.Thread(target=lambda: answered.append(ids(project, OLD)))
            call.start()
            call.join(60)
            assert answered == [[FACT_ID]]
    finally:
        watching.stop()


def test_the_opening_refresh_lists_once_no_call_is_in_flight(project, closed):
    """The opening refresh's walk for the feed waits while a tool call is in flight (``Watching.calling``), so the
    first calls do not share the interpreter with it; once the call ends, it walks and the feed vouches."""
    watching = Watching()
    try:
        with watching.calling():
            watching.serve(project, lambda: None)
            feed = changefeed.feed_of(project)
            assert feed is not None and feed.barrier(timeout=60)  # the watches are in place
            assert ids(project, OLD) == [FACT_ID]  # the call itself: by find, not through the feed
            assert feed.walks == 0 and not feed.vouches()
        for _ in range(10_000):  # the walk, now that no call is in flight (each barrier waits for an event)
            if feed.vouches():
                break
            assert feed.barrier(timeout=60)
        assert feed.walks == 1
    finally:
        watching.stop()
