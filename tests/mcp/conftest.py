"""A fresh git project with two reviewed records (a warning bound to ``src/auth`` and a fact) and its own
runtime home, for the agent core and the MCP server."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from memzoi.base.runtime import git_env

from .. import builders

WARNING_ID = "warnings/auth-refresh"
FACT_ID = "facts/build-tool"


def write_record(root: Path, rid: str, *, type: str, title: str, body: str, applies: str) -> Path:
    """Write a current-profile record ``rid`` under ``.memzoi/records/``."""
    text = builders.record(
        rid,
        type=type,
        title=title,
        body=body,
        applies_to=[applies],
        confidence=0.9,
        timestamp="2026-07-01T00:00:00Z",
        description=None,
    )
    return builders.write(root, builders.record_path(rid), text)


def make_project(root: Path) -> Path:
    """A git repository with ``.memzoi/`` (records and an empty pending folder) and two records."""
    root.mkdir(parents=True)
    subprocess.run(["git", "init", "-q", "--template=", str(root)], check=True, env=git_env())
    (root / ".memzoi" / "proposals" / "pending").mkdir(parents=True)
    write_record(
        root,
        WARNING_ID,
        type="warning",
        title="Session refresh races in the auth module",
        body="Two tabs refreshing at once can log the user out; serialise refreshes through the lock.",
        applies="src/auth",
    )
    write_record(
        root,
        FACT_ID,
        type="fact",
        title="The build uses hatch",
        body="Run the build with hatch build; setup.py is gone.",
        applies="pyproject.toml",
    )
    return root


@pytest.fixture
def home(tmp_path, monkeypatch) -> Path:
    """``MEMZOI_HOME`` for the test (the runtime plane: ledger and index)."""
    h = tmp_path / "home"
    monkeypatch.setenv("MEMZOI_HOME", str(h))
    monkeypatch.setenv("MEMZOI_ACTOR", "reviewer")
    return h


@pytest.fixture
def project(tmp_path, home) -> Path:
    """A fresh project (see :func:`make_project`)."""
    return make_project(tmp_path / "repo").resolve()


def draft_args(**over) -> dict:
    """Valid ``propose_memory`` arguments, with overrides."""
    args = {
        "title": "Token refreshes go through RefreshLock",
        "body": "Every token refresh takes RefreshLock first; without it two tabs race and log the user out.",
        "type": "procedure",
        "lane": "procedural",
        "reason": "fixed the same race twice",
        "confidence": 0.8,
        "applies_to": ["src/auth/**"],
    }
    args.update(over)
    return args


def all_bytes(folder: Path) -> bytes:
    """Every byte of every file under ``folder`` (SQLite WAL and journal files included)."""
    return b"".join(p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file())
