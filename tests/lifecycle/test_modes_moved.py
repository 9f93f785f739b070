"""A change widens no permission (promise 2): a packet moved to ``resolved/`` keeps its mode, the record an apply
creates from it gets the packet's mode, undo and recovery give a re-created file the mode it had (the ledger keeps
each state's permission bits), a ledger row without them falls back to the umask's mode, and a refusal for
read-only files names every one of them at once."""

from __future__ import annotations

import os
import shutil
import sqlite3
import stat
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from memzoi import ledger as L
from memzoi.base.fsutil import swap_file
from memzoi.base.runtime import LEDGER_DB
from memzoi.lifecycle import apply_proposal, reject_proposal
from memzoi.lifecycle.materialize import derive_decision, derive_plan, materialize_apply
from memzoi.lifecycle.materialize_candidate import build_candidate

from ..ledger.faults import CRASH_EXIT, run_child, scratch, tree  # noqa: F401 (scratch is a fixture)
from .conftest import PENDING, TARGET_ID, seed
from .test_materialize import DRAFT, REL

TARGET = f".memzoi/records/{TARGET_ID}.md"
APPLIED = ".memzoi/proposals/resolved/applied"
PROPOSALS = ["mem_2026_07_06_auth_001", "mem_2026_07_06_auth_supersede", "mem_2026_07_06_auth_tombstone"]


def mode(path: Path) -> int:
    return stat.S_IMODE(os.lstat(path).st_mode)


def created(result: L.ChangeResult) -> list[str]:
    return [f.path for f in result.files if f.before is None and f.after is not None]


@pytest.mark.parametrize("packet_mode", [0o600, 0o640])
@pytest.mark.parametrize("proposal", PROPOSALS)
def test_apply_and_undo_keep_the_packet_mode(repo, umask_022, proposal, packet_mode):
    packet = repo / PENDING / f"{proposal}.md"
    os.chmod(packet, packet_mode)
    os.chmod(repo / TARGET, 0o640)
    result = apply_proposal(repo, proposal, actor="r")
    made = created(result)
    assert f"{APPLIED}/{proposal}.md" in made
    # The resolved copy and a new record (create, supersede) hold the packet's content: the packet's mode.
    assert {p: mode(repo / p) for p in made} == dict.fromkeys(made, packet_mode)
    assert mode(repo / TARGET) == 0o640  # a rewritten record (supersede, tombstone) keeps its own
    L.undo_change(repo, result.change_id, actor="r")
    assert mode(packet) == packet_mode and mode(repo / TARGET) == 0o640


@pytest.mark.parametrize("packet_mode", [0o600, 0o640])
def test_reject_and_its_undo_keep_the_packet_mode(repo, umask_022, packet_mode):
    packet = repo / PENDING / "mem_2026_07_06_auth_001.md"
    os.chmod(packet, packet_mode)
    result = reject_proposal(repo, "mem_2026_07_06_auth_001", reason="not now", actor="r")
    [resolved] = created(result)
    assert mode(repo / resolved) == packet_mode
    L.undo_change(repo, result.change_id, actor="r")
    assert mode(packet) == packet_mode


def test_a_receipt_gets_the_packet_mode(repo, umask_022):
    packet = repo / PENDING / "mem_2026_07_06_auth_001.md"
    packet.write_bytes(packet.read_bytes().replace(b"sensitivity: repo-safe", b"sensitivity: private"))
    os.chmod(packet, 0o600)
    result = reject_proposal(repo, "mem_2026_07_06_auth_001", reason="not repo-safe", actor="r")
    [receipt] = created(result)
    assert result.details["receipt"] and mode(repo / receipt) == 0o600


def test_materialize_creates_with_the_umask_mode_and_its_update_and_undo_keep_the_record_mode(repo):
    """A record materialized from artifacts outside the project comes from no file: the umask's mode (decided so)."""
    old = os.umask(0o027)
    try:
        cand = build_candidate(repo, DRAFT)
        plan = derive_plan(cand)
        materialize_apply(repo, cand, plan, derive_decision(plan, "2026-07-07T00:00:00Z"), actor="r")
        assert mode(repo / REL) == 0o640
        os.chmod(repo / REL, 0o600)
        update = build_candidate(repo, DRAFT.replace("500", "300"), action="update")
        uplan = derive_plan(update)
        res = materialize_apply(repo, update, uplan, derive_decision(uplan, "2026-07-08T00:00:00Z"), actor="r")
        assert mode(repo / REL) == 0o600
        L.undo_change(repo, res.change_id, actor="r")
        assert mode(repo / REL) == 0o600
    finally:
        os.umask(old)


