"""Sections C–F of the bug-class cases (shared/cases/bug-classes.md), replayed against the real server for both
client profiles: incremental sync (B19, B22), lifecycle and start-up (B27, B30), and file events (B33, B34,
B36, B37). The VS Code profile registers ``didChangeWatchedFiles`` dynamically, so there the test plays the
client and sends the events; the Neovim profile does not, so the server's own watcher sees the real files."""

from __future__ import annotations

import asyncio
import os
import shutil
import time
from pathlib import Path

import pytest
from lsprotocol import types

from ..builders import edit
from .conftest import (
    diagnostics,
    is_pull,
    open_doc,
    proposal_text,
    record_text,
    refusal,
    start_client,
    units,
    wait_until,
)


async def symbol_detail(client, uri: str, key: str) -> str | None:
    syms = await client.text_document_document_symbol_async(
        types.DocumentSymbolParams(text_document=types.TextDocumentIdentifier(uri=uri))
    )
    fm = [s for s in syms if s.name == "frontmatter"][0]
    return {c.name: c.detail for c in fm.children}.get(key)


def change(client, uri: str, version: int, edits: list[tuple[int, int, int, int, str]]) -> None:
    client.text_document_did_change(
        types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=version),
            content_changes=[
                types.TextDocumentContentChangePartial(
                    range=types.Range(
                        start=types.Position(line=a, character=b), end=types.Position(line=c, character=d)
                    ),
                    text=t,
                )
                for a, b, c, d, t in edits
            ],
        )
    )


async def test_b19_incremental_insert_after_multibyte_character(client, workspace: Path):
    path = workspace / ".memzoi" / "records" / "use-pnpm.md"
    text = record_text("use-pnpm", title="öbc")
    uri = open_doc(client, path, text)
    line = text.split("\n").index('title: "öbc"')  # the builder quotes a non-ASCII scalar
    col = units('title: "ö', client.profile)
    change(client, uri, 2, [(line, col, line, col, "a")])
    assert await wait_until_async(lambda: symbol_detail(client, uri, "title"), "öabc")


async def wait_until_async(fn, expected, timeout: float = 8.0):
    deadline = time.monotonic() + timeout
    value = None
    while time.monotonic() < deadline:
        value = await fn()
        if value == expected:
            return True
        await asyncio.sleep(0.03)
    raise AssertionError(f"last value {value!r}, expected {expected!r}")


async def test_b22_several_changes_in_one_notification_applied_once(client, workspace: Path):
    path = workspace / ".memzoi" / "records" / "use-pnpm.md"
    text = record_text("use-pnpm", title="😀 記録 x")
    uri = open_doc(client, path, text)
    line = text.split("\n").index('title: "😀 記録 x"')  # the builder quotes a non-ASCII scalar
    col = units('title: "😀 記録 ', client.profile)
    change(
        client,
        uri,
        2,
        [
            (line, col, line, col, "a"),
            (line, col + 1, line, col + 1, "b"),
            (line, col + 2, line, col + 2, "c"),
            (line, col + 3, line, col + 4, "!"),  # replace the x
        ],
    )
    assert await wait_until_async(lambda: symbol_detail(client, uri, "title"), "😀 記録 abc!")


async def test_incremental_fix_clears_stale_diagnostic(client, workspace: Path):
    path = workspace / ".memzoi" / "records" / "use-pnpm.md"
    text = edit(record_text("use-pnpm"), "lane: semantic", "lane: sideways")
    uri = open_doc(client, path, text)
    await diagnostics(client, uri, lambda d: [x.code for x in d] == ["invalid_value"])
    line = text.split("\n").index("lane: sideways")
    change(client, uri, 2, [(line, 6, line, 14, "semantic")])
    assert await diagnostics(client, uri, lambda d: d == []) == []


async def test_a_symlink_loop_opened_in_the_editor_is_canonical_path_not_internal_error(client, workspace: Path):
    # Path.resolve() raises RuntimeError on a loop (Python before 3.13): the ledger lookup turned that into
    # internal_error for the file
    path = workspace / ".memzoi" / "records" / "loop.md"
    path.symlink_to("loop.md")
    uri = open_doc(client, path, "")
    found = await diagnostics(client, uri, lambda d: bool(d))
    codes = [x.code for x in found]
    assert "internal_error" not in codes and "canonical_path" in codes


