"""Shared fixtures: the real-world corpus beside the project (``../shared/corpus``) and helpers."""

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
