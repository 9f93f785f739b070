"""A symlinked record, or a symlinked folder, inside ``.memzoi`` is refused by ``memzoi check`` (``canonical_path`` and
``unsafe_output_path``); the language server shows the same two errors for it without its being opened, at start
and when a link appears while the server runs, and clears them when the link goes. The link is never read through.
Under both client profiles (push and pull); the server watches the folder itself. Conditions are awaited."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from pytest_lsp import client_capabilities

from .conftest import PROFILES, diagnostics, record_text, start_client, stop_client

LINKED = ["canonical_path", "unsafe_output_path"]


def check_codes(root: Path, home: Path) -> dict[str, list[str]]:
    """``memzoi check --no-cache``'s codes by file name."""
    done = subprocess.run(
        [sys.executable, "-m", "memzoi", "check", "--format", "json", "--no-cache"],
        cwd=root,
        env={**os.environ, "MEMZOI_HOME": str(home)},
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
    )
    out: dict[str, list[str]] = {}
    for f in json.loads(done.stdout)["findings"]:
        out.setdefault(f["path"].rsplit("/", 1)[-1], []).append(f["code"])
    return {k: sorted(v) for k, v in out.items()}


def codes(items: list) -> list[str]:
    return sorted(str(d.code) for d in items)


@pytest.mark.parametrize("profile", list(PROFILES))
async def test_symlinks_check_refuses_are_shown_closed_at_start_and_live(
    tmp_path: Path, workspace: Path, memzoi_home: Path, profile: str
):
    records = workspace / ".memzoi" / "records"
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "linked-widgets.md").write_text(record_text("linked-widgets", "Linked widgets"))
    file_link, folder_link = records / "linked-widgets.md", records / "linked"
    file_link.symlink_to(outside / "linked-widgets.md")
    folder_link.symlink_to(outside)
    found = check_codes(workspace, memzoi_home)
    assert found["linked-widgets.md"] == LINKED and found["linked"] == LINKED
    caps = client_capabilities(PROFILES[profile])
    if caps.workspace is not None and caps.workspace.did_change_watched_files is not None:
        caps.workspace.did_change_watched_files.dynamic_registration = False  # the server watches .memzoi itself
    client = await start_client(profile, workspace, memzoi_home, capabilities=caps)
    try:
        for link in (file_link, folder_link):
            got = await diagnostics(client, link.as_uri(), until=lambda d: codes(d) == LINKED, timeout=20)
            assert all(d.severity == 1 for d in got)
        live = records / "live-widgets.md"  # made while the server runs
        live.symlink_to(outside / "linked-widgets.md")
        await diagnostics(client, live.as_uri(), until=lambda d: codes(d) == LINKED, timeout=20)
        assert check_codes(workspace, memzoi_home)["live-widgets.md"] == LINKED
        live.unlink()
        await diagnostics(client, live.as_uri(), until=lambda d: d == [], timeout=20)
    finally:
        await stop_client(client)
