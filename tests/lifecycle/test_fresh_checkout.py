"""A fresh checkout at the path of a deleted one does not inherit the deleted one's ledger (new user's trial: a
pristine pending packet got ``ledger_drift``, ``history`` listed changes this checkout never saw, ``undo`` blamed
edits). The ledger records the checkout it was written for (an id in the git common dir); another checkout's
ledger is read as empty and set aside, whole, at the next change; the same checkout keeps its ledger across
restarts, ``git gc`` and linked worktrees."""

from __future__ import annotations

import shutil
import sqlite3
import subprocess
from pathlib import Path

import pytest

from memzoi.agent.recall import get_memory
from memzoi.base import runtime
from memzoi.base.checkout import MARKER, set_aside_ledgers
from memzoi.base.runtime import LEDGER_DB, git_env, project_runtime_dir
from memzoi.cli.main import main
from memzoi.ledger import Refusal, history, store, undo_change
from memzoi.ledger.view import LedgerView
from memzoi.lifecycle import apply_proposal, propose_supersede
from memzoi.lifecycle.propose import proposal_origin
from memzoi.runs.doctor import diagnose

from .. import builders
from .conftest import Cli

PACKET = builders.packet_path("mem-new")
RECORD = builders.record_path("prefer-composition")


def _git(root: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(root), *args], check=True, env=git_env(), capture_output=True)


def _clone_fresh(root: Path, files: dict[str, bytes]) -> None:
    """What a re-clone at ``root`` gives: a new git repository holding ``files`` (the old one deleted first)."""
    shutil.rmtree(root)
    subprocess.run(["git", "init", "-q", "--template=", str(root)], check=True, env=git_env())
    for rel, data in files.items():
        builders.write(root, rel, data)


def _restart() -> None:
    """Forget what this process cached about project paths, as a new process would."""
    runtime._cached_keys.cache_clear()
    store._runtime_dir.cache_clear()


@pytest.fixture
def root(tmp_path, monkeypatch) -> Path:
    monkeypatch.setenv("MEMZOI_HOME", str(tmp_path / "home"))
    repo = tmp_path / "repo"
    subprocess.run(["git", "init", "-q", "--template=", str(repo)], check=True, env=git_env())
    builders.write(repo, PACKET, builders.packet("mem-new", title="Prefer composition", body="Prefer composition."))
    return repo


def _codes(cli: Cli) -> dict[str, list[str]]:
    code, out = cli("check")
    found: dict[str, list[str]] = {}
    for f in out["findings"]:
        found.setdefault(Path(f["path"]).resolve().relative_to(cli.root.resolve()).as_posix(), []).append(f["code"])
    return found


def test_a_reclone_at_the_same_path_does_not_inherit_the_ledger(root, capsys):
    pristine = (root / PACKET).read_bytes()
    old = apply_proposal(root, "mem-new", actor="r").change_id
    # A hand edit of the applied record, judged (and cached in the verdict store) while the old checkout lives.
    (root / RECORD).write_bytes((root / RECORD).read_bytes() + b"Edited by hand.\n")
    cli = Cli(root, capsys)
    assert "ledger_drift" in _codes(cli).get(RECORD, [])
    edited = (root / RECORD).read_bytes()
    db = project_runtime_dir(root) / LEDGER_DB
    kept = db.read_bytes()
    _clone_fresh(root, {PACKET: pristine, RECORD: edited})

    # `check` is read-only and sees no ledger facts: neither the pristine packet nor the record drifts.
    found = _codes(cli)
    assert not [c for codes in found.values() for c in codes if c.startswith("ledger_")], found
    assert db.read_bytes() == kept and not (root / ".git" / MARKER).exists() and not set_aside_ledgers(root)
    # history lists nothing of the old checkout and says why; doctor says the same, once.
    code, out = cli("history")
    assert code == 0 and out["changes"] == []
    [note] = out["checkout_notes"]
    assert "written for another checkout at this path" in note and "the next change sets it aside" in note
    [check] = [c for c in diagnose(root)["checks"] if c["name"] == "ledger_checkout"]
    assert check["status"] == "warning" and "another checkout" in check["message"]

    # Undoing the old checkout's change is refused, saying whose change it is; the ledger is now set aside, whole.
    with pytest.raises(Refusal) as refused:
        undo_change(root, old, actor="r")
    assert refused.value.code == "change_not_found"
    assert "belongs to an earlier checkout at this path" in refused.value.message
    [aside] = set_aside_ledgers(root)
    assert aside.path.name in refused.value.message and aside.path.stat().st_mode & 0o077 == 0
    conn = sqlite3.connect(aside.path)
    assert [r[0] for r in conn.execute("SELECT id FROM change")] == [old]
    conn.close()
    assert (root / PACKET).read_bytes() == pristine and (root / RECORD).read_bytes() == edited
    code, out = cli("history")
    [note] = out["checkout_notes"]
    assert "was set aside at" in note and aside.path.name in note and out["changes"] == []
    capsys.readouterr()
    assert main(["history", "--root", str(root)]) == 0
    text = capsys.readouterr().out
    assert "set aside" in text and "no changes recorded" in text
    [check] = [c for c in diagnose(root)["checks"] if c["name"] == "ledger_checkout"]
    assert check["status"] == "ok" and "was set aside at" in check["message"]

    # This checkout's own changes are its ledger's.
    (root / RECORD).unlink()
    new = apply_proposal(root, "mem-new", actor="r").change_id
    assert [c.id for c in history(root)] == [new]
    assert undo_change(root, new, actor="r").status == "undone"


