"""Fault-injection helpers: run an operation in a forked child that hard-exits (``os._exit``, no cleanup) at the
N-th numbered durable step, and snapshot project trees byte for byte."""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Callable
from pathlib import Path

import pytest

from memzoi import ledger

CRASH_EXIT = 77
REFUSED_EXIT = 3

if not hasattr(os, "fork"):  # pragma: no cover - Windows
    pytest.skip("fault injection forks child processes (POSIX only)", allow_module_level=True)


def run_child(
    fn: Callable[[], object], crash_at: int | str | None = None, log: Path | None = None
) -> tuple[int, list[str]]:
    """Run ``fn`` in a forked child. The child exits with :data:`CRASH_EXIT` at step ``crash_at`` (1-based, or
    the first step of that name),
    :data:`REFUSED_EXIT` on a :class:`~memzoi.ledger.Refusal`, 4 on another exception, else 0. Returns the exit
    code and the step names the child reached. With ``log``, every step is appended there as ``pid step``."""
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:  # child
        os.close(r)
        count = 0

        def hook(name: str) -> None:
            nonlocal count
            count += 1
            os.write(w, (name + "\n").encode())
            if log is not None:
                fd = os.open(log, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
                os.write(fd, f"{os.getpid()} {name}\n".encode())
                os.close(fd)
            if crash_at is not None and crash_at in (count, name):
                os._exit(CRASH_EXIT)

        ledger.set_fault_hook(hook)
        code = 0
        try:
            fn()
        except ledger.Refusal:
            code = REFUSED_EXIT
        except BaseException:  # noqa: BLE001 - report, never unwind into pytest in the child
            code = 4
        os._exit(code)
    os.close(w)
    chunks = []
    while True:
        data = os.read(r, 65536)
        if not data:
            break
        chunks.append(data)
    os.close(r)
    _, status = os.waitpid(pid, 0)
    return os.waitstatus_to_exitcode(status), b"".join(chunks).decode().split()


def tree(root: Path) -> dict[str, bytes]:
    """Every regular file under ``root`` (``.git`` excluded) as ``relative posix path -> bytes``."""
    out = {}
    for p in sorted(root.rglob("*")):
        if ".git" in p.relative_to(root).parts or not p.is_file():
            continue
        out[p.relative_to(root).as_posix()] = p.read_bytes()
    return out


@pytest.fixture
def scratch(tmp_path):
    """Where crashed or raced copies live: a RAM file system when there is one. The tests kill processes or race
    them, they do not cut power, so fsync durability is not what they check, and a tmpfs makes hundreds of
    points fast."""
    shm = Path("/dev/shm")
    if shm.is_dir() and os.access(shm, os.W_OK):
        path = Path(tempfile.mkdtemp(prefix="memzoi-test-", dir=shm))
        yield path
        shutil.rmtree(path, ignore_errors=True)
    else:
        yield tmp_path
