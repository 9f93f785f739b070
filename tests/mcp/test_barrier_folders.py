"""The MCP server's write-barrier folder (:mod:`memzoi.stores.changefeed`, an
:class:`~memzoi.base.ownedfolder.OwnedFolder` in the memzoi home): a server killed with SIGKILL leaves its folder,
and the next server started removes it; two live servers on one project keep each other's."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from memzoi.base.ownedfolder import OWNED

from .conftest import home, project  # noqa: F401 - fixtures

SERVER = Path(sys.executable).with_name("memzoi-mcp")


def _start(project: Path, home: Path) -> subprocess.Popen[bytes]:
    """``memzoi-mcp --root project``, initialized (its watcher and barrier folder start then), with a temporary
    folder of the test's own."""
    (home.parent / "tmp").mkdir(exist_ok=True)
    env = {"MEMZOI_HOME": str(home), "PATH": os.environ.get("PATH", ""), "TMPDIR": str(home.parent / "tmp")}
    proc = subprocess.Popen(
        [str(SERVER), "--root", str(project)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        env=env,
    )
    assert proc.stdin is not None and proc.stdout is not None
    hello = {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}
    proc.stdin.write(json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": hello}).encode())
    proc.stdin.write(b"\n")
    proc.stdin.flush()
    assert json.loads(proc.stdout.readline())["id"] == 1
    proc.stdin.write(json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}).encode() + b"\n")
    proc.stdin.flush()
    return proc


def _folders(home: Path) -> set[str]:
    """The barrier folders left in the memzoi home, and any in the temporary folder (where they once were made)."""
    out = set()
    for top in (home / OWNED, home.parent / "tmp"):
        if top.is_dir():
            out |= {e.path for e in os.scandir(top) if e.is_dir()}
    return out


def _until(predicate, timeout: float = 60.0):
    """Wait for ``predicate()`` to hold (polled); its value."""
    deadline = time.monotonic() + timeout
    while not (got := predicate()):
        assert time.monotonic() < deadline, "condition not met"
        time.sleep(0.02)
    return got


def _stop(proc: subprocess.Popen[bytes]) -> None:
    assert proc.stdin is not None
    proc.stdin.close()  # end of input: the server ends its session and stops its watchers
    proc.wait(timeout=60)


def test_a_killed_servers_barrier_folder_is_removed_by_the_next(project, home):
    first = _start(project, home)
    (killed,) = _until(lambda: _folders(home))
    first.send_signal(signal.SIGKILL)
    first.wait()
    assert _folders(home) == {killed}  # SIGKILL: nothing could remove it
    second = _start(project, home)
    try:
        (mine,) = _until(lambda: _folders(home) - {killed})  # its own is made after the killed one is swept
        assert _folders(home) == {mine}
    finally:
        _stop(second)
    assert _folders(home) == set()  # a server that ends leaves nothing


def test_two_live_servers_keep_each_others_folder(project, home):
    first = _start(project, home)
    try:
        (one,) = _until(lambda: _folders(home))
        second = _start(project, home)
        try:
            both = _until(lambda: _folders(home) if len(_folders(home)) == 2 else None)
            assert one in both
        finally:
            _stop(second)
        assert _folders(home) == {one}
    finally:
        _stop(first)
    assert _folders(home) == set()
