"""The index stores no path that bears a secret in its ``meta`` table: a listing mark whose folders bear one is not
kept (the project is then compared in full, with the same answers), and the project root is stored as
``<redacted-path:…>`` when a name of it bears one. Canaries are built at run time (:mod:`tests.canaries`)."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from memzoi.base import freshness
from memzoi.judge.pathsafety import REDACTED_PREFIX
from memzoi.stores import currentlisting
from memzoi.stores.index import Index

from . import builders
from .canaries import assert_not_stored, canary
from .test_current_listing import ahead_of, found_of


@pytest.fixture(autouse=True)
def _trusting(monkeypatch):
    """The racy window closed, no sample, ext4: a refresh that keeps every file leaves its mark."""
    monkeypatch.setattr(freshness, "RACY_NS", 0)
    monkeypatch.setattr(freshness, "SAMPLE_SHARE", 0)
    monkeypatch.setattr(freshness, "fs_type", lambda dev: "ext4")


def _project(root: Path, folder: str) -> None:
    builders.write(root, builders.record_path("top"), builders.record("top", title="Top"))
    builders.write(root, builders.record_path(f"{folder}/inner"), builders.record(f"{folder}/inner", title="Inner"))


def _refreshed(root: Path, db: Path) -> tuple[str | None, str]:
    """Build and refresh the index three times; the stored mark and ``project_root``."""
    with Index(root, path=db, workers=1) as ix:
        ix.rebuild()
        for _ in range(3):
            ix.refresh(walked=ahead_of(found_of(root)))
        mark = ix.db.execute("SELECT value FROM meta WHERE key = ?", (currentlisting.KEY,)).fetchone()
        stored = ix.db.execute("SELECT value FROM meta WHERE key = 'project_root'").fetchone()[0]
        hits = ix.search("Inner")
    assert len(hits) == 1  # the record in the folder is indexed and found either way
    return (mark[0] if mark else None), stored


def test_a_plain_folder_keeps_the_mark(tmp_path):
    root = (tmp_path / "proj").resolve()
    _project(root, "plain")
    mark, stored = _refreshed(root, tmp_path / "home" / "index.db")
    assert mark is not None and str(root / ".memzoi" / "records" / "plain") in mark
    assert stored == str(root)


def test_a_secret_bearing_folder_is_not_kept_in_the_mark(tmp_path):
    secret = canary()
    root = (tmp_path / "proj").resolve()
    _project(root, f"k-{secret}")
    db = tmp_path / "home" / "index.db"
    mark, _ = _refreshed(root, db)
    assert mark is None
    with Index(root, path=db, workers=1) as ix:  # still current: nothing to re-index
        assert ix.refresh(walked=ahead_of(found_of(root))).files == 0
        assert currentlisting.holds(ix.db, currentlisting.digest(found_of(root)), time.time_ns()) is None
    assert assert_not_stored(tmp_path / "home", secret) == 1


def test_a_secret_bearing_project_root_is_stored_redacted(tmp_path):
    secret = canary()
    root = (tmp_path / f"ws-{secret}").resolve()
    _project(root, "plain")
    _, stored = _refreshed(root, tmp_path / "home" / "index.db")
    assert stored.startswith(REDACTED_PREFIX)
    assert assert_not_stored(tmp_path / "home", secret) == 1
