"""The MCP server warms itself before a session's first call (issue 29: the first ``search_memory`` at 50,000
records): the core is loaded once the client is initialized, find's listing is started as soon as a call arrives
and taken by that call's refresh only (:mod:`memzoi.stores.calllisting`: never one started before the call
arrived), and the watches are set up only once the first call is answered (watchfiles holds the interpreter while
it lists the tree)."""

from __future__ import annotations

import contextlib
import json
import os
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any
from unittest import mock

import mcp_types as types
import pytest
from hypothesis import given, strategies as st

import memzoi_mcp.arrivals as arrivals_module
import memzoi_mcp.server as mcp_server
from memzoi.base import dirwatch
from memzoi.stores import calllisting, changefeed
from memzoi.stores.findlisting import Ahead
from memzoi.stores.index import Index
from memzoi_mcp.arrivals import Arrivals
from memzoi_mcp.watching import Watching

from ..index_setup import NEW, OLD, closed, fact, same_size_edit  # noqa: F401 - fixtures
from .conftest import FACT_ID, home, project  # noqa: F401 - fixtures
from .test_first_call import current_with_a_mark, ids


class Listing:
    """A stand-in for :class:`memzoi.stores.findlisting.Ahead`: when it was started, and whether it was stopped."""

    def __init__(self, started_ns: int) -> None:
        self.started_ns, self.closed = started_ns, False

    def close(self) -> None:
        self.closed = True


@given(st.integers(0, 10**12), st.integers(0, 10**12))
def test_a_listing_serves_a_call_only_if_started_at_or_after_its_arrival(started, arrived):
    listing = Listing(started)
    with mock.patch.object(calllisting, "Ahead", lambda root: Listing(-1)):
        with calllisting.serving("/p", arrived, listing):  # type: ignore[arg-type]
            taken = calllisting.ahead(os.path.realpath("/p"))
    assert calllisting.valid(started, arrived) is (started >= arrived)
    assert (taken is listing) is (started >= arrived)
    assert listing.closed is (started < arrived)  # not taken: stopped


def test_a_listing_is_taken_once_by_its_own_call_and_for_its_project(project, monkeypatch):
    started: list[str] = []
    monkeypatch.setattr(calllisting, "Ahead", lambda root: started.append(root) or Listing(0))
    root = str(project.resolve())
    early = Listing(10)
    with calllisting.serving(project, 5, early):  # type: ignore[arg-type]
        other: list[object] = []
        elsewhere = threading.Thread(target=lambda: other.append(calllisting.ahead(root)))  # another call's thread
        elsewhere.start()
        elsewhere.join(60)
        assert other and other[0] is not early
        assert calllisting.ahead(root + "-other") is not early  # another project
        assert calllisting.ahead(root) is early
        assert calllisting.ahead(root) is not early  # taken once: find's output is read once
    assert not early.closed and len(started) == 3


def test_a_listing_started_before_the_call_arrived_is_not_served(project, closed):
    """A listing started ahead (as a warm-up at the handshake would) and an edit after it: the call that arrives
    then serves the new text, because its refresh does not take that listing."""
    path = fact(project)
    current_with_a_mark(project)
    watching = Watching()
    watching.serve(project)
    try:
        feed = changefeed.feed_of(project)
        early = calllisting.start(feed)
        assert early is not None  # the feed does not vouch yet: find's listing is what the call would take
        assert early.finding is not None
        early.finding.proc.wait()  # listed, before the edit
        same_size_edit(path)
        with calllisting.serving(project, calllisting.now(), early):
            assert ids(project, NEW) == [FACT_ID] and ids(project, OLD) == []
    finally:
        watching.stop()


class Ctx(SimpleNamespace):
    """What the server's handlers read of the SDK's request context."""

    session: Any = None
    request_id: Any = None


