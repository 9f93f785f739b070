"""Every rewrite keeps the file's mode (and owner and group where the process may set them), new files get the
umask's mode, and a read-only file is refused with nothing written: upgrade --write, apply (the retired target),
materialize, re-attest, undo and recovery."""

from __future__ import annotations

import os
import shutil
import stat
from pathlib import Path

import pytest

from memzoi import ledger as L
from memzoi.cli.main import main
from memzoi.lifecycle import apply_proposal, propose_tombstone
from memzoi.lifecycle.materialize import derive_decision, derive_plan, materialize_apply
from memzoi.lifecycle.materialize_candidate import build_candidate
from memzoi.lifecycle.reattest import reattest

from ..ledger.faults import CRASH_EXIT, run_child, tree
from .test_materialize import DRAFT, REL

RECORD = ".memzoi/records/rust-msrv-is-1-96-1.md"
ROOT_USER = hasattr(os, "geteuid") and os.geteuid() == 0


def mode(path: Path) -> int:
    return stat.S_IMODE(os.lstat(path).st_mode)


def owner(path: Path) -> tuple[int, int]:
    st = os.lstat(path)
    return st.st_uid, st.st_gid


@pytest.fixture
def umask_027():
    old = os.umask(0o027)
    yield
    os.umask(old)


def attested(repo: Path) -> Path:
    cand = build_candidate(repo, DRAFT)
    plan = derive_plan(cand)
    materialize_apply(repo, cand, plan, derive_decision(plan, "2026-07-07T00:00:00Z"), actor="r")
    return repo / REL


def give_away(path: Path) -> tuple[int, int]:
    """Owner and group another user would have (only root may set them); the current ones otherwise."""
    if ROOT_USER:
        os.chown(path, 4242, 4343)
    return owner(path)


def test_reattest_and_its_undo_keep_mode_and_owner(repo):
    path = attested(repo)
    path.write_bytes(path.read_bytes().replace(b"500 lines.", b"400 lines."))
    os.chmod(path, 0o600)
    who = give_away(path)
    res = reattest(repo, "prefer-small-modules", actor="r")
    assert (mode(path), owner(path)) == (0o600, who)
    L.undo_change(repo, res.change_id, actor="r")
    assert (mode(path), owner(path)) == (0o600, who)


def test_materialize_update_keeps_mode(repo):
    path = attested(repo)
    os.chmod(path, 0o640)
    update = build_candidate(repo, DRAFT.replace("500", "300"), action="update")
    uplan = derive_plan(update)
    materialize_apply(repo, update, uplan, derive_decision(uplan, "2026-07-08T00:00:00Z"), actor="r")
    assert mode(path) == 0o640


def test_apply_keeps_the_retired_target_mode_and_new_files_get_the_umask_mode(repo, umask_027):
    target = repo / RECORD
    os.chmod(target, 0o604)
    who = give_away(target)
    packet = propose_tombstone(repo, "rust-msrv-is-1-96-1", reason="gone", actor="r").files[0].path
    assert mode(repo / packet) == 0o640  # a new file: 0666 & ~umask
    res = apply_proposal(repo, Path(packet).stem, actor="r")
    assert (mode(target), owner(target)) == (0o604, who)
    resolved = next(f.path for f in res.files if f.before is None)
    assert mode(repo / resolved) == 0o640
    L.undo_change(repo, res.change_id, actor="r")
    assert (mode(target), owner(target)) == (0o604, who)


def test_recovery_keeps_mode(repo):
    path = attested(repo)
    path.write_bytes(path.read_bytes().replace(b"500 lines.", b"400 lines."))
    os.chmod(path, 0o640)
    # A reattest that dies after its write but before its outcome is recorded, then a hand edit: uncertain.
    code, _ = run_child(lambda: reattest(repo, "prefer-small-modules", actor="r"), crash_at="apply:written")
    assert code == CRASH_EXIT
    path.write_bytes(path.read_bytes() + b"\nand more\n")
    L.reconcile(repo)
    change = L.history(repo)[0]
    assert change.status == "uncertain"
    os.chmod(path, 0o640)
    L.recover(repo, change.id, "restore-before", actor="r")
    assert mode(path) == 0o640


def test_read_only_record_is_refused_with_nothing_written_or_recorded(repo):
    path = attested(repo)
    path.write_bytes(path.read_bytes().replace(b"500 lines.", b"400 lines."))
    os.chmod(path, 0o444)
    start, changes = tree(repo), len(L.history(repo))
    with pytest.raises(L.Refusal) as err:
        reattest(repo, "prefer-small-modules", actor="r")
    assert err.value.code == "read_only" and err.value.path == REL
    assert "read-only (mode 0444)" in err.value.message and "chmod u+w" in err.value.message
    assert tree(repo) == start and mode(path) == 0o444 and len(L.history(repo)) == changes


def test_read_only_file_is_refused_by_undo_and_by_a_removal(repo):
    res = propose_tombstone(repo, "rust-msrv-is-1-96-1", reason="gone", actor="r")
    packet = repo / res.files[0].path
    os.chmod(packet, 0o444)
    start = tree(repo)
    with pytest.raises(L.Refusal) as err:
        L.undo_change(repo, res.change_id, actor="r")  # would remove the packet
    assert err.value.code == "read_only" and tree(repo) == start
    with pytest.raises(L.Refusal) as err:
        apply_proposal(repo, packet.stem, actor="r")  # would move the packet to resolved/
    assert err.value.code == "read_only" and tree(repo) == start
    assert L.history(repo)[0].status == "applied"


