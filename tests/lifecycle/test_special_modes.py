"""Every rewrite keeps the whole mode, setuid, setgid and sticky bits included (issue 30: 0o4755 became 0o755,
because the owner was set after the mode and a chown clears those bits), or refuses with ``mode_not_kept`` and
nothing written: the atomic writes of :mod:`memzoi.base.fsio`, the ledgered lifecycle writes (re-attest, apply's
retired target, undo) and the resident writes."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from memzoi import ledger as L
from memzoi.base import fsio
from memzoi.base.fsutil import swap_file
from memzoi.lifecycle import apply_proposal, propose_tombstone
from memzoi.lifecycle.reattest import reattest
from memzoi.resident import service

from ..ledger.faults import tree
from ..resident.conftest import rules
from .test_permissions import RECORD, attested, give_away, mode, owner

SPECIAL = [0o4755, 0o2755, 0o1644, 0o6755, 0o7755, 0o2640]


def _stat(mode_: int, uid: int = 1000, gid: int = 1000) -> os.stat_result:
    return os.stat_result((stat.S_IFREG | mode_, 0, 0, 1, uid, gid, 0, 0, 0, 0))


@pytest.mark.parametrize(
    "mode_,euid,groups,kept",
    [
        (0o4755, 0, set(), True),
        (0o4755, 1000, {1000}, True),
        (0o4755, 1001, {1000}, False),
        (0o2755, 1001, {1000}, True),
        (0o2755, 1001, {7}, False),
        (0o1644, 1001, set(), True),
        (0o0755, 1001, set(), True),
        (0o6755, 1000, {7}, False),
    ],
)
def test_which_special_bits_a_rewrite_can_keep(mode_, euid, groups, kept):
    assert fsio.special_bits_kept(_stat(mode_), euid, groups) is kept


@pytest.mark.parametrize("mode_", SPECIAL)
def test_atomic_write_and_swap_file_keep_the_whole_mode(tmp_path, mode_):
    path = tmp_path / "f"
    path.write_bytes(b"one")
    who = give_away(path)  # before the mode: a chown clears setuid and setgid
    os.chmod(path, mode_)
    fsio.atomic_write(path, b"two")
    assert (mode(path), owner(path), path.read_bytes()) == (mode_, who, b"two")
    swap_file(path, b"two", b"three")
    assert (mode(path), owner(path), path.read_bytes()) == (mode_, who, b"three")
    fsio.atomic_write(path, b"four", mode=mode_)
    assert (mode(path), owner(path)) == (mode_, who)


def _dropping_fchmod(monkeypatch):
    """The system drops the special bits of a mode (as Linux does for setgid outside the file's group)."""
    real = os.fchmod
    monkeypatch.setattr(fsio.os, "fchmod", lambda fd, m: real(fd, m & 0o777))


def test_a_mode_the_system_does_not_keep_is_refused_with_nothing_written(tmp_path, monkeypatch):
    path = tmp_path / "f"
    path.write_bytes(b"one")
    os.chmod(path, 0o2755)
    _dropping_fchmod(monkeypatch)
    for write in (lambda: fsio.atomic_write(path, b"two"), lambda: swap_file(path, b"one", b"two")):
        with pytest.raises(fsio.ReadOnlyTarget) as err:
            write()
        assert err.value.code == "mode_not_kept" and "2755" in str(err.value)
        assert (path.read_bytes(), mode(path)) == (b"one", 0o2755)
        assert sorted(p.name for p in tmp_path.iterdir()) == ["f"]  # no temporary file left


def test_a_setuid_file_of_another_user_is_refused_before_anything(tmp_path, monkeypatch):
    path = tmp_path / "f"
    path.write_bytes(b"one")
    os.chmod(path, 0o4755)
    monkeypatch.setattr(fsio.os, "geteuid", lambda: os.lstat(path).st_uid + 4242)  # not its owner, not root
    with pytest.raises(fsio.ReadOnlyTarget) as err:
        fsio.check_writable(path)
    assert err.value.code == "mode_not_kept" and "chmod u-s" in err.value.advice


@pytest.mark.parametrize("mode_", SPECIAL)
def test_ledgered_rewrites_keep_the_whole_mode(repo, mode_):
    path = attested(repo)
    path.write_bytes(path.read_bytes().replace(b"500 lines.", b"400 lines."))
    who = give_away(path)
    os.chmod(path, mode_)
    res = reattest(repo, "prefer-small-modules", actor="r")
    assert (mode(path), owner(path)) == (mode_, who)
    L.undo_change(repo, res.change_id, actor="r")
    assert (mode(path), owner(path)) == (mode_, who)
    target = repo / RECORD
    os.chmod(target, mode_)
    packet = propose_tombstone(repo, "rust-msrv-is-1-96-1", reason="gone", actor="r").files[0].path
    apply_proposal(repo, Path(packet).stem, actor="r")
    assert mode(target) == mode_


def test_a_ledgered_rewrite_that_cannot_keep_the_mode_is_refused(repo, monkeypatch):
    path = attested(repo)
    path.write_bytes(path.read_bytes().replace(b"500 lines.", b"400 lines."))
    os.chmod(path, 0o4755)
    monkeypatch.setattr(fsio.os, "geteuid", lambda: os.lstat(path).st_uid + 4242)
    start, changes = tree(repo), len(L.history(repo))
    with pytest.raises(L.Refusal) as err:
        reattest(repo, "prefer-small-modules", actor="r")
    assert err.value.code == "mode_not_kept"
    assert tree(repo) == start and mode(path) == 0o4755 and len(L.history(repo)) == changes


@pytest.fixture
def resident_project(tmp_path, monkeypatch) -> Path:
    monkeypatch.setenv("MEMZOI_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("ZUNO_CONFIG_DIR", str(tmp_path / "zuno"))
    root = tmp_path / "proj"
    (root / ".memzoi").mkdir(parents=True)
    (root / ".memzoi" / "config.toml").write_text('[project]\nid = "proj"\n', encoding="utf-8")
    from memzoi.judge.config import clear_cache

    clear_cache()
    yield root
    clear_cache()


def _resident_add(root: Path, content: str):
    proposed = service.propose(
        root, scope="project", action="add", content=content, reason="r", confidence=1.0, actor="tester"
    )
    return service.apply(root, proposed.candidate.id, actor="tester")


@pytest.mark.parametrize("mode_", SPECIAL)
def test_resident_writes_keep_the_whole_mode(resident_project, mode_):
    _resident_add(resident_project, "First entry.")
    path = rules(resident_project)
    os.chmod(path, mode_)
    _resident_add(resident_project, "Second entry.")
    assert mode(path) == mode_ and b"Second entry." in path.read_bytes()


def test_a_resident_write_that_cannot_keep_the_mode_is_refused(resident_project, monkeypatch):
    _resident_add(resident_project, "First entry.")
    path = rules(resident_project)
    os.chmod(path, 0o2644)
    before = path.read_bytes()
    _dropping_fchmod(monkeypatch)
    with pytest.raises(L.Refusal) as err:
        _resident_add(resident_project, "Second entry.")
    assert "2644" in err.value.message
    assert path.read_bytes() == before and mode(path) == 0o2644
