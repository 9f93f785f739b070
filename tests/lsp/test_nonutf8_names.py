"""A file below ``.memzoi`` whose name is not UTF-8 (byte 0xe9 in ``records/``) is refused by ``memzoi check``
(``canonical_path``, never read); the language server shows the same finding for it on a URI whose path
percent-encodes the raw bytes (RFC 8089/3986, as ``Path.as_uri`` gives it), closed at a cold and a warm start,
when it appears and goes while the server runs (the client's watcher and the server's own, which a name that is
not UTF-8 used to stop for good), and open under that URI. Under both client profiles (push and pull); conditions
are awaited. Skipped where the file system refuses such a name."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from lsprotocol import types
from pytest_lsp import client_capabilities

from .conftest import PROFILES, diagnostics, is_pull, record_text, start_client, stop_client

NAME = b"caf\xe9.md"
SHOWN = "caf\\xe9.md"  # check's lossless spelling of the byte (docs/cli.md)


def bad_file(folder: Path, name: bytes = NAME) -> Path:
    """The path of ``name`` (raw bytes) in ``folder``, written with a record's text; the test is skipped where the
    file system refuses the name (an ``EILSEQ`` from a UTF-8-only file system)."""
    path = Path(os.fsdecode(os.path.join(os.fsencode(folder), name)))
    try:
        path.write_text(record_text("cafe", "Cafe", extra="colour: blue\n"))  # an unknown key check never reads
    except OSError as err:
        pytest.skip(f"the file system refuses a name that is not UTF-8: {err}")
    return path


def check_rows(root: Path, home: Path, shown: str = SHOWN) -> list[tuple]:
    """``memzoi check --no-cache``'s findings of the file spelled ``shown``: (code, severity, range, message)."""
    done = subprocess.run(
        [sys.executable, "-m", "memzoi", "check", "--format", "json", "--no-cache"],
        cwd=root,
        env={**os.environ, "MEMZOI_HOME": str(home)},
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
    )
    assert done.returncode in (0, 1), done.stderr
    rows = []
    for f in json.loads(done.stdout)["findings"]:
        if f["path"].endswith("/" + shown):
            r = f["range"]
            rows.append((f["code"], f["severity"], r["start"]["line"], r["start"]["character"], r["end"]["line"], r["end"]["character"], f["message"]))  # fmt: skip
    return sorted(rows)


_SEVERITY = {1: "error", 2: "warning", 3: "information", 4: "hint"}


def rows(diags: list[types.Diagnostic]) -> list[tuple]:
    return sorted(
        (
            str(d.code),
            _SEVERITY[int(d.severity or 1)],
            d.range.start.line,
            d.range.start.character,
            d.range.end.line,
            d.range.end.character,
            d.message,
        )  # fmt: skip
        for d in diags
    )


def uri_of(path: Path) -> str:
    uri = path.as_uri()
    assert "%E9" in uri  # the raw byte, percent-encoded: the URI names the real file
    return uri


def own_watcher(profile: str) -> types.ClientCapabilities:
    """The profile's capabilities without dynamic watched-files registration: the server watches ``.memzoi``
    itself (watchfiles)."""
    caps = client_capabilities(PROFILES[profile])
    if caps.workspace is not None and caps.workspace.did_change_watched_files is not None:
        caps.workspace.did_change_watched_files.dynamic_registration = False
    return caps


async def workspace_uris(client) -> set[str]:
    """The URIs a workspace pull reports with diagnostics (pull profile)."""
    report = await client.workspace_diagnostic_async(types.WorkspaceDiagnosticParams(previous_result_ids=[]))
    return {item.uri for item in report.items if getattr(item, "items", None)}


@pytest.mark.parametrize("profile", list(PROFILES))
async def test_cold_and_warm_start_show_checks_finding_on_the_raw_bytes_uri(
    workspace: Path, memzoi_home: Path, profile: str
):
    path = bad_file(workspace / ".memzoi" / "records")
    want = check_rows(workspace, memzoi_home)
    assert [r[0] for r in want] == ["canonical_path"]  # check reads nothing of it: no unknown_key
    uri = uri_of(path)
    for start in ("cold", "warm"):  # the second session starts on the store and publish set the first one left
        client = await start_client(profile, workspace, memzoi_home)
        try:
            got = await diagnostics(client, uri, until=lambda d: rows(d) == want, timeout=20)
            assert rows(got) == want, start
            if is_pull(client):
                assert uri in await workspace_uris(client), start
        finally:
            await stop_client(client)


