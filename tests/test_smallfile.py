"""The bounded reader of configuration files (:func:`memzoi.base.smallfile.read_small`): a regular file up to its
cap is read; a link (unless followed), a FIFO, a device, a folder or a longer file is refused with a reason, never
read. The FIFO and device cases run in a bounded subprocess (:mod:`tests.bounded`): a regression must fail, not hang
or exhaust memory."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from memzoi.base.smallfile import CONFIG_CAP, UnsafeFile, read_small, why_unread

from .bounded import hostile, run


def test_a_regular_file_is_read_up_to_its_cap(tmp_path: Path):
    path = tmp_path / "c.toml"
    path.write_bytes(b"x" * 10)
    assert read_small(path, cap=10) == b"x" * 10
    path.write_bytes(b"x" * 11)
    with pytest.raises(UnsafeFile, match="larger than 10 bytes"):
        read_small(path, cap=10)
    path.write_bytes(b"a" * (CONFIG_CAP + 1))
    with pytest.raises(UnsafeFile, match="shorten it"):
        read_small(path)


def test_absent_folder_and_link(tmp_path: Path):
    with pytest.raises(FileNotFoundError):
        read_small(tmp_path / "none.toml")
    hostile(tmp_path / "d", "dir")
    with pytest.raises(UnsafeFile, match="is a folder, not a regular file") as err:
        read_small(tmp_path / "d")
    assert why_unread(err.value) == "is a folder, not a regular file; replace it with a regular file"
    target = tmp_path / "real.toml"
    target.write_text("[project]\n", encoding="utf-8")
    (tmp_path / "link.toml").symlink_to(target)
    with pytest.raises(UnsafeFile, match="is a symlink, which memzoi never follows here"):
        read_small(tmp_path / "link.toml")
    assert read_small(tmp_path / "link.toml", follow=True) == b"[project]\n"  # the user's own file
    assert why_unread(PermissionError("x")) == "PermissionError"


@pytest.mark.parametrize(
    ("kind", "follow", "said"),
    [
        ("zero", False, "is a symlink"),
        ("zero", True, "is a character device, not a regular file"),
        ("fifo", False, "is a FIFO (named pipe), not a regular file"),
    ],
)
def test_fifos_and_devices_are_refused_without_a_read(tmp_path: Path, kind: str, follow: bool, said: str):
    hostile(tmp_path / "c.toml", kind)
    code = (
        "import sys; from memzoi.base.smallfile import read_small\n"
        "try:\n"
        f"    read_small(sys.argv[1], follow={follow})\n"
        "except OSError as err:\n"
        "    print(err)\n"
    )
    done = run(["python", "-c", code, str(tmp_path / "c.toml")], tmp_path)
    assert done.returncode == 0 and said in done.stdout, (done.stdout, done.stderr)


def test_a_fifo_with_a_writer_waiting_is_still_refused(tmp_path: Path):
    fifo = tmp_path / "c.toml"
    os.mkfifo(fifo)
    code = (
        "import os, sys; from memzoi.base.smallfile import read_small\n"
        "w = os.open(sys.argv[1], os.O_RDWR)  # a writer holds it open\n"
        "try:\n"
        "    read_small(sys.argv[1])\n"
        "except OSError as err:\n"
        "    print(err)\n"
    )
    done = run(["python", "-c", code, str(fifo)], tmp_path)
    assert done.returncode == 0 and "FIFO" in done.stdout, (done.stdout, done.stderr)
