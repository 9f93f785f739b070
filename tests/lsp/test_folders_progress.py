"""Workspace folders added and removed at run time, and the scan's work-done progress ``end`` sent only once its
publishing is done (issue 28 §6, issue 30 item 6), under both client profiles."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from lsprotocol import types

from .conftest import PROFILES, diagnostics, is_pull, record_text, start_client, wait_until


def _project(root: Path, body: str = "Same body.") -> Path:
    records = root / ".memzoi" / "records"
    records.mkdir(parents=True)
    for rid in ("a", "b"):  # twins: each gets a cross-file duplicate_content once the scan is done
        (records / f"{rid}.md").write_text(record_text(rid).replace("Use pnpm: applies to every package task.", body))
    return root


@pytest.fixture(params=list(PROFILES))
async def folder_client(request, tmp_path: Path, memzoi_home: Path):
    first = _project(tmp_path / "first")
    lsp = await start_client(request.param, first, memzoi_home)
    yield lsp
    try:
        await asyncio.wait_for(lsp.shutdown_session(), 10)
    finally:
        await lsp.stop()


def _change(client, added=(), removed=()):
    client.workspace_did_change_workspace_folders(
        types.DidChangeWorkspaceFoldersParams(
            event=types.WorkspaceFoldersChangeEvent(
                added=[types.WorkspaceFolder(uri=p.as_uri(), name=p.name) for p in added],
                removed=[types.WorkspaceFolder(uri=p.as_uri(), name=p.name) for p in removed],
            )
        )
    )


async def _search(client, query: str) -> list:
    return await client.workspace_execute_command_async(
        types.ExecuteCommandParams(command="memzoi.search", arguments=[{"query": query}])
    )


async def test_added_folder_is_scanned_and_removed_folder_forgotten(folder_client, tmp_path: Path):
    client = folder_client
    assert client.init_result.capabilities.workspace.workspace_folders.change_notifications
    second = _project(tmp_path / "second", body="Second body.")
    a2 = (second / ".memzoi" / "records" / "a.md").as_uri()
    _change(client, added=[second])
    await wait_until(
        lambda: any(str(second) in m.message and "scanned" in m.message for m in client.log_messages), timeout=20
    )
    got = await diagnostics(client, a2, until=lambda ds: any(d.code == "duplicate_content" for d in ds))
    assert any(d.code == "duplicate_content" for d in got)
    assert any("/second/" in (r.get("uri") or "") for r in await _search(client, "Second"))  # indexed

    _change(client, removed=[second])
    await wait_until(lambda: any("forgot project" in m.message for m in client.log_messages), timeout=10)
    if not is_pull(client):  # push: what was published for the folder's files is cleared
        assert client.diagnostic_history[a2][-1] == []
    else:  # pull: its files are no longer in the workspace report
        report = await client.workspace_diagnostic_async(types.WorkspaceDiagnosticParams(previous_result_ids=[]))
        assert not [i for i in report.items if str(second) in i.uri]
    # its files are no longer watched or known: a new file there registers nothing
    (second / ".memzoi" / "records" / "c.md").write_text(record_text("c"))
    assert not [r for r in await _search(client, "Second") if "/second/" in (r.get("uri") or "")]
    # the first folder is untouched
    first_a = (client.root / ".memzoi" / "records" / "a.md").as_uri()
    assert any(d.code == "duplicate_content" for d in await diagnostics(client, first_a))


async def test_progress_end_follows_the_scan_and_its_publishing(tmp_path: Path, memzoi_home: Path):
    for profile in PROFILES:
        root = _project(tmp_path / profile)
        client = await start_client(profile, root, memzoi_home, wait_scanned=False)
        try:
            order: list[str] = []
            features = client.protocol.fm.features
            publish = features[types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS]
            progress = features[types.PROGRESS]

            def on_publish(params, _publish=publish, _order=order):
                if any(d.code == "duplicate_content" for d in params.diagnostics):
                    _order.append("dup " + params.uri.rsplit("/", 1)[-1])
                return _publish(params)

            def on_progress(params, _progress=progress, _order=order):
                if getattr(params.value, "kind", None) == "end" or (
                    isinstance(params.value, dict) and params.value.get("kind") == "end"
                ):
                    _order.append("end")
                return _progress(params)

            features[types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS] = on_publish
            features[types.PROGRESS] = on_progress
            await wait_until(lambda: "end" in order, timeout=20)
            if not is_pull(client):  # push: both cross-file findings were published before the end
                assert sorted(order[: order.index("end")]) == ["dup a.md", "dup b.md"], order
            uri = (root / ".memzoi" / "records" / "a.md").as_uri()
            got = await diagnostics(client, uri, timeout=1)  # at once: nothing is still on its way
            assert any(d.code == "duplicate_content" for d in got)
        finally:
            await asyncio.wait_for(client.shutdown_session(), 10)
            await client.stop()
