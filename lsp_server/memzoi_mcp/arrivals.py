"""Tool calls as the server reads them (issue 29: the first ``search_memory`` of a session at 50,000 records): the
time each ``tools/call`` request arrived and find's listing of the project served with ``--root``, started as soon as
its line is read, before the line is checked (:func:`memzoi_mcp.framing.triage`, whose first check imports the
arguments' models) and handed to the SDK. The call's handler takes both by its request id (:meth:`Arrivals.take`;
:mod:`memzoi.stores.calllisting` decides whether its refresh may use the listing). A listing no handler takes (a line
the check refuses, a request the SDK answers itself) is stopped: at once, when more than :data:`KEPT` wait, or when
the server ends.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from memzoi.stores.findlisting import Ahead

#: Calls read and not yet taken by their handler, at most (the oldest listing is stopped beyond).
KEPT = 8


class Arrivals:
    """The ``tools/call`` requests read and not yet handled: request id → (arrival time, listing). ``start`` starts
    the listing of a call that has just arrived (``None``: none for this server). Thread-safe."""

    def __init__(self, start: Callable[[], Ahead | None]) -> None:
        self._start = start
        self._lock = threading.Lock()
        self._calls: dict[str | int, tuple[int, Ahead | None]] = {}

    def read(self, line: str) -> str | int | None:
        """Note a line just read: for a ``tools/call`` request, its arrival (``time.monotonic_ns``) and listing;
        returns its id (``None`` for any other line). Any other request with the id of a noted call forgets that
        call (its handler never comes: it is not handed an arrival from before this line). Never raises."""
        call, others = _requests(line)
        if call is None:
            with self._lock:
                stale = [self._calls.pop(i, (0, None))[1] for i in others]
            _close(stale)
            return None
        arrived = time.monotonic_ns()
        try:
            listing = self._start()
        except Exception:  # the call's refresh starts its own
            listing = None
        with self._lock:
            stale = [self._calls.pop(call, (0, None))[1]]
            self._calls[call] = (arrived, listing)
            while len(self._calls) > KEPT:
                stale.append(self._calls.pop(next(iter(self._calls)))[1])
        _close(stale)
        return call

    def take(self, rid: object) -> tuple[int, Ahead | None] | None:
        """The arrival time and listing of the call ``rid`` (once), or ``None`` when it was not noted."""
        with self._lock:
            return self._calls.pop(rid, None) if isinstance(rid, (str, int)) else None

    def drop(self, rid: str | int) -> None:
        """Forget the call ``rid`` (its line was refused) and stop its listing."""
        with self._lock:
            noted = self._calls.pop(rid, None)
        _close([noted[1] if noted else None])

    def close(self) -> None:
        """Stop every listing not taken."""
        with self._lock:
            noted, self._calls = list(self._calls.values()), {}
        _close([listing for _, listing in noted])


def _requests(line: str) -> tuple[str | int | None, list[str | int]]:
    """The id of the ``tools/call`` request ``line`` holds (``None``: none), and the ids of the other requests it
    holds (another method, or requests in a batch). Never raises."""
    # The cheap test first: most lines are notifications and answers. A JSON string without a backslash is spelt as
    # it reads, so a line with neither an `"id"` nor an escape holds no id.
    if '"id"' not in line and "\\" not in line:
        return None, []
    try:
        obj = json.loads(line)
    except ValueError:
        return None, []
    if isinstance(obj, dict) and obj.get("method") == "tools/call" and _id_of(obj) is not None:
        return _id_of(obj), []
    messages = obj if isinstance(obj, list) else [obj]
    ids = [_id_of(m) for m in messages if isinstance(m, dict) and "method" in m]  # requests, not answers
    return None, [i for i in ids if i is not None]


def _id_of(message: dict[str, object]) -> str | int | None:
    """A JSON-RPC message's id where it is one a request can carry (a string or an integer), else ``None``."""
    rid = message.get("id")
    return rid if isinstance(rid, (str, int)) and not isinstance(rid, bool) else None


def _close(listings: list[Ahead | None]) -> None:
    for listing in listings:
        if listing is not None:
            listing.close()
