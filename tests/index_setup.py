"""The set-up the index's freshness tests share (``tests/test_index_freshness.py``, ``tests/test_index_inputs.py``),
over the project of ``tests/mcp/conftest.py``: the freshness rule's racy window and sample held still
(:func:`closed`), another build of the tool (:func:`another_build`), the same-size edit of the build-tool record
(:func:`same_size_edit`), a project-scoped record (:func:`scoped`), git run in the project (:func:`git`) and
``memzoi search --json`` (:func:`cli_records`)."""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from memzoi.base import freshness
from memzoi.base.runtime import git_env
from memzoi.cli.main import main
from memzoi.stores import toolstamp

from . import builders

#: The build tool the project's fact record names, and the one an edit puts in its place (the same length).
OLD, NEW = "hatch", "flitz"
#: A warning record scoped to the project ``demo`` (:func:`scoped`).
SCOPED = "warnings/scoped"


@pytest.fixture
def closed(monkeypatch: pytest.MonkeyPatch) -> None:
    """Racy window closed, no sampling, a file system that keeps its ctime (a test may replace the type)."""
    monkeypatch.setattr(freshness, "RACY_NS", -1)
    monkeypatch.setattr(freshness, "SAMPLE_SHARE", 0)
    monkeypatch.setattr(freshness, "fs_type", lambda dev: "ext4")


@pytest.fixture
def another_build(monkeypatch: pytest.MonkeyPatch) -> Iterator[Callable[[], None]]:
    """Calling it makes the tool's stamp that of another build of the same version (until the test ends)."""

    def change() -> None:
        toolstamp.tool_stamp.cache_clear()
        monkeypatch.setattr(toolstamp, "source_digest", lambda top, store=None: "another build of the same version")

    yield change
    toolstamp.tool_stamp.cache_clear()


def fact(project: Path) -> Path:
    """The project's build-tool record (it names :data:`OLD`)."""
    return next(project.glob(".memzoi/records/**/build-tool.md"))


def renamed(text: str) -> str:
    """``text`` with the build tool renamed in the title and the body (the same size)."""
    return builders.edit(builders.edit(text, f"uses {OLD}", f"uses {NEW}"), f"with {OLD} build", f"with {NEW} build")


def same_size_edit(path: Path, *, keep_mtime: bool = True) -> None:
    """Rename the build tool in the record at ``path``: the same size, and (``keep_mtime``) the same mtime."""
    st = path.stat()
    text = path.read_text(encoding="utf-8")
    path.write_text(renamed(text), encoding="utf-8")
    assert path.stat().st_size == st.st_size
    if keep_mtime:
        os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))


def scoped(project: Path) -> None:
    """Write the warning record :data:`SCOPED` (scoped to the project ``demo``, applying to ``src``), and make
    ``demo`` the project's id."""
    text = builders.record(
        SCOPED,
        type="warning",
        title="Scoped warning about zebrafish",
        body="Scoped body.",
        applies_to=["src"],
        confidence=0.9,
        timestamp="2026-07-01T00:00:00Z",
        description=None,
        scope="project",
        scope_id="demo",
    )
    builders.write(project, builders.record_path(SCOPED), text)
    (project / ".memzoi/config.toml").write_text('[project]\nid = "demo"\n')


def git(project: Path, *args: str) -> None:
    """Run ``git args…`` in ``project`` (a throwaway identity; the environment the core runs git with)."""
    subprocess.run(
        ["git", "-c", "user.email=t@example.invalid", "-c", "user.name=t", *args],
        cwd=project,
        env=git_env(),
        check=True,
        capture_output=True,
    )


def cli_records(capsys: pytest.CaptureFixture[str], project: Path, word: str) -> dict[str, dict]:
    """``memzoi search WORD --json``'s records by id, best first."""
    capsys.readouterr()
    assert main(["search", "--root", str(project), word, "--json", "--no-progress"]) == 0
    return {r["id"]: r for r in json.loads(capsys.readouterr().out)["records"]}
