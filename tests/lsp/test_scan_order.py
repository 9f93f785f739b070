"""The workspace scan and the opened document: the document the editor opens is diagnosed before the scan of a
large workspace is done, so the first diagnostics never wait for it (conditions are awaited; no time is
asserted)."""

from __future__ import annotations

from pathlib import Path

import pytest
from lsprotocol import types

from .conftest import PROFILES, diagnostics, open_doc, record_text, start_client, wait_until


def _scan_ended(client) -> bool:
    """True once the scan's work-done progress has ended or its closing log message arrived."""
    ended = any(
        isinstance(r, types.WorkDoneProgressEnd)
        for token, reports in client.progress_reports.items()
        if str(token).startswith("memzoi-scan")
        for r in reports
    )
    return ended or any(m.message.startswith("memzoi-lsp: scanned") for m in client.log_messages)


@pytest.mark.parametrize("profile", list(PROFILES))
async def test_the_opened_document_is_diagnosed_before_the_scan_ends(profile: str, tmp_path: Path):
    root = tmp_path / "ws"
    records = root / ".memzoi" / "records"
    records.mkdir(parents=True)
    for i in range(2500):  # a scan of some seconds
        (records / f"rec-{i}.md").write_text(record_text(f"rec-{i}", title=f"Record {i}"))
    opened = records / "opened.md"
    opened.write_text(record_text("opened").replace("lane: semantic", "lane: nope"))
    client = await start_client(profile, root, tmp_path / "home", wait_ready=False, wait_scanned=False)
    try:
        uri = open_doc(client, opened)
        got = await diagnostics(client, uri, until=lambda d: [x.code for x in d] == ["invalid_value"], timeout=60)
        assert [d.code for d in got] == ["invalid_value"]
        assert not _scan_ended(client), "the opened document's diagnostics waited for the scan"
        await wait_until(lambda: any("scanned 2501 files" in m.message for m in client.log_messages), 120)
        if profile == "vscode":  # pushed once on open, and not published again from disk by the scan
            assert len(client.diagnostic_history[uri]) >= 1
            assert all([d.code for d in h] == ["invalid_value"] for h in client.diagnostic_history[uri])
        await client.shutdown_session()
    finally:
        await client.stop()


async def test_a_corrupt_verdict_cache_never_breaks_the_scan(tmp_path: Path):
    import os
    import subprocess
    import sys

    root = tmp_path / "ws"
    records = root / ".memzoi" / "records"
    records.mkdir(parents=True)
    for i in range(5):
        (records / f"rec-{i}.md").write_text(record_text(f"rec-{i}", title=f"Record {i}"))
    bad = records / "bad.md"
    bad.write_text(record_text("bad").replace("lane: semantic", "lane: nope"))
    home = tmp_path / "home"
    home.mkdir()
    env = {**os.environ, "MEMZOI_HOME": str(home)}
    subprocess.run(
        [sys.executable, "-m", "memzoi", "check", ".memzoi"],
        cwd=root,
        env=env,
        capture_output=True,
        stdin=subprocess.DEVNULL,
    )
    [db] = sorted(home.rglob("memzoi-lsp-store.db"))
    db.write_bytes(b"not a database" * 512)
    client = await start_client("vscode", root, home)
    try:
        got = await diagnostics(
            client, bad.as_uri(), until=lambda d: [x.code for x in d] == ["invalid_value"], timeout=20
        )
        assert [d.code for d in got] == ["invalid_value"]
        assert any(
            "scanned 6 files" in m.message and "(0 from the verdict cache)" in m.message for m in client.log_messages
        )
        await client.shutdown_session()
    finally:
        await client.stop()
    # The server replaced the database with a sound one holding the files it analysed: check reads them.
    import sqlite3

    with sqlite3.connect(db) as conn:
        assert conn.execute("SELECT count(*) FROM entries").fetchone()[0] == 6
