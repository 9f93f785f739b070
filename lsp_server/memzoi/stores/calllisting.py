"""The listing of a long-lived process's refresh started as soon as a call arrives (issue 29: the MCP server's first
``search_memory`` of a session at 50,000 records in 0.25 s, where find's listing takes about 0.18 s): the server
starts find (:func:`start`) before it loads the core and answers the call, and the call's refresh takes that listing
(:func:`ahead`, through :func:`memzoi.stores.changefeed.refreshing`) instead of starting its own once it gets there.

**The rule** (:func:`valid`): a listing serves a call only if it was started at or after the call arrived. Every
change made before the call was sent has completed before the call arrived, so its stat is in such a listing, and
the refresh serves no row older than the bytes at the time of the call. A listing started earlier (before the call,
while the client was still in its handshake) may miss an edit made between the two, and is never taken: the refresh
starts its own. A listing is taken once (find's output is read once), by the call it was started for (a context
variable, :func:`serving`: another call in flight cannot take it); one not taken is stopped when the call ends.
"""

from __future__ import annotations

import contextlib
import contextvars
import os
import time
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Protocol

from .findlisting import Ahead


def valid(started_ns: int, arrived_ns: int) -> bool:
    """Whether a listing started at ``started_ns`` may serve a call that arrived at ``arrived_ns`` (both
    ``time.monotonic_ns``): only one started at or after the call's arrival (see the module docstring)."""
    return started_ns >= arrived_ns


@dataclass
class _Call:
    root: str
    arrived_ns: int
    listing: Ahead | None


_CALL: contextvars.ContextVar[_Call | None] = contextvars.ContextVar("memzoi_call_listing", default=None)


class Feed(Protocol):
    """What :func:`start` asks of a :class:`memzoi.stores.changefeed.ChangeFeed` (which imports this module)."""

    root: str

    def vouches(self) -> bool: ...


def start(feed: Feed | None) -> Ahead | None:
    """find's listing of the project of ``feed`` (:func:`memzoi.stores.changefeed.feed_of`) started now, for the
    call that has just arrived; ``None`` where the call's refresh would not take it: no feed (a refresh without one
    walks) or one that already vouches for its own listing (:meth:`memzoi.stores.changefeed.ChangeFeed.vouches`,
    cheaper than find's)."""
    if feed is None or feed.vouches():
        return None
    return Ahead(feed.root)


@contextlib.contextmanager
def serving(root: str | os.PathLike[str], arrived_ns: int, listing: Ahead | None) -> Iterator[None]:
    """Serve one call that arrived at ``arrived_ns`` (``time.monotonic_ns``, taken when it was read) in this
    context: its first refresh of ``root`` takes ``listing`` (:func:`ahead`) if :func:`valid`; a listing not taken
    is stopped at the end."""
    call = _Call(os.path.realpath(root), arrived_ns, listing)
    token = _CALL.set(call)
    try:
        yield
    finally:
        _CALL.reset(token)
        if call.listing is not None:
            call.listing.close()


def ahead(root: str) -> Ahead:
    """The listing of ``root`` (a real path) for a refresh that cannot take the change feed's: the one started
    for the call served in this context (:func:`serving`) when it is for ``root``, not taken yet and :func:`valid`,
    else find's started now."""
    call = _CALL.get()
    if call is not None and call.root == root and call.listing is not None:
        listing, call.listing = call.listing, None
        if valid(listing.started_ns, call.arrived_ns):
            return listing
        listing.close()
    return Ahead(root)


def now() -> int:
    """The time a call arrived, as :func:`serving` takes it."""
    return time.monotonic_ns()


__all__ = ["ahead", "now", "serving", "start", "valid"]
