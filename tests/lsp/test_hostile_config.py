"""memzoi-lsp with a repository's ``.memzoi/config.toml`` linked to ``/dev/zero`` or made a FIFO: it answers
``initialize`` and a hover (no error, no traceback in any log message) and says in its log which file cannot be
read and why (the command line's ``invalid_config`` finding). The server runs under an address-space limit (:mod:`tests.bounded`), so a regression fails
with a MemoryError or a timeout instead of eating the machine's memory."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

import pytest
from lsprotocol import types
from pytest_lsp import ClientServerConfig, client_capabilities

from ..bounded import hostile, module_command
from .conftest import diagnostics, make_client, open_doc, record_text, wait_until

TIMEOUT = 60


@pytest.mark.parametrize("kind", ["zero", "fifo"])
async def test_initialize_and_hover_answer_with_a_finding_and_no_traceback(tmp_path: Path, kind: str):
    root = tmp_path / "ws"
    records = root / ".memzoi" / "records"
    records.mkdir(parents=True)
    (records / "use-pnpm.md").write_text(record_text("use-pnpm"), encoding="utf-8")
    hostile(root / ".memzoi" / "config.toml", kind)
    cfg = ClientServerConfig(
        server_command=module_command("memzoi_lsp"),
        client_factory=make_client,
        server_env={**os.environ, "MEMZOI_HOME": str(tmp_path / "home"), "PYTHONUNBUFFERED": "1"},
    )
    client = await cfg.start()
    try:
        await asyncio.wait_for(
            client.initialize_session(
                types.InitializeParams(
                    capabilities=client_capabilities("visual-studio-code"),
                    root_uri=root.as_uri(),
                    workspace_folders=[types.WorkspaceFolder(uri=root.as_uri(), name="ws")],
                )
            ),
            TIMEOUT,
        )
        await wait_until(lambda: any(m.message.startswith("memzoi-lsp: scanned") for m in client.log_messages), 30)
        uri = open_doc(client, records / "use-pnpm.md")
        await diagnostics(client, uri, timeout=30)
        answer = await asyncio.wait_for(
            client.text_document_hover_async(
                types.HoverParams(types.TextDocumentIdentifier(uri=uri), types.Position(line=1, character=1))
            ),
            TIMEOUT,
        )
        assert answer is None or isinstance(answer, types.Hover)
        said = "symlink, which memzoi never follows" if kind == "zero" else "FIFO (named pipe), not a regular file"
        named = [m.message for m in client.log_messages if "config.toml: cannot read the configuration" in m.message]
        assert named and all(said in m for m in named), [m.message for m in client.log_messages]
        logs = [m.message for m in client.log_messages]
        assert not any("Traceback" in m or "MemoryError" in m for m in logs), logs
    finally:
        try:
            await asyncio.wait_for(client.shutdown_session(), 10)
        finally:
            await client.stop()
