"""Fixtures of the resident-memory tests: a project with ``.memzoi/``, and the runtime plane and Zuno's
configuration folder inside ``tmp_path`` (never the host's)."""

from __future__ import annotations

from pathlib import Path

import pytest

from memzoi.judge.config import clear_cache


@pytest.fixture
def project(tmp_path, monkeypatch) -> Path:
    """A project root (``.memzoi/config.toml`` present, so it is found from its folders); ``MEMZOI_HOME`` and
    ``ZUNO_CONFIG_DIR`` point into ``tmp_path``."""
    monkeypatch.setenv("MEMZOI_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("ZUNO_CONFIG_DIR", str(tmp_path / "zuno"))
    monkeypatch.setenv("MEMZOI_ACTOR", "tester")
    root = tmp_path / "proj"
    (root / ".memzoi").mkdir(parents=True)
    (root / ".memzoi" / "config.toml").write_text('[project]\nid = "proj"\n', encoding="utf-8")
    clear_cache()
    yield root
    clear_cache()


def configure(root: Path, text: str) -> None:
    """Append ``text`` (TOML) to the project's configuration."""
    path = root / ".memzoi" / "config.toml"
    path.write_text(path.read_text(encoding="utf-8") + text, encoding="utf-8")
    clear_cache()


def rules(root: Path) -> Path:
    """The project resident file."""
    return root / ".zuno" / "RULES.md"