def test_the_same_checkout_keeps_its_ledger_across_restarts_gc_and_worktrees(root, tmp_path):
    first = apply_proposal(root, "mem-new", actor="r").change_id
    _git(root, "add", "-A")
    _git(root, "-c", "user.name=t", "-c", "user.email=t@t.invalid", "commit", "-qm", "c")
    _git(root, "gc", "-q", "--prune=now", "--aggressive")
    _restart()
    assert [c.id for c in history(root)] == [first]
    wt = tmp_path / "second"
    _git(root, "worktree", "add", "-q", str(wt))
    _restart()
    # the linked worktree shares the git common dir, hence the id and the ledger
    assert [c.id for c in history(wt)] == [first]
    builders.write(wt, builders.packet_path("mem-two"), builders.packet("mem-two", title="Two", body="Two."))
    second = apply_proposal(wt, "mem-two", actor="r").change_id
    _restart()
    assert [c.id for c in history(root)] == [second, first]
    assert undo_change(root, first, actor="r").status == "undone"
    assert not set_aside_ledgers(root) and not set_aside_ledgers(wt)
    assert all(c["status"] == "ok" for c in diagnose(root)["checks"] if c["name"] == "ledger_checkout")


def test_a_ledger_from_before_checkout_ids_is_kept_by_the_checkout_that_finds_it(root):
    """A ledger that records no checkout (written by an earlier version) cannot be told apart: it is taken as this
    checkout's, the reading that loses nothing, and bound at its next change."""
    first = apply_proposal(root, "mem-new", actor="r").change_id
    db = project_runtime_dir(root) / LEDGER_DB
    conn = sqlite3.connect(db)
    conn.execute("DELETE FROM ledger_checkout")
    conn.commit()
    conn.close()
    (root / ".git" / MARKER).unlink()
    assert [c.id for c in history(root)] == [first]
    assert undo_change(root, first, actor="r").status == "undone"
    assert (root / ".git" / MARKER).is_file() and not set_aside_ledgers(root)


def test_the_mcp_tools_read_no_facts_of_the_old_checkout(root):
    """What the MCP tools show of a pending packet's origin comes from the same ledger reading: a packet the old
    checkout proposed has no origin in the new one (``proposal_origin``: "another clone made it")."""
    apply_proposal(root, "mem-new", actor="r")
    made = propose_supersede(
        root, "prefer-composition", title="Prefer small types", body="Small.", reason="r", actor="r"
    )
    pid = Path(made.files[0].path).name[:-3]
    assert proposal_origin(root, pid) is not None
    files = {rel: (root / rel).read_bytes() for rel in (RECORD, made.files[0].path)}
    _clone_fresh(root, files)
    assert proposal_origin(root, pid) is None
    assert get_memory(root, pid)["provenance"]["proposal"] == {"id": pid}


def test_a_moved_repository_starts_a_new_ledger_and_finds_its_own_again(root, tmp_path):
    """Moving a checkout changes its path, hence Memzoi's repository key and runtime folder: the moved checkout
    has no ledger there (its id went along; nothing is set aside), and moved back it finds its ledger again."""
    first = apply_proposal(root, "mem-new", actor="r").change_id
    moved = tmp_path / "moved"
    root.rename(moved)
    _restart()
    assert history(moved) == [] and not set_aside_ledgers(moved)
    moved.rename(root)
    _restart()
    assert [c.id for c in history(root)] == [first] and not set_aside_ledgers(root)


def test_a_set_aside_cut_short_leaves_the_ledger_as_it_was(root, monkeypatch):
    """A copy that fails (a full disk) leaves no partial copy and the live ledger untouched; the change is refused."""
    first = apply_proposal(root, "mem-new", actor="r").change_id
    _clone_fresh(root, {})
    db = project_runtime_dir(root) / LEDGER_DB

    real = sqlite3.connect

    class CutShort:
        """The read-only source of the copy, whose backup writes part of it and fails."""

        def __init__(self, conn: sqlite3.Connection) -> None:
            self.conn = conn

        def backup(self, out: sqlite3.Connection) -> None:
            out.execute("CREATE TABLE part (x)")
            raise sqlite3.OperationalError("database or disk is full")

        def close(self) -> None:
            self.conn.close()

    def connect(target, *args, **kwargs):
        conn = real(target, *args, **kwargs)
        return CutShort(conn) if str(target).endswith("?mode=ro") else conn

    monkeypatch.setattr(sqlite3, "connect", connect)
    with pytest.raises(Refusal, match="is full"):
        undo_change(root, first, actor="r")
    monkeypatch.setattr(sqlite3, "connect", real)
    assert not set_aside_ledgers(root)
    conn = sqlite3.connect(db)
    assert [r[0] for r in conn.execute("SELECT id FROM change")] == [first]
    conn.close()


def test_a_running_views_facts_follow_a_reclone_under_it(root):
    """The editor's live ledger view re-reads when the checkout's id changes, not only the ledger's files: a server
    left running while its folder is deleted and cloned again shows no ``ledger_drift`` from the old ledger."""
    pristine = (root / PACKET).read_bytes()
    apply_proposal(root, "mem-new", actor="r")
    view = LedgerView(root.resolve())
    assert view.for_file(root / PACKET).last is not None  # the apply deleted the packet: a fact of it
    _clone_fresh(root, {PACKET: pristine})
    assert view.for_file(root / PACKET).last is None
    assert view.findings(root / PACKET, pristine.decode()) == []
