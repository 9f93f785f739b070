"""Python's full garbage collections held off while a server starts (issue 29, start-up: first diagnostics).

Importing the protocol libraries and the analysis stack creates some 70,000 long-lived objects (classes,
functions, compiled patterns); full collections, triggered by those allocations, walk them again and again while
nothing they hold can be garbage yet (measured: 60–70 ms of the ~480 ms CPU a language server spends before its
first diagnostics). The server therefore holds off the collections of the oldest generation when its process
starts (:func:`pause`) and lets them run again once its start-up is over (:func:`resume`): one full collection,
then ``gc.freeze`` moves the survivors into the permanent generation (CPython's advice for servers: later full
collections no longer walk the modules), and the collector runs as usual from then on.

The young generations are still collected during the pause: the start-up's own garbage (the classes attrs replaces
by their slotted copies, the scan's short-lived cycles) is freed as it is made. Held until :func:`resume`, that
garbage cost the server's peak RSS 7–8 MB at 10,000 records (issue 29, target ≤ 120 MB: 122.6 MB cold and
120.8 MB warm with the collector disabled, 115.2 / 111.6 MB without the pause, interleaved): its memory, freed in
one collection after other objects had been placed around it, was not all used again. Only the full collections
cost the start-up its CPU. Nothing is kept that a collection would have freed.

A cold scan holds every automatic collection off (:func:`hold`) from its first chunk of results until the pause
ends once every file is published: the results it takes in are kept and acyclic, and the young generations'
collections, triggered by unpickling them, walked them for nothing (measured at 10,000 records, 3 interleaved cold
sessions: the server process's collector time 0.205–0.213 s → 0.137–0.145 s, its CPU 2.78–2.95 s → 2.68–2.80 s,
peak RSS unchanged at 107 MB). The one full collection at :func:`resume` then freezes the scan's results too, so
later full collections do not walk them.

Only a process that paused the collector resumes it; :func:`resume` is a no-op otherwise (a server made inside
a test process leaves that process's collector alone).
"""

from __future__ import annotations

import gc

#: The oldest generation's threshold during the pause: a full collection waits for this many collections of the
#: middle generation (CPython collects the oldest generation when its count exceeds its threshold); never reached
#: within a start-up.
HELD_OFF = 1 << 30

_paused: tuple[int, int, int] | None = None  # the thresholds the pause replaced


def pause() -> bool:
    """Hold off full collections for the start-up (the young generations are still collected); returns whether
    this call paused them (``False`` when the collector is disabled, by someone else, or already paused: then
    :func:`resume` leaves it as it is)."""
    global _paused
    if not gc.isenabled() or _paused is not None:
        return False
    _paused = gc.get_threshold()
    gc.set_threshold(_paused[0], _paused[1], HELD_OFF)
    return True


def hold() -> bool:
    """During the pause, hold off every automatic collection, the young generations' too (threshold 0, as
    ``memzoi check`` disables the collector for its run), until :func:`resume`: for a cold scan taking in the
    workers' results, whose objects are acyclic and kept (issue 29, cold server scan: the server process's
    collections cost about 0.2 s at 10,000 records). Returns whether it held them (``False`` when :func:`pause`
    had not paused them: the collector is then left as it is)."""
    if _paused is None:
        return False
    gc.set_threshold(0, _paused[1], HELD_OFF)
    return True


def paused() -> bool:
    """Whether full collections are held off by :func:`pause` (and not yet resumed)."""
    return _paused is not None


def resume() -> int | None:
    """End the start-up pause: the thresholds back as they were, one full collection, the survivors frozen. Returns
    the number of unreachable objects the collection found, or ``None`` when :func:`pause` had not paused it
    (nothing done)."""
    global _paused
    if _paused is None:
        return None
    gc.set_threshold(*_paused)
    _paused = None
    found = gc.collect()
    gc.freeze()
    return found


__all__ = ["HELD_OFF", "hold", "pause", "paused", "resume"]