def test_read_only_record_and_packet_are_named_together(repo):
    proposal = "mem_2026_07_06_auth_supersede"
    packet_rel = f"{PENDING}/{proposal}.md"
    os.chmod(repo / TARGET, 0o444)
    os.chmod(repo / packet_rel, 0o444)
    start = tree(repo)
    with pytest.raises(L.Refusal) as err:
        apply_proposal(repo, proposal, actor="r")
    assert err.value.code == "read_only" and err.value.path == TARGET
    assert TARGET in err.value.message and packet_rel in err.value.message
    assert "these 2 files" in err.value.message and err.value.message.count("chmod u+w") == 1
    assert tree(repo) == start and L.history(repo) == []
    os.chmod(repo / TARGET, 0o644)
    os.chmod(repo / packet_rel, 0o644)
    apply_proposal(repo, proposal, actor="r")  # one fix of both files is enough


@pytest.mark.skipif(sqlite3.sqlite_version_info < (3, 35), reason="DROP COLUMN needs SQLite 3.35")
def test_a_ledger_row_without_modes_restores_with_the_umask_mode(repo, umask_022):
    """Rows a schema-5 ledger wrote keep no mode: the undo still works, the re-created packet gets the umask's mode
    (this version's behaviour before), and the ledger is upgraded in place."""
    packet = repo / PENDING / "mem_2026_07_06_auth_001.md"
    os.chmod(packet, 0o600)
    result = apply_proposal(repo, "mem_2026_07_06_auth_001", actor="r")
    db = L.cached_runtime_dir(repo) / LEDGER_DB
    conn = sqlite3.connect(db)
    conn.execute("ALTER TABLE change_file DROP COLUMN before_mode")
    conn.execute("ALTER TABLE change_file DROP COLUMN after_mode")
    conn.execute("PRAGMA user_version=5")
    conn.commit()
    conn.close()
    change = L.get_change(repo, result.change_id)
    assert change is not None and {(f.before_mode, f.after_mode) for f in change.files} == {(None, None)}
    L.undo_change(repo, result.change_id, actor="r")
    assert mode(packet) == 0o644
    conn = sqlite3.connect(db)
    assert (
        conn.execute("PRAGMA user_version").fetchone()[0] == 9
    )  # through 6 (modes), 7 (the checkout table), 8 (folders) to 9 (the checkout's place)
    conn.close()


def test_recovery_after_a_crash_mid_apply_gives_the_resolved_copy_the_packet_mode(repo, umask_022):
    proposal = "mem_2026_07_06_auth_supersede"
    packet = repo / PENDING / f"{proposal}.md"
    os.chmod(packet, 0o640)
    # Killed after the new record is written, before the resolved copy: neither snapshot, so uncertain.
    code, steps = run_child(lambda: apply_proposal(repo, proposal, actor="r"), crash_at="apply:file1:done")
    assert code == CRASH_EXIT, steps
    L.reconcile(repo)
    change = L.history(repo)[0]
    assert change.status == "uncertain"
    L.recover(repo, change.id, "complete-after", actor="r")
    assert not packet.exists()
    assert mode(repo / APPLIED / f"{proposal}.md") == 0o640
    L.undo_change(repo, change.id, actor="r")
    assert mode(packet) == 0o640


def test_every_crash_point_of_an_undo_settles_with_the_packet_mode(scratch, tmp_path_factory, monkeypatch):
    monkeypatch.setenv("MEMZOI_HOME", str(scratch / "home"))
    old = os.umask(0o022)
    try:
        template = seed(tmp_path_factory.mktemp("tpl") / "repo")
        proposal = "mem_2026_07_06_auth_supersede"
        os.chmod(template / PENDING / f"{proposal}.md", 0o600)
        k = 0
        while True:
            k += 1
            root = scratch / f"r{k}"
            shutil.copytree(template, root, symlinks=True)
            result = apply_proposal(root, proposal, actor="x")
            code, steps = run_child(lambda: L.undo_change(root, result.change_id, actor="x"), crash_at=k)
            L.reconcile(root)
            [change] = [c for c in L.history(root) if c.id == result.change_id]
            if change.status == "uncertain":
                L.recover(root, change.id, "restore-before", actor="x")
            elif change.status == "applied":
                L.undo_change(root, change.id, actor="x")
            assert mode(root / PENDING / f"{proposal}.md") == 0o600, (k, steps[-1:], change.status)
            if code != CRASH_EXIT:
                break
    finally:
        os.umask(old)


