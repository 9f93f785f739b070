"""The workers' fork server's socket folder (:mod:`memzoi.base.forktemp`): made in the memzoi home, owned by the
server, never a ``pymp-`` folder in ``$TMPDIR``; a server killed with SIGKILL leaves its folder, which the next
server's start removes (with a killed cache writer's temporary file, :mod:`memzoi.runs.leftovers`), while a live
server's folder is never removed; a server that ends removes its own."""

from __future__ import annotations

import asyncio
import os
import signal
from pathlib import Path

import pytest
from pytest_lsp import LanguageClient

from memzoi.base import parallel
from memzoi.base.codecache import FILE_PREFIX
from memzoi.base.forktemp import PREFIX
from memzoi.base.ownedfolder import OWNED
from memzoi.base.privatewrite import temp_path
from memzoi.runs.coldstart import PARALLEL_THRESHOLD

from .conftest import record_text, start_client, wait_until

pytestmark = pytest.mark.skipif(not parallel.can_use_helper(), reason="no fork server on this platform")


def _cold(root: Path) -> Path:
    """A project without a store holding as many records as a scan starts its workers at."""
    records = root / ".memzoi" / "records"
    records.mkdir(parents=True)
    for i in range(PARALLEL_THRESHOLD):
        (records / f"r-{i}.md").write_text(record_text(f"r-{i}", f"Record {i}"), encoding="utf-8")
    return root


def _sockets(home: Path) -> set[Path]:
    """The fork servers' socket folders in the memzoi home that hold their socket."""
    top = home / OWNED
    if not top.is_dir():
        return set()
    return {
        Path(e.path)
        for e in os.scandir(top)
        if e.name.startswith(PREFIX) and any(n.startswith("listener-") for n in os.listdir(e.path))
    }


def _folders(home: Path) -> set[Path]:
    top = home / OWNED
    return {Path(e.path) for e in os.scandir(top) if e.name.startswith(PREFIX)} if top.is_dir() else set()


async def _end(client: LanguageClient) -> None:
    try:
        await asyncio.wait_for(client.shutdown_session(), 20)
    finally:
        await client.stop()


async def test_a_killed_servers_socket_folder_goes_at_the_next_start_a_live_ones_stays(
    tmp_path: Path, tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
):
    memzoi_home = tmp_path_factory.mktemp("h")  # short: a socket's address holds 108 bytes
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    monkeypatch.setenv("TMPDIR", str(tmp))  # the servers' $TMPDIR: nothing may be left there
    monkeypatch.delenv("XDG_RUNTIME_DIR", raising=False)
    (memzoi_home / "cache").mkdir()
    early = temp_path(memzoi_home / "cache" / f"{FILE_PREFIX}early.marshal")  # a cache writer killed before its rename
    early.write_bytes(b"partial")
    live = await start_client("vscode", _cold(tmp_path / "live"), memzoi_home, wait_scanned=False)
    try:
        (kept,) = await wait_until(lambda: _sockets(memzoi_home), timeout=60)
        # the live server's own sweep (once, a period after its first scan) is over, so that only the next start
        # may sweep the killed server's folder below: the torn cache file planted before it started is gone
        await wait_until(lambda: not early.exists(), timeout=60)
        killed = await start_client("vscode", _cold(tmp_path / "killed"), memzoi_home, wait_scanned=False)
        (left,) = await wait_until(lambda: _sockets(memzoi_home) - {kept}, timeout=60)
        killed._server.send_signal(signal.SIGKILL)  # type: ignore[attr-defined]  # pytest-lsp's server process
        try:
            await killed.stop()
        except Exception:  # noqa: BLE001 - the server is gone: stopping it may fail, nothing else matters here
            pass
        assert left.is_dir()  # SIGKILL: nothing could remove it
        small = tmp_path / "small"
        (small / ".memzoi" / "records").mkdir(parents=True)
        (small / ".memzoi" / "records" / "one.md").write_text(record_text("one"), encoding="utf-8")
        # a cache writer killed before its rename (its lock free, its bytes written)
        (memzoi_home / "cache").mkdir(exist_ok=True)
        torn = temp_path(memzoi_home / "cache" / f"{FILE_PREFIX}dead.marshal")
        torn.write_bytes(b"partial")
        nxt = await start_client("vscode", small, memzoi_home)  # not cold: its start only sweeps
        try:
            await wait_until(lambda: not left.exists() and not torn.exists(), timeout=30)
            assert kept in _sockets(memzoi_home)  # the live server's folder and socket stay
        finally:
            await _end(nxt)
    finally:
        await _end(live)
    assert _folders(memzoi_home) == set()  # a server that ends removes its own
    assert not [n for n in os.listdir(tmp) if n.startswith("pymp-")]
