"""A temporary git repository seeded from the shared corpus, and a CLI runner."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from memzoi.base.runtime import git_env
from memzoi.cli.main import main

from .. import builders
from ..conftest import corpus_or_skip

PENDING = ".memzoi/proposals/pending"
TARGET_ID = "semantic/decisions/auth-client-validation"
#: The record the corpus's supersede and tombstone examples target (CRLF: :func:`seed` checks a rewrite keeps it).
TARGET = builders.record(
    TARGET_ID,
    title="Client auth state is enough for protected routes",
    timestamp="2026-07-01T00:00:00Z",
    updated="2026-07-02T00:00:00Z",
    confidence=0.8,
    tags=["auth"],
    description=None,
    origin={"origin_key": "repository-record:auth-client-validation", "route": "repository_materialization"},
    body="Protected routes may trust the client's auth state.",
    newline="\r\n",
)


def seed(root: Path) -> Path:
    """Copy the corpus's canonical records and example proposals into ``root`` (a fresh git repository).

    The example packets are project-scoped without a project id, which Memzoi's git-plane gate refuses; the
    seed switches them to ``scope.kind: repo`` (originals stay available under ``originals/``). The record the
    supersede and tombstone examples target is written here (it is not in the corpus), with CRLF line endings
    to check that a rewrite keeps them.
    """
    corpus = corpus_or_skip()
    root.mkdir(parents=True, exist_ok=True)
    subprocess.run(["git", "init", "-q", "--template=", str(root)], check=True, env=git_env())
    # Plain copies: the shared corpus is read-only, a working repository is not.
    shutil.copytree(corpus / "memzoi-repo" / ".memzoi", root / ".memzoi", copy_function=shutil.copyfile)
    pending = root / PENDING
    pending.mkdir(parents=True)
    originals = root / "originals"
    originals.mkdir()
    for p in sorted((corpus / "examples" / "proposals").glob("*.md")):
        data = p.read_bytes()
        (originals / p.name).write_bytes(data)
        (pending / p.name).write_bytes(data.replace(b"\n  kind: project\n", b"\n  kind: repo\n"))
    target = root / ".memzoi" / "records" / f"{TARGET_ID}.md"
    target.parent.mkdir(parents=True)
    target.write_bytes(TARGET.encode())
    return root


@pytest.fixture
def repo(tmp_path, monkeypatch) -> Path:
    """A seeded repository with its own runtime home."""
    monkeypatch.setenv("MEMZOI_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("MEMZOI_ACTOR", "reviewer")
    return seed(tmp_path / "repo")


class Cli:
    """Runs ``memzoi`` in-process against one repository; ``json`` commands return the parsed output."""

    def __init__(self, root: Path, capsys) -> None:
        self.root = root
        self.capsys = capsys

    def __call__(self, *argv: str) -> tuple[int, dict]:
        self.capsys.readouterr()
        code = main([*argv, "--root", str(self.root), "--json"])
        out = self.capsys.readouterr().out
        return code, json.loads(out)


@pytest.fixture
def cli(repo, capsys) -> Cli:
    """CLI runner bound to the seeded repository."""
    return Cli(repo, capsys)


@pytest.fixture
def umask_022():
    """The process's umask set to 022 for the test (the common default), then put back."""
    old = os.umask(0o022)
    yield
    os.umask(old)
