"""The write primitive (:func:`memzoi.base.fsutil.swap_file`): compare-at-the-switch for replace, create and delete,
on the renameat2 path and the portable one; I/O errors at every step leave the before or the after bytes."""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path

import pytest

from memzoi.base import fsutil
from memzoi.base.fsutil import ExternalChange, ReadOnlyTarget, UnsafeWriteError, swap_file

CASES = [("replace", b"old\n", b"new\n"), ("create", None, b"new\n"), ("delete", b"old\n", None)]
STEPS = ("write", "chmod", "fsync", "swap", "compare", "link", "restore", "unlink", "dirsync")


@pytest.fixture(params=[True, False], ids=["exchange", "portable"])
def exchange(request, monkeypatch):
    monkeypatch.setattr(fsutil, "use_exchange", request.param)
    return request.param


def files(d: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in d.iterdir()}


def edit_by_rename(path: Path, data: bytes) -> None:
    tmp = path.with_name("editor.swp")
    tmp.write_bytes(data)
    os.replace(tmp, path)


@pytest.mark.parametrize("kind,before,after", CASES, ids=[c[0] for c in CASES])
def test_switch_happens_only_over_the_expected_bytes(tmp_path, exchange, kind, before, after):
    path = tmp_path / "f.md"
    if before is not None:
        path.write_bytes(before)
    swap_file(path, before, after)
    assert files(tmp_path) == ({} if after is None else {"f.md": after})


#: (case, step at which the editor saves, refused with renameat2, refused on the portable path): before the
#: switch the change refuses; after it the edit lands on the new state (on the portable path the target is absent
#: while the displaced file is compared, so a save then makes the link fail and the change refuses).
MOMENTS = [
    ("replace", "write", True, True),
    ("replace", "swap", True, True),
    ("replace", "compare", False, True),
    ("create", "write", True, True),
    ("create", "swap", True, True),
    ("create", "unlink", False, False),
    ("delete", "swap", True, True),
    ("delete", "compare", False, False),
    ("delete", "dirsync", False, False),
]


@pytest.mark.parametrize("kind,at,refused_x,refused_p", MOMENTS, ids=[f"{m[0]}-{m[1]}" for m in MOMENTS])
def test_an_edit_at_each_moment_is_kept(tmp_path, exchange, kind, at, refused_x, refused_p):
    """An editor's save (rename over the target) just before the switch, or right after it."""
    _, before, after = next(c for c in CASES if c[0] == kind)
    path = tmp_path / "f.md"
    if before is not None:
        path.write_bytes(before)
    fired = []

    def hook(step: str) -> None:
        if step == at and not fired:
            fired.append(step)
            edit_by_rename(path, b"hand edit\n")

    try:
        swap_file(path, before, after, hook=hook)
        refused = False
    except ExternalChange as err:
        refused = True
        assert err.kept is None
    assert fired and files(tmp_path) == {"f.md": b"hand edit\n"}, (refused, files(tmp_path))
    assert refused == (refused_x if exchange else refused_p)


def test_a_second_edit_that_cannot_go_back_is_kept_beside(tmp_path, monkeypatch):
    monkeypatch.setattr(fsutil, "use_exchange", True)
    path = tmp_path / "f.md"
    path.write_bytes(b"old\n")

    def hook(step: str) -> None:
        if step == "swap":
            edit_by_rename(path, b"first edit\n")
        elif step == "compare":
            edit_by_rename(path, b"second edit\n")

    with pytest.raises(ExternalChange) as err:
        swap_file(path, b"old\n", b"new\n", hook=hook)
    assert err.value.kept is not None and err.value.kept.read_bytes() == b"second edit\n"
    assert path.read_bytes() == b"first edit\n"


def test_in_place_save_that_truncates_before_the_switch_is_kept(tmp_path, exchange):
    path = tmp_path / "f.md"
    path.write_bytes(b"old\n")
    holder = {}

    def hook(step: str) -> None:
        if step == "swap":  # the editor opened (and truncated) the file; it writes after the comparison
            holder["fh"] = open(path, "wb")  # noqa: SIM115
        elif step in ("restore", "link") and "fh" in holder:
            holder["fh"].write(b"hand edit\n")
            holder.pop("fh").close()

    with pytest.raises(ExternalChange):
        swap_file(path, b"old\n", b"new\n", hook=hook)
    if "fh" in holder:
        holder.pop("fh").close()
    assert path.read_bytes() == b"hand edit\n"
    assert files(tmp_path) == {"f.md": b"hand edit\n"}


@pytest.mark.parametrize("kind,before,after", CASES, ids=[c[0] for c in CASES])
@pytest.mark.parametrize("code", [errno.ENOSPC, errno.EIO], ids=["ENOSPC", "EIO"])
def test_io_error_at_every_step_leaves_before_or_after(tmp_path, exchange, kind, before, after, code):
    seen = 0
    for step in STEPS:
        d = tmp_path / f"{step}-{code}"
        d.mkdir()
        path = d / "f.md"
        if before is not None:
            path.write_bytes(before)

        def hook(s: str, step: str = step) -> None:
            if s == step:
                raise OSError(code, os.strerror(code))

        try:
            swap_file(path, before, after, hook=hook)
            failed = False
        except OSError as err:
            assert err.errno == code
            failed = True
            seen += 1
        now = fsutil.read_state(path)
        assert now in (before, after), (step, now)
        if not failed:
            assert now == after
        # Temporary files left by a failure hold the before or after bytes (reconciliation removes those).
        for p in d.iterdir():
            if p.name != "f.md":
                assert p.read_bytes() in (before, after), (step, p.name)
    assert seen >= 4


def test_mode_and_owner_kept_and_new_file_gets_umask_mode(tmp_path, exchange):
    path = tmp_path / "f.md"
    path.write_bytes(b"old\n")
    os.chmod(path, 0o640)
    if os.geteuid() == 0:
        os.chown(path, 4242, 4343)
    st = os.stat(path)
    swap_file(path, b"old\n", b"new\n")
    now = os.stat(path)
    assert (stat.S_IMODE(now.st_mode), now.st_uid, now.st_gid) == (0o640, st.st_uid, st.st_gid)
    old = os.umask(0o077)
    try:
        swap_file(tmp_path / "g.md", None, b"x\n")
    finally:
        os.umask(old)
    assert stat.S_IMODE(os.stat(tmp_path / "g.md").st_mode) == 0o600


@pytest.mark.parametrize("data", [b"new\n", None], ids=["rewrite", "delete"])
def test_read_only_target_refused_with_nothing_written(tmp_path, exchange, data):
    path = tmp_path / "f.md"
    path.write_bytes(b"old\n")
    os.chmod(path, 0o444)
    with pytest.raises(ReadOnlyTarget):
        swap_file(path, b"old\n", data)
    assert files(tmp_path) == {"f.md": b"old\n"} and stat.S_IMODE(os.stat(path).st_mode) == 0o444


def test_symlink_refused(tmp_path):
    (tmp_path / "real.md").write_bytes(b"old\n")
    (tmp_path / "f.md").symlink_to("real.md")
    with pytest.raises(UnsafeWriteError):
        swap_file(tmp_path / "f.md", b"old\n", b"new\n")
    assert (tmp_path / "real.md").read_bytes() == b"old\n"