@pytest.mark.parametrize("profile", ["vscode", "neovim"])
async def test_b27_slow_scan_does_not_block_initialize(profile, tmp_path: Path):
    root = tmp_path / "ws"
    records = root / ".memzoi" / "records"
    records.mkdir(parents=True)
    for i in range(3000):
        (records / f"rec-{i}.md").write_text(record_text(f"rec-{i}", title=f"Record {i}"))
    (records / "bad.md").write_text(edit(record_text("bad"), "lane: semantic", "lane: nope"))
    home = tmp_path / "home"
    client = await start_client(profile, root, home, wait_ready=False, wait_scanned=False)
    try:
        # A request during the scan gets an answer (best effort), not a timeout.
        uri = open_doc(client, records / "rec-1.md")
        res = await asyncio.wait_for(
            client.text_document_hover_async(
                types.HoverParams(
                    text_document=types.TextDocumentIdentifier(uri=uri), position=types.Position(line=1, character=1)
                )
            ),
            5,
        )
        assert res is not None
        await wait_until(lambda: any("scanned 3001 files" in m.message for m in client.log_messages), 60)
        if profile == "vscode":
            [(token, reports)] = [
                (t, r) for t, r in client.progress_reports.items() if str(t).startswith("memzoi-scan")
            ]
            assert isinstance(reports[0], types.WorkDoneProgressBegin)
            assert isinstance(reports[-1], types.WorkDoneProgressEnd)
            assert any(isinstance(r, types.WorkDoneProgressReport) for r in reports)
            bad = (records / "bad.md").as_uri()
            assert [d.code for d in client.diagnostics[bad]] == ["invalid_value"]
            assert len(client.diagnostics) == 2  # only bad.md (+ the open rec-1, published clean)
        await client.shutdown_session()
    finally:
        await client.stop()


async def test_b30_root_without_memzoi_is_not_walked(tmp_path: Path):
    root = tmp_path / "home-like"
    for i in range(200):
        d = root / f"dir{i}"
        d.mkdir(parents=True)
        (d / "notes.md").write_text("# notes\n")
    client = await start_client("neovim", root, tmp_path / "home", wait_scanned=False)
    try:
        uri = open_doc(client, root / "dir1" / "notes.md")
        assert await diagnostics(client, uri) == []
        res = await client.workspace_symbol_async(types.WorkspaceSymbolParams(query=""))
        assert not res
        assert not any("scanned" in m.message for m in client.log_messages)
        await client.shutdown_session()
    finally:
        await client.stop()


# --- F: file events ----------------------------------------------------------------------------------------


def fs_events(client, *events: tuple[Path, types.FileChangeType]) -> None:
    """Play the editor's file watcher when the client registered one (VS Code); otherwise the server's own
    watcher sees the real files and nothing is sent."""
    if client.registrations:
        client.workspace_did_change_watched_files(
            types.DidChangeWatchedFilesParams(changes=[types.FileEvent(uri=p.as_uri(), type=t) for p, t in events])
        )


async def closed_diags(client, path: Path, until, timeout: float = 10.0):
    """Diagnostics of a closed file: pushed (VS Code) or pulled with workspace/diagnostic (Neovim)."""
    uri = path.as_uri()
    if not is_pull(client):

        def check():
            d = client.diagnostics.get(uri)
            d = None if d is None else list(d)
            return (True, d) if until(d) else None

        return (await wait_until(check, timeout))[1]
    deadline = time.monotonic() + timeout
    while True:
        report = await client.workspace_diagnostic_async(types.WorkspaceDiagnosticParams(previous_result_ids=[]))
        items = [i for i in report.items if i.uri == uri]
        diags = list(items[0].items) if items else None
        if until(diags):
            return diags
        if time.monotonic() > deadline:
            raise AssertionError(f"closed-file diagnostics never matched: {diags!r}")
        await asyncio.sleep(0.05)