def upgrade(capsys, *argv: str) -> tuple[int, str]:
    code = main(["upgrade", *argv])
    return code, capsys.readouterr().err


def legacy_copy(corpus: Path, tmp_path: Path) -> Path:
    records = tmp_path / ".memzoi" / "records"
    records.mkdir(parents=True)
    src = next(corpus.glob("legacy/07c771ea/.memzoi/records/*.md"))
    dst = records / src.name
    shutil.copyfile(src, dst)
    return dst


def test_upgrade_write_keeps_mode_and_owner(capsys, tmp_path, corpus):
    dst = legacy_copy(corpus, tmp_path)
    os.chmod(dst, 0o640)
    who = give_away(dst)
    code, err = upgrade(capsys, str(dst), "--write")
    assert code == 0 and "upgraded" in err
    assert (mode(dst), owner(dst)) == (0o640, who)
    assert b"profile: memzoi" in dst.read_bytes()


def test_upgrade_write_refuses_a_read_only_file(capsys, tmp_path, corpus):
    dst = legacy_copy(corpus, tmp_path)
    os.chmod(dst, 0o444)
    before = dst.read_bytes()
    code, err = upgrade(capsys, str(dst), "--write")
    assert code == 1 and "read-only (mode 0444)" in err and "not written" in err
    assert dst.read_bytes() == before and mode(dst) == 0o444
    assert [p.name for p in dst.parent.iterdir()] == [dst.name]


def test_preview_refuses_a_read_only_target_as_the_change_would(repo):
    from memzoi.ledger import dry_run
    from memzoi.lifecycle.reattest import plan_reattest

    path = attested(repo)
    path.write_bytes(path.read_bytes().replace(b"500 lines.", b"400 lines."))
    os.chmod(path, 0o444)
    with pytest.raises(L.Refusal) as err:
        dry_run(repo, lambda root: plan_reattest(root, "prefer-small-modules"))
    assert err.value.code == "read_only"


# -- why a file cannot be written: the advice fits the reason --------------------------------------------------


def read_only_mount(monkeypatch, top: Path) -> None:
    """``statvfs`` reports the file system below ``top`` as mounted read-only (as a ``ro`` mount does)."""
    real = os.statvfs

    def statvfs(path):
        st = real(path)
        if not os.path.abspath(os.fsdecode(path)).startswith(str(top)):
            return st
        fields = list(st)
        fields[8] |= os.ST_RDONLY
        return os.statvfs_result(fields)

    monkeypatch.setattr(os, "statvfs", statvfs)


def denied(monkeypatch, *paths: Path) -> None:
    """This user may not write ``paths`` (as for a file or folder of another user; root passes every check)."""
    real, names = os.access, {str(p) for p in paths}

    def access(path, how, *a, **k):
        if os.path.abspath(os.fsdecode(path)) in names and how & os.W_OK:
            return False
        return real(path, how, *a, **k)

    monkeypatch.setattr(os, "access", access)


def test_a_read_only_mount_is_named_as_such_not_as_a_mode(repo, cli, monkeypatch):
    read_only_mount(monkeypatch, repo)
    start, changes = tree(repo), len(L.history(repo))
    for argv in (
        ("proposals", "apply", "mem_2026_07_06_auth_001"),
        ("tombstone", "rust-msrv-is-1-96-1", "--reason", "gone"),
    ):
        code, out = cli(*argv)
        assert code == 1 and out["error"]["code"] == "read_only_file_system", out
        message = out["error"]["message"]
        assert "read-only file system" in message and "remount" in message, message
        assert "chmod" not in message and "mode 0" not in message, message
    assert tree(repo) == start and len(L.history(repo)) == changes  # refused before anything is recorded


def test_a_file_of_another_user_is_named_by_owner(repo, monkeypatch):
    path = repo / RECORD
    os.chmod(path, 0o644)
    denied(monkeypatch, path)
    res = propose_tombstone(repo, "rust-msrv-is-1-96-1", reason="gone", actor="r")
    start = tree(repo)
    with pytest.raises(L.Refusal) as err:
        apply_proposal(repo, Path(res.files[0].path).stem, actor="r")  # would retire the record
    assert err.value.code == "permission_denied" and err.value.path == RECORD
    assert "not writable by this user (mode 0644" in err.value.message and "owner" in err.value.message
    assert "chmod u+w) and retry" not in err.value.message
    assert tree(repo) == start


def test_a_folder_this_user_may_not_write_is_named(repo, monkeypatch):
    path = repo / RECORD
    denied(monkeypatch, path.parent)
    res = propose_tombstone(repo, "rust-msrv-is-1-96-1", reason="gone", actor="r")
    start = tree(repo)
    with pytest.raises(L.Refusal) as err:
        apply_proposal(repo, Path(res.files[0].path).stem, actor="r")
    assert err.value.code == "permission_denied"
    assert f"in a folder this user may not write ({path.parent}" in err.value.message, err.value.message
    assert "make the folder writable" in err.value.message
    assert tree(repo) == start


def test_upgrade_names_a_read_only_mount(capsys, tmp_path, corpus, monkeypatch):
    dst = legacy_copy(corpus, tmp_path)
    before = dst.read_bytes()
    read_only_mount(monkeypatch, tmp_path)
    code, err = upgrade(capsys, str(dst), "--write")
    assert code == 1 and "read-only file system" in err and "remount" in err and "chmod" not in err
    assert dst.read_bytes() == before