@pytest.mark.parametrize("watcher", ["client", "server"])
@pytest.mark.parametrize("profile", list(PROFILES))
async def test_a_watched_create_and_delete_show_and_clear_it_and_watching_goes_on(
    workspace: Path, memzoi_home: Path, profile: str, watcher: str
):
    records = workspace / ".memzoi" / "records"
    caps = client_capabilities(PROFILES[profile]) if watcher == "client" else own_watcher(profile)
    client = await start_client(profile, workspace, memzoi_home, capabilities=caps)
    try:
        if watcher == "client" and not any(
            r.method == types.WORKSPACE_DID_CHANGE_WATCHED_FILES for r in client.registrations
        ):
            pytest.skip("this profile's client does not watch files for the server")

        def changed(path: Path, kind: types.FileChangeType) -> None:
            if watcher == "client":  # what an editor's watcher sends: the URI of the raw bytes
                client.workspace_did_change_watched_files(
                    types.DidChangeWatchedFilesParams(changes=[types.FileEvent(uri=path.as_uri(), type=kind)])
                )

        path = bad_file(records)
        changed(path, types.FileChangeType.Created)
        want = check_rows(workspace, memzoi_home)
        assert [r[0] for r in want] == ["canonical_path"]
        got = await diagnostics(client, uri_of(path), until=lambda d: rows(d) == want, timeout=20)
        assert rows(got) == want
        # the watch goes on after such a name: a record made next is diagnosed (watchfiles' watcher used to stop)
        later = records / "later-widgets.md"
        later.write_text(record_text("later-widgets", "Later widgets", extra="colour: red\n"))
        changed(later, types.FileChangeType.Created)
        await diagnostics(client, later.as_uri(), until=lambda d: "unknown_key" in {str(x.code) for x in d}, timeout=20)
        path.unlink()
        changed(path, types.FileChangeType.Deleted)
        assert check_rows(workspace, memzoi_home) == []
        await diagnostics(client, uri_of(path), until=lambda d: d == [], timeout=20)
        if is_pull(client):
            assert uri_of(path) not in await workspace_uris(client)
    finally:
        await stop_client(client)


@pytest.mark.parametrize("profile", list(PROFILES))
async def test_did_open_of_the_raw_bytes_uri_gets_checks_finding(workspace: Path, memzoi_home: Path, profile: str):
    path = bad_file(workspace / ".memzoi" / "records")
    want = check_rows(workspace, memzoi_home)
    client = await start_client(profile, workspace, memzoi_home)
    try:
        uri = uri_of(path)
        client.text_document_did_open(
            types.DidOpenTextDocumentParams(
                text_document=types.TextDocumentItem(
                    uri=uri, language_id="markdown", version=1, text=path.read_text(encoding="utf-8")
                )
            )
        )
        got = await diagnostics(client, uri, until=lambda d: rows(d) == want, timeout=20)
        assert rows(got) == want  # the same file: check's one finding, not the buffer's unknown_key
        if is_pull(client):  # a lower-case escape names the same file
            lower = uri.replace("%E9", "%e9")
            got = await diagnostics(client, lower, until=lambda d: rows(d) == want, timeout=20)
            assert rows(got) == want
        client.text_document_did_close(
            types.DidCloseTextDocumentParams(text_document=types.TextDocumentIdentifier(uri=uri))
        )
        # a request answered after the close: what the close sent (push) has arrived by then
        other = workspace / ".memzoi" / "records" / "use-pnpm.md"
        await client.text_document_hover_async(
            types.HoverParams(
                text_document=types.TextDocumentIdentifier(uri=other.as_uri()), position=types.Position(0, 0)
            )
        )
        got = await diagnostics(client, uri, until=lambda d: True, timeout=20)
        assert rows(got) == want  # closed again: still check's finding, never cleared
    finally:
        await asyncio.wait_for(client.shutdown_session(), 10)
        await client.stop()
