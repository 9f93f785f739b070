"""An agent as the editor tests need one: the official MCP SDK's stdio client driving ``memzoi-mcp`` for a project,
run by the VS Code agent-loop driver (cs_agent_loop.js) at the moment the loop needs it.

    python tests/editors/mcp_agent.py propose ROOT        -> {"proposal_id", "title", "path"}
    python tests/editors/mcp_agent.py search ROOT QUERY   -> the search_memory result's structured content

It prints one JSON object and exits 0, or prints the tool's error text and exits 1. ``MEMZOI_HOME`` and
``ZUNO_CONFIG_DIR`` are passed to the server (the editor's runtime plane)."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import anyio

CLIENT = "claude-code"
TITLE = "Token refreshes go through RefreshLock"
PROPOSAL = {
    "title": TITLE,
    "body": "Every token refresh takes RefreshLock first; without it two tabs race and log the user out.",
    "type": "procedure",
    "lane": "procedural",
    "reason": "fixed the same race twice",
    "confidence": 0.8,
    "applies_to": ["src/auth/**"],
    "tags": ["auth"],
}


async def call(root: Path, tool: str, arguments: dict) -> tuple[bool, dict, str]:
    """Call ``tool`` of a fresh ``memzoi-mcp --root root`` session: ``(is_error, structured content, text)``."""
    import mcp_types as types
    from mcp.client.session import ClientSession
    from mcp.client.stdio import StdioServerParameters, stdio_client

    env = {k: v for k, v in os.environ.items() if k in ("PATH", "HOME", "MEMZOI_HOME", "ZUNO_CONFIG_DIR")}
    params = StdioServerParameters(
        command=str(Path(sys.executable).with_name("memzoi-mcp")), args=["--root", str(root)], env=env
    )
    with open(os.devnull, "w") as errlog:
        async with stdio_client(params, errlog=errlog) as (read, write):
            async with ClientSession(read, write, client_info=types.Implementation(name=CLIENT, version="1")) as s:
                await s.initialize()
                res = await s.call_tool(tool, arguments)
    return bool(res.is_error), res.structured_content or {}, res.content[0].text if res.content else ""


def main(argv: list[str]) -> int:
    what, root = argv[0], Path(argv[1])
    if what == "propose":
        failed, data, text = anyio.run(call, root, "propose_memory", PROPOSAL)
        out = {"proposal_id": data.get("proposal_id"), "title": TITLE, "path": data.get("path")}
    else:
        failed, data, text = anyio.run(call, root, "search_memory", {"query": argv[2]})
        out = data
    if failed:
        print(text)
        return 1
    print(json.dumps(out))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
