"""This checkout's ledger kept in another runtime folder: a moved repository's (the runtime folder follows the git
common dir's path) and the one kept while git refused the repository (``safe.directory``: keyed as outside git).
``memzoi history`` and ``memzoi doctor`` name it; ``memzoi reconcile --adopt`` brings it over, only into a ledger
that holds nothing, never from a copy of the repository that still uses it, and never writes the old folder."""

from __future__ import annotations

import os
import shlex
import shutil
import sqlite3
import subprocess
from pathlib import Path

import pytest

from memzoi.base import checkout, runtime
from memzoi.base.checkout import MARKER
from memzoi.base.ledgerfind import MOVED, OUTSIDE_GIT, find_ledgers
from memzoi.base.runtime import LEDGER_DB, git_env, memzoi_home, outside_git_key, project_runtime_dir
from memzoi.cli.main import main
from memzoi.ledger import Refusal, history, store, undo_change
from memzoi.ledger.adopt import adopt_ledger
from memzoi.lifecycle import apply_proposal
from memzoi.runs.doctor import diagnose

from .. import builders
from ..test_git_ownership import refusing_git
from .conftest import Cli

PACKET = builders.packet_path("mem-new")
OTHER = builders.packet_path("mem-two")


def _restart() -> None:
    """Forget what this process cached about project paths, as a new process would."""
    runtime._cached_keys.cache_clear()
    store._runtime_dir.cache_clear()
    checkout._marker.cache_clear()


@pytest.fixture
def root(tmp_path, monkeypatch) -> Path:
    monkeypatch.setenv("MEMZOI_HOME", str(tmp_path / "home"))
    repo = tmp_path / "repo"
    subprocess.run(["git", "init", "-q", "--template=", str(repo)], check=True, env=git_env())
    builders.write(repo, PACKET, builders.packet("mem-new", title="Prefer composition", body="Prefer composition."))
    builders.write(repo, OTHER, builders.packet("mem-two", title="Two", body="Two."))
    return repo


def _tree(d: Path) -> dict[str, bytes]:
    """Every file under ``d`` with its bytes (what "the old folder is kept, untouched" compares)."""
    return {str(p.relative_to(d)): p.read_bytes() for p in sorted(d.rglob("*")) if p.is_file()}


def _elsewhere(root: Path) -> list[dict[str, str]]:
    return [c for c in diagnose(root)["checks"] if c["name"] == "ledger_elsewhere"]


def test_a_moved_repository_is_told_of_its_ledger_and_adopts_it(root, tmp_path, capsys):
    first = apply_proposal(root, "mem-new", actor="r").change_id
    old = project_runtime_dir(root)
    moved = tmp_path / "moved"
    root.rename(moved)
    _restart()
    kept = _tree(old)
    assert history(moved) == []
    cli = Cli(moved, capsys)

    code, out = cli("history")
    assert code == 0 and out["changes"] == []
    [found] = out["ledgers_elsewhere"]
    assert found["runtime_dir"] == str(old) and found["why"] == MOVED and found["changes"] == 1
    assert found["project"] == str(root) and found["copy_of"] is None and found["newest"]
    [note] = out["checkout_notes"]
    assert "before the repository moved" in note and str(old) in note and "1 change(s)" in note
    assert f"memzoi reconcile --adopt {shlex.quote(str(old))}" in note
    [check] = _elsewhere(moved)
    assert check["status"] == "warning" and str(old) in check["message"]
    assert any("--adopt" in s for s in diagnose(moved)["next_steps"])

    killed = project_runtime_dir(moved) / f".{LEDGER_DB}.adopt-0123456789ab.tmp"  # a killed adoption's copy
    killed.parent.mkdir(parents=True, exist_ok=True)
    killed.write_bytes(b"partial")
    code, out = cli("reconcile", "--adopt", str(old))
    assert code == 0 and out["adopted"]["changes"] == 1 and out["adopted"]["from"] == str(old)
    assert not killed.exists()
    assert _tree(old) == kept  # the old folder: not a byte written, nothing made beside it
    assert [c.id for c in history(moved)] == [first]
    assert not [p for p in project_runtime_dir(moved).iterdir() if ".adopt-" in p.name]
    # adopted: no longer reported, and the change made before the move can be undone here
    assert _elsewhere(moved) == []
    code, out = cli("history")
    assert "ledgers_elsewhere" not in out and "checkout_notes" not in out
    assert undo_change(moved, first, actor="r").status == "undone"
    assert (moved / PACKET).is_file()
    second = apply_proposal(moved, "mem-two", actor="r").change_id  # numbered after the adopted ones
    assert [c.id for c in history(moved)] == [second, first]
    # a second adoption finds nothing to take
    with pytest.raises(Refusal) as refused:
        adopt_ledger(moved, old)
    assert refused.value.code == "ledger_not_found"


