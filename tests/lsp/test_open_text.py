"""A push client gets the diagnostics of an open document from its text, never from the disk (issue 28: Emacs got
disk diagnostics for an open buffer whose text differs), whatever spelling of the file's path the client uses
(here a workspace reached through a symlink, as a home directory often is), and under both client profiles."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

import pytest

from .. import builders
from .conftest import PROFILES, diagnostics, is_pull, open_doc, start_client, wait_until


@pytest.mark.parametrize("profile", list(PROFILES))
async def test_open_document_is_judged_from_its_text_through_a_symlinked_root(
    profile, workspace: Path, memzoi_home: Path, tmp_path: Path
):
    link = tmp_path / "link"
    os.symlink(workspace, link)
    on_disk = workspace / ".memzoi" / "records" / "use-pnpm.md"
    good = on_disk.read_text()
    on_disk.write_text(builders.edit(good, "lane: semantic", "lane: nowhere"))  # invalid_value on disk only
    client = await start_client(profile, link, memzoi_home, wait_scanned=False)
    try:
        uri = open_doc(client, link / ".memzoi" / "records" / "use-pnpm.md", text=good)  # the buffer is fixed
        await wait_until(lambda: any("scanned" in m.message for m in client.log_messages), timeout=20)
        got = await diagnostics(client, uri)
        assert not any(d.code == "invalid_value" for d in got), got
        if not is_pull(client):
            same_file = [u for u in client.diagnostic_history if u.endswith("/records/use-pnpm.md")]
            for u in same_file:  # a client maps every spelling of the path to the one buffer
                last = client.diagnostic_history[u][-1]
                assert not any(d.code == "invalid_value" for d in last), (u, last)
    finally:
        await asyncio.wait_for(client.shutdown_session(), 10)
        await client.stop()
