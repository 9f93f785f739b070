"""memzoi-mcp with a repository's ``.memzoi/config.toml`` linked to ``/dev/zero`` or made a FIFO: a tool answers
(no ``internal_error``, no traceback on the server's stderr) instead of reading without end or hanging. The server
runs under an address-space limit (:mod:`tests.bounded`)."""

from __future__ import annotations

import os
from pathlib import Path

import anyio
import mcp_types as types
import pytest
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

from .. import builders
from ..bounded import TIMEOUT, hostile, module_command


@pytest.mark.parametrize("kind", ["zero", "fifo"])
async def test_a_tool_answers_without_an_internal_error(tmp_path: Path, kind: str):
    root = tmp_path / "p"
    (root / ".memzoi" / "records").mkdir(parents=True)
    (root / ".memzoi" / "records" / "use-pnpm.md").write_text(builders.record("use-pnpm"), encoding="utf-8")
    hostile(root / ".memzoi" / "config.toml", kind)
    command = module_command("memzoi_mcp")
    params = StdioServerParameters(
        command=command[0],
        args=[*command[1:], "--root", str(root)],
        env={
            "MEMZOI_HOME": str(tmp_path / "home"),
            "PATH": os.environ.get("PATH", ""),
            **{k: v for k, v in os.environ.items() if k == "PYTHONPATH"},
        },
    )
    errors = tmp_path / "stderr.txt"
    with errors.open("w") as errlog, anyio.fail_after(TIMEOUT):
        async with stdio_client(params, errlog=errlog) as (read, write):
            async with ClientSession(read, write, client_info=types.Implementation(name="t", version="1")) as s:
                await s.initialize()
                answer = await s.call_tool("search_memory", {"query": "pnpm"})
    text = " ".join(getattr(c, "text", "") for c in answer.content)
    assert "internal_error" not in text and "MemoryError" not in text, text
    assert "Traceback" not in errors.read_text(encoding="utf-8")
