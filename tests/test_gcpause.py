"""The start-up pause of the cyclic garbage collector's full collections (``memzoi.base.gcpause``): paused, the
oldest generation is never collected but the young ones are (the start-up's garbage is freed as it is made:
issue 29, peak RSS); resumed, one full collection frees what the oldest generation kept, the survivors are frozen
and the thresholds are as they were; a collector disabled by someone else is left alone; held (a cold scan), no
automatic collection runs until resume frees what the hold kept."""

from __future__ import annotations

import gc
import weakref
from collections.abc import Iterator

import pytest

from memzoi.base import gcpause


class Node:
    """An object that can sit in a reference cycle and be watched through a weak reference."""

    def __init__(self) -> None:
        self.other: Node | None = None


@pytest.fixture
def collector() -> Iterator[None]:
    """Leave the test process's collector as it was: enabled, nothing frozen, no pause left."""
    assert gc.isenabled()
    frozen = gc.get_freeze_count()
    yield
    gcpause.resume()
    gc.enable()
    if gc.get_freeze_count() > frozen:
        gc.unfreeze()


def _cycle() -> tuple[list[Node], weakref.ref[Node]]:
    """A two-node cycle held by a list (drop the list's item to make it garbage), and a weak reference to it."""
    a, b = Node(), Node()
    a.other, b.other = b, a
    return [a], weakref.ref(a)


def _allocate() -> None:
    """Allocations that trigger automatic collections of the young generations: 20,000 lists kept at once (CPython
    counts allocations minus deallocations of tracked objects)."""
    kept = [[] for _ in range(20_000)]
    assert len(kept) == 20_000


def test_young_garbage_made_during_the_pause_is_freed_without_a_full_collection(collector: None) -> None:
    full = gc.get_stats()[2]["collections"]
    assert gcpause.pause() is True
    assert gc.isenabled() and gcpause.paused()
    held, ref = _cycle()
    held.clear()
    _allocate()
    assert ref() is None, "the young generations were not collected during the pause"
    assert gc.get_stats()[2]["collections"] == full, "a full collection ran during the pause"


def test_old_garbage_lives_until_resume_frees_it(collector: None) -> None:
    thresholds = gc.get_threshold()
    assert gcpause.pause() is True
    held, ref = _cycle()
    gc.collect(1)  # the cycle survives the young generations: it is in the oldest one now
    held.clear()
    _allocate()
    assert ref() is not None, "a full collection ran during the pause"
    found = gcpause.resume()
    assert found is not None and found >= 2
    assert ref() is None, "resume did not collect the oldest generation"
    assert gc.isenabled() and not gcpause.paused()
    assert gc.get_threshold() == thresholds, "the thresholds are not as they were"
    assert gc.get_freeze_count() > 0, "the survivors were not frozen"


def test_resume_without_a_pause_does_nothing(collector: None) -> None:
    frozen = gc.get_freeze_count()
    assert gcpause.resume() is None
    assert gc.isenabled() and gc.get_freeze_count() == frozen


def test_a_collector_disabled_by_someone_else_stays_disabled(collector: None) -> None:
    gc.disable()
    assert gcpause.pause() is False
    assert gcpause.resume() is None
    assert not gc.isenabled()


def test_a_second_pause_keeps_the_first_thresholds(collector: None) -> None:
    thresholds = gc.get_threshold()
    assert gcpause.pause() is True
    assert gcpause.pause() is False
    gcpause.resume()
    assert gc.get_threshold() == thresholds


def test_held_no_automatic_collection_runs_until_resume_frees_the_garbage(collector: None) -> None:
    thresholds = gc.get_threshold()
    young = gc.get_stats()[0]["collections"]
    assert gcpause.pause() is True
    assert gcpause.hold() is True
    held, ref = _cycle()
    held.clear()
    _allocate()
    assert ref() is not None, "an automatic collection ran while the collector was held"
    assert gc.get_stats()[0]["collections"] == young, "a young collection ran while the collector was held"
    assert gcpause.resume() is not None
    assert ref() is None, "resume did not collect what the hold kept"
    assert gc.isenabled() and not gcpause.paused()
    assert gc.get_threshold() == thresholds, "the thresholds are not as they were"


def test_hold_without_a_pause_leaves_the_collector_alone(collector: None) -> None:
    thresholds = gc.get_threshold()
    assert gcpause.hold() is False
    assert gc.get_threshold() == thresholds
    held, ref = _cycle()
    held.clear()
    _allocate()
    assert ref() is None, "the young generations were not collected"
