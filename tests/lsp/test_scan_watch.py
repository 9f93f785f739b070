"""The server's own ``.memzoi`` watcher is set up once the first scan is over (during the scan every file a worker
opened woke it), and a change made after the scan read a file and before the watches exist is still followed: once
they exist the project is listed once and every file whose state differs from the one the scan judged is judged
again (:mod:`memzoi.runs.scandrift`). Conditions are awaited; no time is asserted."""

from __future__ import annotations

from pathlib import Path

from pytest_lsp import client_capabilities

from .conftest import PROFILES, diagnostics, record_text, start_client, wait_until
from .test_scan_order import _scan_ended

INVALID = "lane: nope"


async def test_changes_made_during_the_scan_before_the_watches_exist_are_followed(tmp_path: Path):
    root = tmp_path / "ws"
    records = root / ".memzoi" / "records"
    records.mkdir(parents=True)
    for i in range(2500):  # a scan of some seconds, in worker processes
        (records / f"rec-{i}.md").write_text(record_text(f"rec-{i}", title=f"Record {i}"))
    edited = records / "aaa-edited.md"  # the first files listed: taken in the scan's first chunk
    edited.write_text(record_text("aaa-edited", title="Edited during the scan"))
    removed = records / "aab-removed.md"
    removed.write_text(record_text("aab-removed", title="Removed during the scan").replace("lane: semantic", INVALID))
    caps = client_capabilities(PROFILES["vscode"])  # push diagnostics; the server watches (no dynamic registration)
    assert caps.workspace is not None and caps.workspace.did_change_watched_files is not None
    caps.workspace.did_change_watched_files.dynamic_registration = False
    client = await start_client("vscode", root, tmp_path / "home", capabilities=caps, wait_scanned=False)
    try:
        # published as the scan takes it (a clean closed file is not: nothing to show); listed after ``edited``
        await wait_until(lambda: removed.as_uri() in client.diagnostics, 40)
        assert [d.code for d in client.diagnostics[removed.as_uri()]] == ["invalid_value"]
        assert not _scan_ended(client), "the scan ended before the test could change its files"
        edited.write_text(record_text("aaa-edited", title="Edited during the scan").replace("lane: semantic", INVALID))
        removed.unlink()
        added = records / "zzz-added.md"  # listed after the scan's listing: in no chunk of it
        added.write_text(record_text("zzz-added", title="Added during the scan").replace("lane: semantic", INVALID))
        assert not _scan_ended(client), "the scan ended while the test changed its files"
        await wait_until(lambda: any("scanned 2502 files" in m.message for m in client.log_messages), 60)
        # a cold scan of many files: its workers came from a fork server forked from the server before its first
        # thread (memzoi.runs.coldstart.prefork), which wrote nothing of its own to the client
        assert any("fork server was forked from the server" in m.message for m in client.log_messages)

        def codes(uri: str) -> list[str]:
            return [str(d.code) for d in client.diagnostics.get(uri, [])]

        await wait_until(lambda: codes(edited.as_uri()) == ["invalid_value"], 60)
        await wait_until(lambda: codes(added.as_uri()) == ["invalid_value"], 60)
        await wait_until(lambda: codes(removed.as_uri()) == [], 60)
        got = await diagnostics(client, edited.as_uri(), until=lambda d: [x.code for x in d] == ["invalid_value"])
        assert [d.code for d in got] == ["invalid_value"]
        # exactly the three changed files were judged again, not the 2,500 the scan judged by their verdicts
        drift = [m.message for m in client.log_messages if "changed before their watches" in m.message]
        assert len(drift) == 1 and "3 files of" in drift[0], drift
        await client.shutdown_session()
    finally:
        await client.stop()
