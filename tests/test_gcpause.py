"""The start-up pause of the cyclic garbage collector (``memzoi.base.gcpause``): paused, nothing is collected;
resumed, one collection frees what the pause kept, the survivors are frozen and the collector runs again; a
collector disabled by someone else is left alone."""

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


def _cycle() -> weakref.ref[Node]:
    a, b = Node(), Node()
    a.other, b.other = b, a
    return weakref.ref(a)


def test_a_cycle_made_during_the_pause_lives_until_resume_frees_it(collector: None) -> None:
    assert gcpause.pause() is True
    assert not gc.isenabled() and gcpause.paused()
    ref = _cycle()
    for _ in range(20_000):  # allocations that would trigger automatic collections
        _ = [[] for _ in range(3)]
    assert ref() is not None, "an automatic collection ran during the pause"
    found = gcpause.resume()
    assert found is not None and found >= 2
    assert ref() is None, "resume did not collect the start-up's garbage"
    assert gc.isenabled() and not gcpause.paused()
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
