"""Python's cyclic garbage collector held off while a server starts (issue 29, start-up: first diagnostics).

Importing the protocol libraries and the analysis stack creates some 70,000 long-lived objects (classes,
functions, compiled patterns); the collector, triggered by those allocations, walks them again and again while
nothing they hold can be garbage yet (measured: 60–70 ms of the ~480 ms CPU a language server spends before its
first diagnostics). The server therefore pauses the collector when its process starts (:func:`pause`) and resumes
it once its start-up is over (:func:`resume`): one full collection frees the start-up's own garbage (the
classes attrs replaces by their slotted copies, about 8 MB), then ``gc.freeze`` moves the survivors into the
permanent generation (CPython's advice for servers: later full collections no longer walk the modules), and the
collector runs as usual from then on. Nothing is kept that a collection would have freed.

Only a process that paused the collector resumes it; :func:`resume` is a no-op otherwise (a server made inside
a test process leaves that process's collector alone).
"""

from __future__ import annotations

import gc

_paused = False


def pause() -> bool:
    """Disable the cyclic collector for the start-up; returns whether this call paused it (``False`` when it was
    disabled already, by this module or by someone else: then :func:`resume` leaves it as it is)."""
    global _paused
    if not gc.isenabled():
        return False
    gc.disable()
    _paused = True
    return True


def paused() -> bool:
    """Whether the collector is held off by :func:`pause` (and not yet resumed)."""
    return _paused


def resume() -> int | None:
    """End the start-up pause: collect once, freeze what survives, enable the collector. Returns the number of
    unreachable objects the collection found, or ``None`` when :func:`pause` had not paused it (nothing done)."""
    global _paused
    if not _paused:
        return None
    _paused = False
    found = gc.collect()
    gc.freeze()
    gc.enable()
    return found


__all__ = ["pause", "paused", "resume"]
