"""The setup snippets of docs/mcp.md: each names ``memzoi-mcp`` with options the server accepts, and the server
each describes starts and lists its tools when the placeholders are filled in."""

from __future__ import annotations

import json
import re
import shlex
import tomllib
from pathlib import Path

import pytest

from memzoi_mcp.server import build_parser

from .test_stdio_e2e import TOOLS, connect

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "mcp.md"
COMMAND = "/path/to/memzoi-lsp/.venv/bin/memzoi-mcp"
PROJECT = "/path/to/project"


def snippets() -> dict[str, str]:
    """``<!-- snippet: NAME -->`` followed by a fenced block, by name."""
    text = DOC.read_text(encoding="utf-8")
    found = re.findall(r"<!-- snippet: (\w+) -->\n```\w*\n(.*?)\n```", text, flags=re.S)
    return dict(found)


def command_of(name: str, text: str) -> tuple[str, list[str]]:
    """The command and arguments a snippet configures."""
    if name == "claude":
        argv = shlex.split(text)
        assert argv[:3] == ["claude", "mcp", "add"]
        cut = argv.index("--")
        assert argv[cut - 1] == "memzoi" and "--transport" in argv[:cut]
        assert argv[argv.index("--transport") + 1] == "stdio"
        return argv[cut + 1], argv[cut + 2:]
    if name == "codex":
        server = tomllib.loads(text)["mcp_servers"]["memzoi"]
    elif name == "cursor":
        server = json.loads(text)["mcpServers"]["memzoi"]
    else:
        server = json.loads(text)["servers"]["memzoi"]
        assert server["type"] == "stdio"
    return server["command"], server["args"]


def test_every_client_has_a_snippet():
    assert set(snippets()) == {"claude", "codex", "cursor", "vscode"}


def test_console_script_is_declared():
    meta = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    assert meta["project"]["scripts"]["memzoi-mcp"] == "memzoi_mcp.server:main"
    assert any(d.startswith("mcp") for d in meta["project"]["dependencies"])


@pytest.mark.parametrize("name", ["claude", "codex", "cursor", "vscode"])
async def test_snippet_starts_the_server(name, project, home):
    command, args = command_of(name, snippets()[name])
    assert command == COMMAND and Path(command).name == "memzoi-mcp"
    parsed = build_parser().parse_args(args)
    assert parsed.root in (PROJECT, "${workspaceFolder}")
    real = [str(project) if a in (PROJECT, "${workspaceFolder}") else a for a in args]
    async with connect(project, home, argv=real) as s:
        assert {t.name for t in (await s.list_tools()).tools} == TOOLS
