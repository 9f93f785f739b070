"""Shared fixtures: the real-world corpus (``tests/fixtures/corpus``, vendored from Memzoi) and helpers."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
#: The copy of the real corpus the repository carries (source and licence in its README.md).
VENDORED_CORPUS = ROOT / "tests" / "fixtures" / "corpus"


def _corpus_folder() -> Path:
    """``$MEMZOI_CORPUS`` when set; else the workplace's shared corpus beside the project (``../shared/corpus``, which
    may hold more versions of the files) when it is there; else the vendored copy, so that a fresh clone runs every
    corpus test."""
    if os.environ.get("MEMZOI_CORPUS"):
        return Path(os.environ["MEMZOI_CORPUS"])
    shared = ROOT.parent / "shared" / "corpus"
    return shared if shared.is_dir() else VENDORED_CORPUS


CORPUS = _corpus_folder()


def corpus_or_skip() -> Path:
    """The corpus folder; skips only when ``$MEMZOI_CORPUS`` names a folder that does not exist."""
    if not CORPUS.is_dir():
        pytest.skip(f"corpus not found at {CORPUS} (MEMZOI_CORPUS names a missing folder)")
    return CORPUS


@pytest.fixture
def corpus() -> Path:
    """Path of the real corpus (see :func:`_corpus_folder`)."""
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