async def test_the_core_is_loaded_once_the_client_is_initialized(project, monkeypatch):
    """Without ``--root`` too (the project comes with the first call's roots): the core loads before any call."""
    loaded = threading.Event()
    monkeypatch.setattr(mcp_server, "_load_core", lambda: loaded.set())
    watching = Watching()
    server = mcp_server.make_server(None, None, env={}, cwd=project, watching=watching)
    try:
        entry = server.get_notification_handler("notifications/initialized")
        assert entry is not None
        await entry.handler(Ctx(), types.NotificationParams())
        assert loaded.wait(60)
    finally:
        watching.stop()


async def test_the_first_call_takes_the_listing_started_when_it_arrived(project, closed, monkeypatch):
    """The core is loaded while the client is initialized; a same-size edit made after that and before the call is
    served; the call's refresh takes the listing the server started when the call arrived, before the core."""
    path = fact(project)
    current_with_a_mark(project)
    real_load, loaded = mcp_server._load_core, threading.Event()
    monkeypatch.setattr(mcp_server, "_load_core", lambda: (real_load(), loaded.set())[0])
    started: list[Ahead] = []
    real_start = calllisting.start
    monkeypatch.setattr(calllisting, "start", lambda feed: started.append(real_start(feed)) or started[-1])
    taken: list[object] = []
    real_refresh = Index.refresh
    monkeypatch.setattr(
        Index, "refresh", lambda self, *a, **k: (taken.append(k.get("walked")), real_refresh(self, *a, **k))[1]
    )
    watching = Watching(settle_s=60)  # no watch while the test runs: every call lists by find
    server = mcp_server.make_server(project, None, env={}, cwd=project, watching=watching)
    try:
        initialized = server.get_notification_handler("notifications/initialized")
        call = server.get_request_handler("tools/call")
        assert initialized is not None and call is not None
        await initialized.handler(Ctx(), types.NotificationParams())
        assert loaded.wait(60)  # warmed before the call
        same_size_edit(path)
        params = types.CallToolRequestParams(name="search_memory", arguments={"query": NEW})
        res = await call.handler(Ctx(), params)
        assert not res.is_error, res.content[0].text
        assert [h["id"] for h in res.structured_content["results"]] == [FACT_ID]
        assert len(started) == 1 and started[0] is not None and taken == [started[0]]
        assert started[0].finding is None or started[0].finding.proc.returncode == 0
    finally:
        watching.stop()


async def test_the_watches_are_set_up_after_the_first_call_is_answered(project, closed, monkeypatch):
    order: list[str] = []
    watched = threading.Event()
    real = dirwatch.changed_paths

    def recording(*args: Any, **kwargs: Any) -> Any:
        order.append("watch")
        watched.set()
        yield from real(*args, **kwargs)

    monkeypatch.setattr(dirwatch, "changed_paths", recording)
    watching = Watching(settle_s=60)
    try:
        with watching.calling():
            watching.serve(project)
            assert ids(project, OLD) == [FACT_ID]
            order.append("answered")
        assert watched.wait(60)
        assert order == ["answered", "watch"]
    finally:
        watching.stop()


@pytest.mark.parametrize("settle_s", [0.0, 0.01])
def test_without_a_call_the_watches_are_set_up(project, settle_s, monkeypatch):
    """The hold is bounded by ``settle_s`` (0: none) when no call comes."""
    watched = threading.Event()

    def recording(*args: Any, **kwargs: Any) -> Any:
        watched.set()
        return iter(())

    monkeypatch.setattr(dirwatch, "changed_paths", recording)
    watching = Watching(settle_s=settle_s)
    try:
        watching.serve(project)
        assert watched.wait(60)
    finally:
        watching.stop()


