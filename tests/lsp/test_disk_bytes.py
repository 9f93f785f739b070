"""The editor and ``memzoi check`` agree on the findings of a file's bytes (promise 3): an editor that decodes a
Latin-1 record itself (Neovim's ``fileencodings``) sends valid UTF-8 text, yet the server reports check's
``invalid_encoding`` from the bytes on disk, until the file is saved as UTF-8; a record over the size limit gets
``file_too_large`` as check gives it."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from lsprotocol import types

from .conftest import PROFILES, diagnostics, open_doc, record_text, start_client, units


def check_json(root: Path, path: Path) -> list[dict]:
    """``memzoi check --format json`` of ``path``: its findings, as the CLI gives them."""
    out = subprocess.run(
        [sys.executable, "-m", "memzoi", "check", "--format", "json", str(path)],
        cwd=root,
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)},
        stdin=subprocess.DEVNULL,
    )
    return json.loads(out.stdout)["findings"]


def codes(diags: list[types.Diagnostic]) -> list[object]:
    return [d.code for d in diags]


def open_buffer(client, path: Path, text: str) -> str:
    """``didOpen`` of ``path`` with ``text``, after forgetting what the scan pushed for the file from disk (push
    mode), so that only what the server says of the open document is looked at."""
    client.diagnostics.pop(path.as_uri(), None)
    return open_doc(client, path, text=text)


@pytest.mark.parametrize("profile", list(PROFILES))
async def test_latin1_record_shows_checks_invalid_encoding_until_saved_as_utf8(
    profile, workspace: Path, memzoi_home: Path
):
    text = record_text("cafe-build", "Café build")
    path = workspace / ".memzoi" / "records" / "cafe-build.md"
    path.write_bytes(text.encode("latin-1"))
    (want,) = [f for f in check_json(workspace, path) if f["code"] == "invalid_encoding"]
    client = await start_client(profile, workspace, memzoi_home)
    try:
        uri = open_buffer(client, path, text)  # what Neovim sends: the decoded text, valid UTF-8
        got = await diagnostics(client, uri, until=lambda d: "invalid_encoding" in codes(d))
        (diag,) = [d for d in got if d.code == "invalid_encoding"]
        assert diag.severity == types.DiagnosticSeverity.Error and want["severity"] == "error"
        assert (diag.range.start.line, diag.range.start.character) == (
            want["range"]["start"]["line"],
            want["range"]["start"]["character"],
        )
        assert "byte offset" in diag.message
        hover = await client.text_document_hover_async(
            types.HoverParams(text_document=types.TextDocumentIdentifier(uri=uri), position=types.Position(1, 8))
        )
        assert hover is not None and "invalid_encoding" in str(hover.contents), hover

        path.write_text(text, encoding="utf-8")  # the user saves the buffer as UTF-8
        client.text_document_did_save(
            types.DidSaveTextDocumentParams(text_document=types.TextDocumentIdentifier(uri=uri))
        )
        await diagnostics(client, uri, until=lambda d: "invalid_encoding" not in codes(d))
        assert not [f for f in check_json(workspace, path) if f["code"] == "invalid_encoding"]
    finally:
        await asyncio.wait_for(client.shutdown_session(), 10)
        await client.stop()


@pytest.mark.parametrize("profile", list(PROFILES))
@pytest.mark.parametrize("decoding", ["latin-1", "utf-8"])
async def test_the_bad_byte_after_multibyte_characters_is_underlined_where_the_editor_shows_it(
    profile, decoding, workspace: Path, memzoi_home: Path
):
    # UTF-8 text whose one Latin-1 byte (é of "café") follows characters of two, three and four UTF-8 bytes: check
    # counts each as one code point; Neovim falls back to latin1 and shows each byte as one character; VS Code
    # decodes as UTF-8 with replacement characters.
    text = record_text("cafe-build", "Ünï€😀 café")
    data = text.encode("utf-8").replace("café".encode(), b"caf\xe9")
    path = workspace / ".memzoi" / "records" / "cafe-build.md"
    path.write_bytes(data)
    shown = data.decode(decoding, "replace")  # the editor's text of the file
    line = data[: data.index(b"\xe9")].count(b"\n")  # the first bad byte's line: the title's
    row = shown.split("\n")[line]
    before = row[: row.index("caf") + 3]  # the line up to the bad byte, as the editor shows it
    client = await start_client(profile, workspace, memzoi_home)
    try:
        uri = open_buffer(client, path, shown)
        got = await diagnostics(client, uri, until=lambda d: "invalid_encoding" in codes(d))
        (diag,) = [d for d in got if d.code == "invalid_encoding"]
        assert (diag.range.start.line, diag.range.start.character) == (line, units(before, profile))
        assert (diag.range.end.line, diag.range.end.character) == (line, units(row[: len(before) + 1], profile))
    finally:
        await asyncio.wait_for(client.shutdown_session(), 10)
        await client.stop()


@pytest.mark.parametrize("profile", list(PROFILES))
async def test_record_over_the_size_limit_shows_file_too_large(profile, workspace: Path, memzoi_home: Path):
    base = record_text("big-notes", "Big notes")
    text = base + ("Another line of notes about the build.\n" * 14_000)  # ~550 KB, over 512 KiB
    path = workspace / ".memzoi" / "records" / "big-notes.md"
    path.write_text(text, encoding="utf-8")
    want = {(f["code"], f["severity"]) for f in check_json(workspace, path)}
    assert ("file_too_large", "warning") in want
    client = await start_client(profile, workspace, memzoi_home)
    try:
        uri = open_buffer(client, path, text)
        got = await diagnostics(client, uri, until=lambda d: "file_too_large" in codes(d), timeout=20)
        assert [d.severity for d in got if d.code == "file_too_large"] == [types.DiagnosticSeverity.Warning]
    finally:
        await asyncio.wait_for(client.shutdown_session(), 10)
        await client.stop()


@pytest.mark.parametrize("profile", list(PROFILES))
async def test_small_buffer_of_a_large_file_shows_the_disks_file_too_large(profile, workspace: Path, memzoi_home: Path):
    text = record_text("big-notes", "Big notes")
    path = workspace / ".memzoi" / "records" / "big-notes.md"
    path.write_text(text + ("Another line of notes about the build.\n" * 14_000), encoding="utf-8")
    client = await start_client(profile, workspace, memzoi_home)
    try:
        uri = open_buffer(client, path, text)  # the buffer is small (unsaved cut); the file is not
        got = await diagnostics(client, uri, until=lambda d: "file_too_large" in codes(d), timeout=20)
        (diag,) = [d for d in got if d.code == "file_too_large"]
        assert diag.range.start.line == 0
    finally:
        await asyncio.wait_for(client.shutdown_session(), 10)
        await client.stop()