def test_adoption_refuses_a_ledger_that_already_holds_changes(root, tmp_path, capsys):
    apply_proposal(root, "mem-new", actor="r")
    old = project_runtime_dir(root)
    moved = tmp_path / "moved"
    root.rename(moved)
    _restart()
    second = apply_proposal(moved, "mem-two", actor="r").change_id
    [check] = _elsewhere(moved)
    assert check["status"] == "ok" and "already holds changes" in check["message"]
    code, out = Cli(moved, capsys)("reconcile", "--adopt", str(old))
    assert code == 1 and out["error"]["code"] == "ledger_not_empty"
    assert [c.id for c in history(moved)] == [second]


def test_a_copy_never_takes_its_originals_ledger(root, tmp_path, capsys):
    """``cp -a`` copies the checkout's id: the copy finds the original's ledger bound to it, but the place that
    ledger records still holds the id, so it is the original's (named, never adopted). Once the original is gone,
    the copy is what is left of it and may take it."""
    first = apply_proposal(root, "mem-new", actor="r").change_id
    old = project_runtime_dir(root)
    copy = tmp_path / "copy"
    shutil.copytree(root, copy, symlinks=True)
    assert (copy / ".git" / MARKER).read_bytes() == (root / ".git" / MARKER).read_bytes()
    _restart()
    [found] = find_ledgers(copy).found
    assert found.copy_of == str(root)
    [check] = _elsewhere(copy)
    assert check["status"] == "ok" and "a copy of this repository" in check["message"]
    code, out = Cli(copy, capsys)("history")  # not this checkout's: history does not name it
    assert code == 0 and "checkout_notes" not in out and "ledgers_elsewhere" not in out
    code, out = Cli(copy, capsys)("reconcile", "--adopt", str(old))
    assert code == 1 and out["error"]["code"] == "ledger_of_a_copy", out
    assert history(copy) == [] and [c.id for c in history(root)] == [first]

    # The copy's own change binds its own ledger to the same id: the original does not take it either.
    copied_change = apply_proposal(copy, "mem-two", actor="r").change_id
    mine = project_runtime_dir(copy)
    [found] = find_ledgers(root).found
    assert found.runtime_dir == mine and found.copy_of == str(copy)
    with pytest.raises(Refusal) as refused:
        adopt_ledger(root, mine)
    assert refused.value.code == "ledger_of_a_copy"
    assert [c.id for c in history(root)] == [first] and [c.id for c in history(copy)] == [copied_change]

    # The original deleted, a fresh copy of it (no change yet) may adopt: nothing else uses that ledger now.
    fresh = tmp_path / "fresh"
    shutil.copytree(root, fresh, symlinks=True)
    shutil.rmtree(root)
    _restart()
    adopted = adopt_ledger(fresh, old)
    assert adopted.changes == 1 and [c.id for c in history(fresh)] == [first]


def test_a_ledger_that_records_no_place_is_adopted_only_when_told_it_moved(root, tmp_path, capsys):
    """A ledger bound before schema 9 and not written since records no place: a move cannot be told from a copy."""
    first = apply_proposal(root, "mem-new", actor="r").change_id
    old = project_runtime_dir(root)
    conn = sqlite3.connect(old / LEDGER_DB)
    conn.execute("UPDATE ledger_checkout SET project_root = NULL, git_common_dir = NULL")
    conn.commit()
    conn.close()
    moved = tmp_path / "moved"
    root.rename(moved)
    _restart()
    [check] = _elsewhere(moved)
    assert check["status"] == "warning" and "records no place" in check["message"]
    assert any("--assume-moved" in s for s in diagnose(moved)["next_steps"])
    cli = Cli(moved, capsys)
    code, out = cli("reconcile", "--adopt", str(old))
    assert code == 1 and out["error"]["code"] == "ledger_place_unknown"
    code, out = cli("reconcile", "--adopt", str(old), "--assume-moved")
    assert code == 0 and out["adopted"]["changes"] == 1
    assert [c.id for c in history(moved)] == [first]


