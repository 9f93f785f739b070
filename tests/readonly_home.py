"""A memzoi home made read-only for real, as far as this machine allows: without root, its folders and files lose
their write bits (``chmod a-w``); as root, which ignores those bits, it is bind-mounted read-only on itself (a
mount visible to child processes too: a language server started meanwhile sees it). When neither works (root in
a container without mount rights) the test is skipped; the in-process tests emulate the home with
``tests.lifecycle.test_runtime_failures.Fault`` instead."""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest


def _writable(folder: Path) -> bool:
    probe = folder / ".write-probe"
    try:
        probe.write_bytes(b"")
    except OSError:
        return False
    probe.unlink()
    return True


def _mount(folder: Path) -> bool:
    mount = shutil.which("mount")
    if mount is None:
        return False
    if subprocess.run([mount, "--bind", str(folder), str(folder)], capture_output=True).returncode != 0:
        return False
    if subprocess.run([mount, "-o", "remount,bind,ro", str(folder)], capture_output=True).returncode != 0:
        _umount(folder)
        return False
    return True


def _umount(folder: Path) -> None:
    if subprocess.run(["umount", str(folder)], capture_output=True).returncode != 0:
        subprocess.run(["umount", "-l", str(folder)], capture_output=True, check=True)


@contextmanager
def read_only(folder: Path) -> Iterator[str]:
    """``folder`` (a memzoi home) read-only inside the ``with`` block; yields how (``chmod`` or ``mount``).
    Skips the test when this process could still write it."""
    if os.geteuid() != 0:
        modes = {p: stat.S_IMODE(p.stat().st_mode) for p in [folder, *folder.rglob("*")] if not p.is_symlink()}
        for p, mode in modes.items():
            p.chmod(mode & ~0o222)
        how = "chmod"
    elif _mount(folder):
        how = "mount"
    else:
        pytest.skip("root without mount rights: a read-only home cannot be made here")
    try:
        if _writable(folder):
            pytest.skip(f"{folder} is still writable after {how}")
        yield how
    finally:
        if how == "mount":
            _umount(folder)
        else:
            for p, mode in sorted(modes.items(), key=lambda kv: len(kv[0].parts)):
                p.chmod(mode)


def tree(folder: Path) -> dict[str, tuple[int, int]]:
    """Every file under ``folder`` with its size and modification time: what a read must leave as it was."""
    return {str(p.relative_to(folder)): (p.stat().st_size, p.stat().st_mtime_ns) for p in folder.rglob("*")}
