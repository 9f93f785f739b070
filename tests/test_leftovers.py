"""What killed processes left in the memzoi home, removed as a language server starts (:mod:`memzoi.runs.leftovers`):
dead writers' temporary files of memzoi's caches and dead owners' folders go; a live writer's file, a live owner's
folder and every other file stay."""

from __future__ import annotations

import fcntl
import os
import time
from pathlib import Path

import pytest

from memzoi.base import answercache, codecache, regexcache
from memzoi.base.ownedfolder import OWNED, OWNER_LOCK, OwnedFolder
from memzoi.base.privatewrite import temp_path
from memzoi.base.runtime import HOME_FILE_PREFIX
from memzoi.runs import leftovers
from memzoi.safety import prefilter_cache
from memzoi.stores import toolstamp

from .test_privatewrite import dead_pid


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    h = tmp_path / "home"
    (h / "cache").mkdir(parents=True)
    monkeypatch.setenv("MEMZOI_HOME", str(h))
    monkeypatch.delenv("XDG_RUNTIME_DIR", raising=False)
    return h


def _file(path: Path, age: float = 60) -> Path:
    path.write_bytes(b"partial")
    t = time.time() - age
    os.utime(path, (t, t))
    return path


def test_dead_processes_leftovers_go_and_nothing_else(home: Path):
    dead = dead_pid()
    cache = home / "cache"
    gone = [
        _file(home / f"{HOME_FILE_PREFIX}{toolstamp.FAMILY}0123.json.{dead}.tmp"),
        _file(temp_path(home / f"{HOME_FILE_PREFIX}{toolstamp.FAMILY}4567.json")),
        _file(cache / f".{answercache.PREFIX}0123.{dead}.tmp"),
        _file(temp_path(cache / f"{codecache.FILE_PREFIX}0123.marshal")),
        _file(temp_path(cache / f"{regexcache.FILE_PREFIX}0123.marshal")),
        _file(temp_path(cache / f"{prefilter_cache.FILE_PREFIX}0123.marshal")),
    ]
    kept = [
        _file(cache / f".other-0123.marshal.{dead}.tmp"),  # another program's name
        _file(home / f".{codecache.FILE_PREFIX}0123.marshal.{dead}.tmp"),  # not in the cache folder
        _file(home / "pymp-abcdefgh"),
        _file(cache / f"{codecache.FILE_PREFIX}0123.marshal"),
    ]
    live = _file(temp_path(cache / f"{codecache.FILE_PREFIX}89ab.marshal"))
    held = os.open(live, os.O_RDONLY)
    fcntl.flock(held, fcntl.LOCK_EX)  # a live writer holds its temporary file's lock
    mine = OwnedFolder("forkserver-")  # a live owner's
    (home / OWNED / "forkserver-unlocked").mkdir()  # made, never locked: nobody's
    try:
        assert sorted(leftovers.sweep()) == sorted([p.name for p in gone] + ["forkserver-unlocked"])
        assert [p.exists() for p in [*gone, *kept, live]] == [False] * len(gone) + [True] * (len(kept) + 1)
        assert (Path(mine.path) / OWNER_LOCK).exists()
    finally:
        os.close(held)
        mine.close()
    assert leftovers.sweep() == [live.name]  # its writer is gone now


def test_a_start_sweeps_once_per_process_and_costs_a_stat_without_a_home(tmp_path: Path, monkeypatch):
    monkeypatch.setenv("MEMZOI_HOME", str(tmp_path / "absent"))
    monkeypatch.delenv("XDG_RUNTIME_DIR", raising=False)
    calls: list[int] = []
    monkeypatch.setattr(leftovers, "sweep", lambda: calls.append(1) or [])
    leftovers.sweep_once.cache_clear()
    leftovers.sweep_once()
    leftovers.sweep_once()
    assert calls == [1]
    leftovers.sweep_once.cache_clear()
    monkeypatch.undo()
    monkeypatch.setenv("MEMZOI_HOME", str(tmp_path / "absent"))
    assert leftovers.sweep() == []
    assert not (tmp_path / "absent").exists()  # nothing made where there was nothing