def test_a_written_ledger_of_schema_8_records_its_place(root):
    """Schema 8 → 9 adds the place columns; a ledger bound before them records its place at its next write."""
    apply_proposal(root, "mem-new", actor="r")
    db = project_runtime_dir(root) / LEDGER_DB
    conn = sqlite3.connect(db)
    conn.execute("UPDATE ledger_checkout SET project_root = NULL, git_common_dir = NULL")
    conn.commit()
    conn.close()
    apply_proposal(root, "mem-two", actor="r")
    conn = sqlite3.connect(db)
    [(place, common)] = conn.execute("SELECT project_root, git_common_dir FROM ledger_checkout").fetchall()
    conn.close()
    assert place == str(root.resolve()) and common == str((root / ".git").resolve())


def test_the_ledger_kept_while_git_refused_the_repository_is_named_and_adopted(root, tmp_path, monkeypatch, capsys):
    path = os.environ["PATH"]
    refusing_git(tmp_path, monkeypatch, root)
    _restart()
    first = apply_proposal(root, "mem-new", actor="r").change_id
    refused_dir = project_runtime_dir(root)
    assert refused_dir.name == outside_git_key(root) and (refused_dir / LEDGER_DB).is_file()
    assert any("stay behind" in s and "safe.directory" in s for s in diagnose(root)["next_steps"])
    monkeypatch.setenv("PATH", path)  # the user adds the repository to safe.directory
    _restart()
    assert project_runtime_dir(root) != refused_dir and history(root) == []
    kept = _tree(refused_dir)

    [found] = find_ledgers(root).found
    assert found.why == OUTSIDE_GIT and found.runtime_dir == refused_dir and found.changes == 1
    [check] = _elsewhere(root)
    assert check["status"] == "warning" and "git refused" in check["message"] and str(refused_dir) in check["message"]
    code, out = Cli(root, capsys)("history")
    assert code == 0 and "safe.directory" in out["checkout_notes"][0]

    capsys.readouterr()
    assert main(["reconcile", "--adopt", str(refused_dir), "--root", str(root)]) == 0
    text = capsys.readouterr().out
    assert f"brought 1 change(s) from {refused_dir}" in text and "the old folder is kept" in text
    assert _tree(refused_dir) == kept
    assert [c.id for c in history(root)] == [first] and _elsewhere(root) == []
    assert undo_change(root, first, actor="r").status == "undone"


def test_damaged_foreign_and_odd_runtime_folders_are_passed_over(root, tmp_path, capsys):
    """Another runtime folder's ledger that is not a database, is damaged, is another checkout's, is a folder, is
    empty, or is reached through a symlink: none is reported or adoptable, and nothing fails."""
    apply_proposal(root, "mem-new", actor="r")
    real = project_runtime_dir(root)
    projects = memzoi_home() / "projects"
    (projects / "garbage-0000000000000001").mkdir()
    (projects / "garbage-0000000000000001" / LEDGER_DB).write_bytes(b"not a database at all\n" * 100)
    damaged = projects / "damaged-0000000000000002"
    damaged.mkdir()
    head = (real / LEDGER_DB).read_bytes()[:100]  # a SQLite header, then nothing of it
    (damaged / LEDGER_DB).write_bytes(head + b"\x00" * 4000)
    foreign = projects / "foreign-0000000000000003"
    shutil.copytree(real, foreign)
    conn = sqlite3.connect(foreign / LEDGER_DB)
    conn.execute("UPDATE ledger_checkout SET id = 'another-checkout'")
    conn.commit()
    conn.close()
    (projects / "folder-0000000000000004" / LEDGER_DB).mkdir(parents=True)
    (projects / "empty-0000000000000005").mkdir()
    (projects / "empty-0000000000000005" / LEDGER_DB).write_bytes(b"")
    (projects / "link-0000000000000006").symlink_to(real)
    (projects / outside_git_key(root)).mkdir()
    (projects / outside_git_key(root) / LEDGER_DB).write_bytes(b"garbage\n")

    assert find_ledgers(root).found == []
    assert _elsewhere(root) == []
    code, out = Cli(root, capsys)("history")
    assert code == 0 and len(out["changes"]) == 1 and "ledgers_elsewhere" not in out
    for d in ("garbage-0000000000000001", "damaged-0000000000000002", "foreign-0000000000000003"):
        with pytest.raises(Refusal) as refused:
            adopt_ledger(root, projects / d)
        assert refused.value.code == "ledger_not_found"


