"""Shared fixtures: the real-world corpus beside the project (``../shared/corpus``) and helpers.

The corpus is Memzoi's own files; its README asks that they are read where they are and never copied into the
project, so a test that needs them skips with the reason where the folder is absent.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
CORPUS = Path(os.environ.get("MEMZOI_CORPUS", ROOT.parent / "shared" / "corpus"))


def corpus_or_skip() -> Path:
    """The corpus folder, or skip the test with the reason when it is absent."""
    if not CORPUS.is_dir():
        pytest.skip(f"shared corpus not found at {CORPUS} (set MEMZOI_CORPUS)")
    return CORPUS


@pytest.fixture
def corpus() -> Path:
    """Path of ``shared/corpus`` (tests skip with a stated reason when it is absent)."""
    return corpus_or_skip()


@pytest.fixture(scope="session", autouse=True)
def _private_homes_for_the_session(tmp_path_factory: pytest.TempPathFactory):
    """The test run never writes to the user's runtime home (``~/.memzoi``) or Zuno folder (``~/.config/zuno``):
    both point into the session's temporary folder, so that session- and module-scoped fixtures and every process a
    test starts inherit them. Tests that need a particular home still set their own."""
    base = tmp_path_factory.mktemp("private-homes")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("MEMZOI_HOME", str(base / "memzoi"))
        mp.setenv("ZUNO_CONFIG_DIR", str(base / "zuno"))
        yield


@pytest.fixture(autouse=True)
def _private_homes_per_test(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    """A fresh runtime home and Zuno folder for each test (the session's are only a backstop)."""
    base = tmp_path_factory.mktemp("home")
    monkeypatch.setenv("MEMZOI_HOME", str(base / "memzoi"))
    monkeypatch.setenv("ZUNO_CONFIG_DIR", str(base / "zuno"))


@pytest.fixture
def runtime_project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A project folder with an empty ``.memzoi/records`` (no git) and its own runtime home at ``tmp_path/home``."""
    monkeypatch.setenv("MEMZOI_HOME", str(tmp_path / "home"))
    root = tmp_path / "repo"
    (root / ".memzoi" / "records").mkdir(parents=True)
    return root
