"""Where multiprocessing's temporary folder (the fork server's socket) is made (:mod:`memzoi.base.forktemp`): an
owned folder in the memzoi home, else in ``$XDG_RUNTIME_DIR`` when the home's path is too long for a socket's
address, else the standard library's ``pymp-`` folder in ``$TMPDIR`` as before; removed at a normal exit, and by
:func:`~memzoi.base.forktemp.sweep_dead` once its process was killed."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from memzoi.base import forktemp, parallel
from memzoi.base.ownedfolder import OWNED

#: Gives multiprocessing its folder, starts a fork server there, prints the folder and the socket, then waits for a
#: line (killed meanwhile, or ends normally).
RUN = r"""
import multiprocessing, sys
from multiprocessing import forkserver, util
from memzoi.base import forktemp, parallel

print(forktemp.own_temp_dir(), flush=True)
print(util.get_temp_dir(), flush=True)
assert parallel.start_helper("json")
with multiprocessing.get_context("forkserver").Pool(1) as pool:
    assert pool.apply(sum, ([1, 2],)) == 3
print(forkserver._forkserver._forkserver_address, flush=True)
sys.stdin.readline()
"""

pytestmark = pytest.mark.skipif(not parallel.can_use_helper(), reason="no fork server on this platform")


def _run(env: dict[str, str]) -> tuple[subprocess.Popen[str], list[str]]:
    proc = subprocess.Popen(
        [sys.executable, "-c", RUN],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        env={k: v for k, v in {**os.environ, **env}.items() if v},
    )
    assert proc.stdout is not None
    return proc, [proc.stdout.readline().strip() for _ in range(3)]


def _end(proc: subprocess.Popen[str]) -> None:
    assert proc.stdin is not None
    proc.stdin.close()
    assert proc.wait(timeout=60) == 0


@pytest.fixture
def places(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """A short memzoi home, a short runtime folder and a temporary folder of the test's own."""
    return {
        "MEMZOI_HOME": str(tmp_path_factory.mktemp("h")),
        "XDG_RUNTIME_DIR": str(tmp_path_factory.mktemp("x")),
        "TMPDIR": str(tmp_path_factory.mktemp("t")),
    }


def test_the_socket_folder_is_owned_in_the_memzoi_home_and_removed_at_exit(places: dict[str, str]):
    proc, (owned, folder, socket) = _run(places)
    try:
        assert owned == "True"
        assert Path(folder).parent == Path(places["MEMZOI_HOME"]) / OWNED
        assert Path(folder).name.startswith(forktemp.PREFIX) and Path(socket).parent == Path(folder)
        assert os.listdir(places["TMPDIR"]) == []
    finally:
        _end(proc)
    assert not Path(folder).exists()


def test_a_home_too_long_for_a_socket_gives_the_runtime_folder_and_then_the_standard_one(places: dict[str, str]):
    long_home = Path(places["MEMZOI_HOME"]) / ("h" * 90)
    proc, (owned, folder, _) = _run({**places, "MEMZOI_HOME": str(long_home)})
    _end(proc)
    assert owned == "True" and Path(folder).parent == Path(places["XDG_RUNTIME_DIR"]) / OWNED
    proc, (owned, folder, _) = _run({**places, "MEMZOI_HOME": str(long_home), "XDG_RUNTIME_DIR": ""})
    try:
        assert owned == "False" and Path(folder).parent == Path(places["TMPDIR"])
        assert Path(folder).name.startswith("pymp-")  # the standard library's, as before
    finally:
        _end(proc)
    assert os.listdir(places["TMPDIR"]) == []


def test_a_killed_processs_folder_is_swept_a_live_ones_is_kept(places: dict[str, str], monkeypatch):
    for key, value in places.items():
        monkeypatch.setenv(key, value)
    killed, (_, dead, _) = _run(places)
    live, (_, alive, _) = _run(places)
    try:
        killed.send_signal(signal.SIGKILL)
        killed.wait()
        assert Path(dead).is_dir()
        assert forktemp.sweep_dead() == [Path(dead).name]
        assert not Path(dead).exists() and Path(alive).is_dir()
    finally:
        _end(live)
    assert forktemp.sweep_dead() == [] and not Path(alive).exists()
    assert os.listdir(places["TMPDIR"]) == []


def test_a_folder_made_already_is_kept(tmp_path: Path):
    script = "from multiprocessing import util; from memzoi.base import forktemp\n"
    script += "before = util.get_temp_dir(); print(forktemp.own_temp_dir(), util.get_temp_dir() == before)"
    out = subprocess.run(
        [sys.executable, "-c", script],
        capture_output=True,
        text=True,
        check=True,
        env={**os.environ, "TMPDIR": str(tmp_path)},
    )
    assert out.stdout.split() == ["False", "True"]