def test_a_call_queries_while_find_lists_and_keeps_it_only_where_nothing_changed(project, closed, monkeypatch):
    """Before the feed vouches, ``search_memory`` queries the index as it is while find lists the files, as
    ``memzoi search`` does, and keeps that answer only where the refresh changed none of the rows (Reader.early):
    after a same-size edit it queries again and serves the new text."""
    from memzoi.stores.findlisting import Finding

    current_with_a_mark(project)
    order: list[str] = []
    real_search, real_wait = Index.search, Finding.wait
    monkeypatch.setattr(Index, "search", lambda self, *a, **k: (order.append("query"), real_search(self, *a, **k))[1])
    monkeypatch.setattr(Finding, "wait", lambda self: (order.append("listed"), real_wait(self))[1])
    watching = Watching(settle_s=60)  # no watch: the calls list by find
    try:
        watching.serve(project)
        assert ids(project, OLD) == [FACT_ID]
        assert order == ["query", "listed"]  # the query did not wait for find, and was kept
        order.clear()
        same_size_edit(fact(project))
        assert ids(project, NEW) == [FACT_ID]
        assert order == ["query", "listed", "query"]  # the refresh re-indexed the record: queried again
    finally:
        watching.stop()


def call_line(rid: object, name: str = "search_memory") -> str:
    return json.dumps({"jsonrpc": "2.0", "id": rid, "method": "tools/call", "params": {"name": name, "arguments": {}}})


def test_arrivals_note_each_call_read_with_its_listing():
    started: list[Listing] = []
    arrivals = Arrivals(lambda: started.append(Listing(0)) or started[-1])
    assert arrivals.read('{"jsonrpc": "2.0", "method": "notifications/initialized"}') is None
    assert arrivals.read('{"method": "tools/call", oops') is None  # not JSON: the check answers it
    assert arrivals.read(json.dumps({"jsonrpc": "2.0", "method": "tools/call"})) is None  # no id: never answered
    assert started == []
    before = time.monotonic_ns()
    assert arrivals.read(call_line(1)) == 1
    noted = arrivals.take(1)
    assert noted is not None and noted[0] >= before and noted[1] is started[0]
    assert arrivals.take(1) is None  # once
    arrivals.read(call_line("a"))
    arrivals.drop("a")  # its line was refused
    assert started[1].closed and arrivals.take("a") is None
    for rid in range(100, 100 + arrivals_module.KEPT + 1):  # calls the SDK answered itself: never taken
        arrivals.read(call_line(rid))
    assert started[2].closed and not started[3].closed
    arrivals.close()
    assert all(listing.closed for listing in started[3:])


@given(st.text(max_size=200))
def test_arrivals_never_raise(line):
    arrivals = Arrivals(lambda: None)
    rid = arrivals.read(line + '"tools/call"')
    assert rid is None or arrivals.take(rid) is not None


async def test_a_call_takes_the_listing_started_when_its_line_was_read(project, closed, monkeypatch):
    current_with_a_mark(project)
    taken: list[object] = []
    real_refresh = Index.refresh
    monkeypatch.setattr(
        Index, "refresh", lambda self, *a, **k: (taken.append(k.get("walked")), real_refresh(self, *a, **k))[1]
    )
    with noting(project) as (arrivals, call):
        assert arrivals.read(call_line(7)) == 7
        noted = arrivals._calls[7][1]
        assert noted is not None
        params = types.CallToolRequestParams(name="search_memory", arguments={"query": OLD})
        res = await call.handler(Ctx(request_id=7), params)
        assert [h["id"] for h in res.structured_content["results"]] == [FACT_ID]
        assert taken == [noted]


@contextlib.contextmanager
def noting(project: Path) -> Iterator[tuple[Arrivals, Any]]:
    """``(arrivals, tools/call handler)`` of a server for ``project`` that notes each call's line as
    ``memzoi-mcp --root`` does, with no watch set up while the test runs (every call lists by find)."""
    watching = Watching(settle_s=60)
    arrivals = Arrivals(lambda: mcp_server._early_listing(project, watching))
    server = mcp_server.make_server(project, None, env={}, cwd=project, watching=watching, arrivals=arrivals)
    try:
        call = server.get_request_handler("tools/call")
        assert call is not None
        yield arrivals, call
    finally:
        arrivals.close()
        watching.stop()