def test_every_crash_point_of_an_apply_settles_with_the_packet_mode(scratch, tmp_path_factory, monkeypatch):
    """Killed at any step, then reconciled and settled (an uncertain change completed by recovery, a failed or
    unrecorded one applied again): the resolved copy and the new record have the packet's mode."""
    monkeypatch.setenv("MEMZOI_HOME", str(scratch / "home"))
    old = os.umask(0o022)
    try:
        template = seed(tmp_path_factory.mktemp("tpl") / "repo")
        proposal = "mem_2026_07_06_auth_supersede"
        os.chmod(template / PENDING / f"{proposal}.md", 0o640)
        seen = set()
        k = 0
        while True:
            k += 1
            root = scratch / f"a{k}"
            shutil.copytree(template, root, symlinks=True)
            code, steps = run_child(lambda: apply_proposal(root, proposal, actor="x"), crash_at=k)
            L.reconcile(root)
            changes = L.history(root)
            status = changes[0].status if changes else "not recorded"
            seen.add(status)
            if status == "uncertain":
                L.recover(root, changes[0].id, "complete-after", actor="x")
            elif status != "applied":
                apply_proposal(root, proposal, actor="x")
            made = [p for p in tree(root) if p not in tree(template)]
            assert len(made) == 2 and {mode(root / p) for p in made} == {0o640}, (k, steps[-1:], status)
            if code != CRASH_EXIT:
                break
        assert "uncertain" in seen, seen
    finally:
        os.umask(old)


def test_a_failed_undo_rolls_a_removed_file_back_with_its_mode(repo, umask_022, monkeypatch):
    """An undo whose last removal fails puts back the files it already removed, each with its recorded mode."""
    proposal = "mem_2026_07_06_auth_001"
    os.chmod(repo / PENDING / f"{proposal}.md", 0o600)
    result = apply_proposal(repo, proposal, actor="r")
    made = created(result)
    assert len(made) == 2  # the record, then the resolved copy: the undo removes them in that order

    def fail(name: str) -> None:
        if name == "undo:file2:swap":  # the second removal (the undo re-creates the packet first)
            raise OSError(28, "No space left on device")

    steps: list[str] = []
    L.set_fault_hook(lambda name: (steps.append(name), fail(name)))
    try:
        with pytest.raises(L.Refusal) as err:
            L.undo_change(repo, result.change_id, actor="r")
    finally:
        L.set_fault_hook(None)
    assert err.value.code == "write_failed", steps
    assert {p: mode(repo / p) for p in made} == dict.fromkeys(made, 0o600)


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(bits=st.integers(min_value=0, max_value=0o077), umask=st.sampled_from([0o002, 0o022, 0o027, 0o077]))
def test_any_packet_mode_survives_apply_and_undo(tmp_path_factory, monkeypatch, bits, umask):
    monkeypatch.setenv("MEMZOI_HOME", str(tmp_path_factory.mktemp("home")))
    root = seed(tmp_path_factory.mktemp("p") / "repo")
    packet = root / PENDING / "mem_2026_07_06_auth_001.md"
    want = 0o600 | bits
    os.chmod(packet, want)
    old = os.umask(umask)
    try:
        result = apply_proposal(root, "mem_2026_07_06_auth_001", actor="r")
        assert {mode(root / p) for p in created(result)} == {want}
        L.undo_change(root, result.change_id, actor="r")
        assert mode(packet) == want
    finally:
        os.umask(old)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    given_mode=st.none() | st.integers(min_value=0, max_value=0o7777),
    umask=st.integers(min_value=0, max_value=0o077),  # the owner's bits stay: a non-root user can use the folder
)
def test_swap_file_creates_with_exactly_the_permission_bits_given(tmp_path_factory, given_mode, umask):
    """A created file gets ``mode & 0o777`` whatever the umask (no special bit ever), or the umask's mode."""
    target = tmp_path_factory.mktemp("swap") / "sub" / "f.md"
    old = os.umask(umask)
    try:
        swap_file(target, None, b"x", mode=given_mode)
    finally:
        os.umask(old)
    assert mode(target) == (0o666 & ~umask if given_mode is None else given_mode & 0o777)
    os.chmod(target, 0o600)  # a mode without the owner's read bit: readable again for a non-root user
    assert target.read_bytes() == b"x"