def test_the_search_is_bounded(root, tmp_path):
    first = apply_proposal(root, "mem-new", actor="r").change_id
    old = project_runtime_dir(root)
    moved = tmp_path / "moved"
    root.rename(moved)
    _restart()
    (memzoi_home() / "projects" / "aaa-0000000000000000").mkdir()
    assert find_ledgers(moved, limit=1).found == [] and find_ledgers(moved, limit=1).truncated
    [found] = find_ledgers(moved).found
    assert found.runtime_dir == old and not find_ledgers(moved).truncated and first


def test_a_ledger_of_a_newer_version_is_named_and_not_adopted(root, tmp_path):
    apply_proposal(root, "mem-new", actor="r")
    old = project_runtime_dir(root)
    conn = sqlite3.connect(old / LEDGER_DB)
    conn.execute("PRAGMA user_version=99")
    conn.commit()
    conn.close()
    moved = tmp_path / "moved"
    root.rename(moved)
    _restart()
    kept = _tree(old)
    [found] = find_ledgers(moved).found
    assert found.runtime_dir == old
    with pytest.raises(Refusal) as refused:
        adopt_ledger(moved, old)
    assert refused.value.code == "ledger_schema" and str(old) in refused.value.message
    assert ".adopt-" not in refused.value.message and _tree(old) == kept and history(moved) == []
    assert not [p for p in project_runtime_dir(moved).iterdir() if ".adopt-" in p.name]


def test_a_copy_of_a_checkout_that_adopted_does_not_take_the_old_ledger_too(root, tmp_path):
    """Moved, then adopted, then copied: the ledger from before the move is in the original's ledger now, so the copy
    is told it is the original's, not offered it as its own moved ledger."""
    first = apply_proposal(root, "mem-new", actor="r").change_id
    old = project_runtime_dir(root)
    moved = tmp_path / "moved"
    root.rename(moved)
    _restart()
    adopt_ledger(moved, old)
    copy = tmp_path / "copy"
    shutil.copytree(moved, copy, symlinks=True)
    _restart()
    found = {f.runtime_dir: f.copy_of for f in find_ledgers(copy).found}
    assert found == {old: str(moved), project_runtime_dir(moved): str(moved)}
    assert {c["status"] for c in _elsewhere(copy)} == {"ok"}
    with pytest.raises(Refusal) as refused:
        adopt_ledger(copy, old)
    assert refused.value.code == "ledger_of_a_copy"
    assert history(copy) == [] and [c.id for c in history(moved)] == [first]


def test_an_adoption_that_fails_midway_leaves_this_ledger_as_it_was(root, tmp_path, monkeypatch):
    """Every row comes in one transaction: a failure after the rows were inserted (here, at the binding) rolls all
    of them back, and the temporary copy is removed."""
    from memzoi.ledger import adopt

    first = apply_proposal(root, "mem-new", actor="r").change_id
    old = project_runtime_dir(root)
    moved = tmp_path / "moved"
    root.rename(moved)
    _restart()

    def broken(*args, **kwargs):
        raise sqlite3.OperationalError("disk I/O error")

    real = adopt.bind
    monkeypatch.setattr(adopt, "bind", broken)
    with pytest.raises(Exception, match="disk I/O error"):
        adopt_ledger(moved, old)
    assert history(moved) == []
    assert not [p for p in project_runtime_dir(moved).iterdir() if ".adopt-" in p.name]
    monkeypatch.setattr(adopt, "bind", real)
    assert adopt_ledger(moved, old).changes == 1 and [c.id for c in history(moved)] == [first]