async def test_b33_atomic_save_is_one_modification(client, workspace: Path):
    records = workspace / ".memzoi" / "records"
    target = records / "rec-1.md"
    target.write_text(edit(record_text("rec-1", "Rec one"), "lane: semantic", "lane: first"))
    fs_events(client, (target, types.FileChangeType.Created))
    await closed_diags(client, target, lambda d: d is not None and [x.code for x in d] == ["invalid_value"])
    # vim with backupcopy=no: backup file, 4913 probe, new file, rename over the original.
    shutil.copy(target, records / "rec-1.md~")
    probe = records / "4913"
    probe.write_text("")
    probe.unlink()
    tmp = records / ".rec-1.md.tmp"
    tmp.write_text(edit(record_text("rec-1", "Rec one"), "lane: semantic", "lane: second"))
    os.replace(tmp, target)
    (records / "rec-1.md~").unlink()
    fs_events(
        client,
        (records / "rec-1.md~", types.FileChangeType.Created),
        (target, types.FileChangeType.Deleted),
        (target, types.FileChangeType.Created),
        (records / "rec-1.md~", types.FileChangeType.Deleted),
    )
    # "second" is one character longer than "first": the range tells the versions apart.
    diags = await closed_diags(client, target, lambda d: bool(d) and d[0].range.end.character == 12)
    assert [x.code for x in diags] == ["invalid_value"]
    if not is_pull(client):
        history = client.diagnostic_history[target.as_uri()]
        assert [] not in history  # never flashed a "deleted" (cleared) state
        assert not any("4913" in u or u.endswith("~") or ".tmp" in u for u in client.diagnostic_history)


