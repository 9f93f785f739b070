"""Folders a process owns for its life (:mod:`memzoi.base.ownedfolder`): a folder whose owner was killed is removed
by the next process that takes one, a live owner's never."""

from __future__ import annotations

import os
import signal
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from memzoi.base import ownedfolder
from memzoi.base.ownedfolder import OwnedFolder

OWNER = """
import sys
from memzoi.base.ownedfolder import OwnedFolder
folder = OwnedFolder("child-")
print(folder.path, flush=True)
sys.stdin.read()  # alive until its stdin closes
folder.close()
"""


@pytest.fixture(autouse=True)
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    h = tmp_path / "home"
    monkeypatch.setenv("MEMZOI_HOME", str(h))
    return h


def _owner() -> tuple[subprocess.Popen[str], str]:
    """A process holding an owned folder (its path); it ends when its stdin closes."""
    proc = subprocess.Popen([sys.executable, "-c", OWNER], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    return proc, proc.stdout.readline().strip()


def test_a_folder_is_private_and_removed_at_close(home: Path):
    folder = OwnedFolder("t-")
    path = Path(folder.path)
    assert path.parent == home / ownedfolder.OWNED and path.name.startswith("t-")
    assert stat.S_IMODE(path.stat().st_mode) == 0o700 and stat.S_IMODE(path.parent.stat().st_mode) == 0o700
    assert stat.S_IMODE((path / ownedfolder.OWNER_LOCK).stat().st_mode) == 0o600
    folder.close()
    folder.close()
    assert not path.exists()


def test_a_killed_owners_folder_is_removed_by_the_next_a_live_ones_is_kept():
    dead, dead_path = _owner()
    live, live_path = _owner()
    try:
        dead.send_signal(signal.SIGKILL)
        dead.wait()
        assert os.path.isdir(dead_path)  # nothing could remove it at the kill
        mine = OwnedFolder("t-")
        assert not os.path.exists(dead_path) and os.path.isdir(live_path) and os.path.isdir(mine.path)
        assert ownedfolder.sweep() == []  # a live owner's folder, and this process's, stay
        assert os.path.isdir(live_path) and os.path.isdir(mine.path)
        mine.close()
    finally:
        assert live.stdin is not None
        live.stdin.close()
        live.wait()
    assert not os.path.exists(live_path)  # its owner closed it


def test_a_folder_left_without_its_lock_file_is_removed(home: Path):
    """A kill between making the folder and locking it (both under the folders' lock) leaves a folder without a
    lock file: nobody's."""
    left = home / ownedfolder.OWNED / "changefeed-left"
    left.mkdir(parents=True)
    (left / "7").write_text("")
    assert ownedfolder.sweep() == ["changefeed-left"]
    assert not left.exists()


def test_no_folder_where_the_home_cannot_be_written(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    (tmp_path / "file").write_text("")
    monkeypatch.setenv("MEMZOI_HOME", str(tmp_path / "file"))
    with pytest.raises(OSError):
        OwnedFolder("t-")
