"""A cold scan of a project of many files takes the files analysed ahead of it (:mod:`memzoi.runs.prefill`), from
the fork server forked once ``initialize`` is answered: after the protocol libraries are imported when the server
answers it itself (a first start), before them when a kept answer went out at once (later starts). Either way every
file's diagnostics equal ``memzoi check``'s, and the search index holds the records. Conditions are awaited; no time
is asserted."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path

from .conftest import record_text, start_client, wait_until
from .test_verdict_parity import _cli, as_rows, check_findings

INVALID = "lane: nope"


def _project(root: Path, n: int) -> Path:
    records = root / ".memzoi" / "records"
    records.mkdir(parents=True)
    for i in range(n):
        text = record_text(f"rec-{i:04d}", title=f"Record {i}")
        (records / f"rec-{i:04d}.md").write_text(text.replace("lane: semantic", INVALID) if i % 7 == 0 else text)
    return records


async def _session(root: Path, home: Path) -> tuple[dict[str, list[tuple]], bool]:
    """One cold session: its diagnostics per absolute path once the scan ended (``start_client`` waits for it), and
    whether the scan took files analysed ahead of it, after checking that the fork server was forked from the
    server."""
    client = await start_client("vscode", root, home, init_options={"logToClient": True, "logLevel": "info"})
    logs: list[str] = []
    try:
        # the log bridge's copy of the scan's end: the bridge sends records in order, so the scan's earlier record
        # of what it took ahead is in by then
        await wait_until(lambda: any("memzoi_lsp.scan: scanned" in m.message for m in client.log_messages), 30)
        found = {str(Path(uri.removeprefix("file://")).resolve()): as_rows(d) for uri, d in client.diagnostics.items()}
    finally:  # the server stopped before any assertion fails (a client's stop waits for the server to exit)
        logs = [m.message for m in client.log_messages]
        await client.shutdown_session()
        await client.stop()
    assert any("fork server was forked from the server" in m for m in logs), logs
    return {k: v for k, v in found.items() if v}, any("analysed ahead of the scan" in m for m in logs)


async def _taking_session(root: Path, home: Path, forget: Callable[[], None]) -> dict[str, list[tuple]]:
    """A cold session (after ``forget``) whose scan took files analysed ahead of it: how many the pre-filling made
    before the scan claimed them depends on the machine's load (on a loaded machine, none), so a session that took
    none is run again, up to three times; every session's diagnostics must equal check's."""
    for _ in range(3):
        forget()
        found, took = await _session(root, home)
        assert found == check_findings(root, home)
        if took:
            return found
    raise AssertionError("no scan of three took a file analysed ahead of it")


async def test_cold_scans_take_what_was_analysed_ahead_and_say_what_check_says(tmp_path: Path):
    root, home = tmp_path / "ws", tmp_path / "home"
    records = _project(root, 420)

    def first_start() -> None:  # no tool caches, no kept answer: the fork server forks after the protocol libraries
        shutil.rmtree(home, ignore_errors=True)

    def project_forgotten() -> None:  # its store, index and publish set; the tool's caches kept: the kept answer
        for store in home.glob("projects"):  # goes out at once and the fork server forks before the libraries
            shutil.rmtree(store)

    first = await _taking_session(root, home, first_start)
    assert (home / "cache").is_dir() and any((home / "cache").iterdir())
    (records / "rec-0001.md").write_text(record_text("rec-0001", title="Record 1").replace("lane: semantic", INVALID))
    second = await _taking_session(root, home, project_forgotten)
    assert second != first
    found = _cli(root, home, "search", "--mode", "phrase", "Record 419", "--json")
    assert found.returncode == 0 and "rec-0419" in found.stdout


def test_the_folders_read_before_the_protocol_libraries_are_those_initialize_names(tmp_path: Path):
    from memzoi_lsp.__main__ import _early_roots

    a, b = tmp_path / "a b", tmp_path / "c"
    folders = [{"uri": a.as_uri(), "name": "a"}, {"uri": "untitled:x", "name": "x"}, {"uri": b.as_uri(), "name": "c"}]
    assert _early_roots({"workspaceFolders": folders, "rootUri": "file:///elsewhere"}) == [a.resolve(), b.resolve()]
    assert _early_roots({"workspaceFolders": None, "rootUri": b.as_uri()}) == [b.resolve()]
    assert _early_roots({"rootUri": None, "rootPath": str(a)}) == [a.resolve()]
    assert _early_roots({"workspaceFolders": "junk", "rootUri": 3}) == []