async def test_b34_appends_to_new_file_end_in_final_state(client, workspace: Path):
    pending = workspace / ".memzoi" / "proposals" / "pending"
    p9 = pending / "p-9.md"
    text = proposal_text("p-9", body="Validate sessions for p-9 on the server.")
    head, tail = text[: len(text) // 2], text[len(text) // 2 :]
    p9.write_text(head)
    fs_events(client, (p9, types.FileChangeType.Created))
    for chunk in (tail[:10], tail[10:20], tail[20:]):
        with open(p9, "a") as fh:
            fh.write(chunk)
        fs_events(client, (p9, types.FileChangeType.Created))
        await asyncio.sleep(0.05)
    for _ in range(200):
        res = await client.workspace_symbol_async(types.WorkspaceSymbolParams(query="Validate sessions"))
        if any(s.container_name == "p-9" for s in res or []):
            break
        await asyncio.sleep(0.05)
    assert any(s.container_name == "p-9" for s in res)  # the complete packet is indexed
    assert not await closed_diags(client, p9, lambda d: not d)  # and its final state is clean
    if not is_pull(client):
        assert len(client.diagnostic_history.get(p9.as_uri(), [])) <= 3


async def test_b36_continuous_rewrites_validated_at_bounded_rate(client, workspace: Path):
    rec3 = workspace / ".memzoi" / "records" / "rec-3.md"
    rec3.write_text(record_text("rec-3", "Rec three"))
    fs_events(client, (rec3, types.FileChangeType.Created))
    writes = 100
    for i in range(writes):  # a count of writes, paced like an editor's autosave, not a length of time
        rec3.write_text(edit(record_text("rec-3", "Rec three"), "lane: semantic", "lane: " + "v" * (1 + i % 9)))
        fs_events(client, (rec3, types.FileChangeType.Changed))
        await asyncio.sleep(0.02)
    during = len(client.diagnostic_history.get(rec3.as_uri(), []))
    rec3.write_text(edit(record_text("rec-3", "Rec three"), "lane: semantic", "lane: " + "z" * 20))  # the last write
    fs_events(client, (rec3, types.FileChangeType.Changed))
    diags = await closed_diags(client, rec3, lambda d: bool(d) and d[0].range.end.character == 26)
    assert [x.code for x in diags] == ["invalid_value"]
    if not is_pull(client):
        # 100 writes were re-validated at a bounded rate, not once per write (a count, not a time).
        assert during * 4 < writes, during


async def test_b37_move_proposal_to_records_and_delete_clears(client, workspace: Path):
    pending = workspace / ".memzoi" / "proposals" / "pending"
    p1 = pending / "p-1.md"
    p1.write_text(edit(proposal_text("p-1", body="Moved packet body."), "lane: semantic", "lane: bad"))
    fs_events(client, (p1, types.FileChangeType.Created))
    await closed_diags(client, p1, lambda d: bool(d))
    dest = workspace / ".memzoi" / "records" / "rec-p1.md"
    os.rename(p1, dest)
    fs_events(client, (p1, types.FileChangeType.Deleted), (dest, types.FileChangeType.Created))
    await closed_diags(client, p1, lambda d: not d)  # cleared (push: []; pull: no longer reported)
    await closed_diags(client, dest, lambda d: bool(d))  # the moved file is now a (broken) record
    # directory-level event: rename a folder of records
    team = workspace / ".memzoi" / "records" / "team"
    team.mkdir()
    (team / "x.md").write_text(edit(record_text("team/x", "Team x"), "lane: semantic", "lane: bad"))
    fs_events(client, (team, types.FileChangeType.Created))
    await closed_diags(client, team / "x.md", lambda d: bool(d))
    group = workspace / ".memzoi" / "records" / "group"
    os.rename(team, group)
    fs_events(client, (team, types.FileChangeType.Deleted), (group, types.FileChangeType.Created))
    await closed_diags(client, team / "x.md", lambda d: not d)
    await closed_diags(client, group / "x.md", lambda d: bool(d))


async def test_incremental_edit_after_unicode_line_separator(client, workspace: Path):
    # U+2028 is not a line break for LSP clients; pygls's splitlines() would shift every later edit by a line.
    path = workspace / ".memzoi" / "records" / "use-pnpm.md"
    text = record_text("use-pnpm") + "\nNote a\u2028b ## Tail\n\n## Old\n"
    uri = open_doc(client, path, text)
    lines = text.split("\n")
    heading = lines.index("## Old")
    change(client, uri, 2, [(heading, 3, heading, 6, "New")])

    async def headings():
        syms = await client.text_document_document_symbol_async(
            types.DocumentSymbolParams(text_document=types.TextDocumentIdentifier(uri=uri))
        )
        return [s.name for s in syms if s.name != "frontmatter"]

    assert await wait_until_async(headings, ["Use pnpm", "New"])
    note = lines.index("Note a\u2028b ## Tail")
    col = units("Note a\u2028b ", client.profile)
    change(client, uri, 3, [(note, 0, note, col, "")])  # the line now starts with "## Tail": a heading
    assert await wait_until_async(headings, ["Use pnpm", "Tail", "New"])


async def test_b16_write_action_on_malformed_record_refused_byte_for_byte(client, workspace: Path):
    path = workspace / ".memzoi" / "records" / "rec-bad.md"
    raw = edit(
        record_text("rec-bad", "Bad"),
        'description: "Use pnpm for every package task."',
        'description: "a "quoted" word"',
    ).encode()
    path.write_bytes(raw)
    fs_events(client, (path, types.FileChangeType.Created))
    uri = open_doc(client, path)
    await diagnostics(client, uri, lambda d: any(x.code == "yaml_syntax" for x in d))
    res = await client.text_document_code_action_async(
        types.CodeActionParams(
            text_document=types.TextDocumentIdentifier(uri=uri),
            range=types.Range(start=types.Position(line=0, character=0), end=types.Position(line=0, character=0)),
            context=types.CodeActionContext(diagnostics=[], only=["source"]),
        )
    )
    # offered only as disabled (with the reason) or not at all
    assert all(
        a.disabled is not None for a in res or [] if a.kind in ("source.memzoi.tombstone", "source.memzoi.supersede")
    )
    for command in ("memzoi.tombstone", "memzoi.supersede"):
        out = await refusal(
            client.workspace_execute_command_async(
                types.ExecuteCommandParams(command=command, arguments=[{"uri": uri, "reason": "cleanup"}])
            )
        )
        assert out["code"], out
    assert path.read_bytes() == raw  # no second frontmatter block, no lost field
    assert not list((workspace / ".memzoi" / "proposals" / "pending").glob("*rec-bad*"))


async def test_b17_one_bad_file_does_not_block_the_others(tmp_path: Path):
    root = tmp_path / "ws"
    records = root / ".memzoi" / "records"
    records.mkdir(parents=True)
    for i in range(50):
        (records / f"rec-{i}.md").write_text(record_text(f"rec-{i}", f"Record number {i}"))
    (records / "bad.md").write_text(edit(record_text("bad", "Bad one"), 'title: "Bad one"', "title: [[link]]tail"))
    client = await start_client("vscode", root, tmp_path / "home")
    try:
        published = {u: d for u, d in client.diagnostics.items() if d}
        assert list(published) == [(records / "bad.md").as_uri()]
        assert {d.code for d in published[(records / "bad.md").as_uri()]} <= {"yaml_syntax", "title_h1_mismatch"}
        hits = await client.workspace_execute_command_async(
            types.ExecuteCommandParams(command="memzoi.search", arguments=["Record number"])
        )
        assert len({h["id"] for h in hits}) >= 10  # the search lists them (bounded page), from the index
        syms = await client.workspace_symbol_async(types.WorkspaceSymbolParams(query="Record"))
        assert len({s.container_name for s in syms}) == 50
        await client.shutdown_session()
    finally:
        await client.stop()
