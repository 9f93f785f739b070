"""The setup snippets of docs/mcp.md: each is what ``memzoi mcp config`` prints (with the placeholder path), parses
(TOML for Codex, JSON for the others, shell words for ``claude mcp add``), names ``memzoi-mcp`` with options the
server accepts, and the server it describes, started with its arguments and environment as that client starts it
(working directory, inherited or scrubbed environment, ``${workspaceFolder}``), answers ``initialize`` through the
SDK client, lists its tools and serves the project."""

from __future__ import annotations

import json
import os
import re
import shlex
import sys
import tomllib
from contextlib import asynccontextmanager
from pathlib import Path

import mcp_types as types
import pytest
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

from memzoi.agent.mcpconfig import CLIENTS, PASSED_ENV, snippets as generated
from memzoi_mcp.server import build_parser

from .conftest import FACT_ID
from .test_stdio_e2e import TOOLS

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "mcp.md"
COMMAND = "/path/to/memzoi-lsp/.venv/bin/memzoi-mcp"
PROJECT = "/path/to/project"
SERVER = Path(sys.executable).with_name("memzoi-mcp")
CLIENT_OF = {
    "claude": "claude-code",
    "claude-project": "claude-code",
    "codex": "codex",
    "cursor": "cursor",
    "vscode": "vscode",
    "zed": "zed",
}
#: What Codex keeps of the environment (reference agent-clients.md).
CODEX_KEPT = ("HOME", "LANG", "PATH", "SHELL", "TERM", "PWD", "SHLVL")


def snippets() -> dict[str, str]:
    """``<!-- snippet: NAME -->`` followed by a fenced block, by name."""
    text = DOC.read_text(encoding="utf-8")
    found = re.findall(r"<!-- snippet: ([\w-]+) -->\n```\w*\n(.*?)\n```", text, flags=re.S)
    return dict(found)


def server_of(name: str, text: str) -> dict:
    """The ``{"command", "args", "env", "env_vars"}`` a snippet configures."""
    if name == "claude":
        argv = shlex.split(text)
        assert argv[:3] == ["claude", "mcp", "add"]
        cut = argv.index("--")
        assert argv[cut - 1] == "memzoi" and argv[argv.index("--transport") + 1] == "stdio"
        return {"command": argv[cut + 1], "args": argv[cut + 2 :]}
    if name == "codex":
        return tomllib.loads(text)["mcp_servers"]["memzoi"]
    data = json.loads(text)
    key = {"claude-project": "mcpServers", "cursor": "mcpServers", "vscode": "servers", "zed": "context_servers"}[name]
    server = data[key]["memzoi"]
    if name in ("claude-project", "vscode"):
        assert server["type"] == "stdio"
    return server


def test_every_client_has_its_snippets_as_memzoi_mcp_config_prints_them():
    docs = snippets()
    assert set(docs) == set(CLIENT_OF) and set(CLIENT_OF.values()) == set(CLIENTS)
    for client in CLIENTS:
        for s in generated(client, COMMAND, project=PROJECT if client == "zed" else None):
            assert docs[s.name] == s.text, s.name


def test_console_script_is_declared():
    meta = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    assert meta["project"]["scripts"]["memzoi-mcp"] == "memzoi_mcp.server:main"
    assert any(d.startswith("mcp") for d in meta["project"]["dependencies"])


def test_no_machine_path_in_the_committed_mcp_json():
    server = server_of("claude-project", snippets()["claude-project"])
    assert server == {"type": "stdio", "command": "memzoi-mcp", "args": [], "env": {}}


def launch(name: str, server: dict, project: Path, home: Path, zuno: Path, elsewhere: Path) -> StdioServerParameters:
    """How the client of snippet ``name`` starts ``server`` (reference agent-clients.md)."""
    command = str(SERVER) if server["command"] == COMMAND else server["command"]  # a bare name: found on PATH
    args = [str(project) if a in (PROJECT, "${workspaceFolder}") else a for a in server.get("args", [])]
    user = {
        "MEMZOI_HOME": str(home),
        "ZUNO_CONFIG_DIR": str(zuno),
        "HOME": str(elsewhere),
        "PATH": f"{SERVER.parent}{os.pathsep}{os.environ.get('PATH', '')}",
    }
    if name == "codex":  # a scrubbed environment, plus the variables env_vars names; cwd = the session directory
        env = {k: user[k] for k in CODEX_KEPT if k in user}
        env |= {k: user[k] for k in server.get("env_vars", []) if k in user}
        return StdioServerParameters(command=command, args=args, env=env, cwd=str(project))
    env = {**user, **server.get("env", {})}
    if name.startswith("claude"):  # the whole environment, in the project, CLAUDE_PROJECT_DIR set
        return StdioServerParameters(
            command=command, args=args, env={**env, "CLAUDE_PROJECT_DIR": str(project)}, cwd=str(project)
        )
    return StdioServerParameters(command=command, args=args, env=env, cwd=str(elsewhere))  # Cursor: $HOME


@asynccontextmanager
async def session(params: StdioServerParameters):
    with open(os.devnull, "w") as errlog:
        async with stdio_client(params, errlog=errlog) as (read, write):
            async with ClientSession(read, write, client_info=types.Implementation(name="setup", version="1")) as s:
                init = await s.initialize()
                assert init.server_info.name
                yield s


@pytest.mark.parametrize("name", sorted(CLIENT_OF))
async def test_snippet_starts_the_server_as_its_client_does(name, project, home, tmp_path):
    server = server_of(name, snippets()[name])
    assert server["command"] in (COMMAND, "memzoi-mcp") and Path(server["command"]).name == "memzoi-mcp"
    build_parser().parse_args(server.get("args", []))  # options the server accepts (exits 2 otherwise)
    elsewhere, zuno = tmp_path / "user-home", tmp_path / "zuno"
    elsewhere.mkdir()
    async with session(launch(name, server, project, home, zuno, elsewhere)) as s:
        assert {t.name for t in (await s.list_tools()).tools} == TOOLS
        found = await s.call_tool("search_memory", {"query": "hatch build"})
        assert not found.is_error and [h["id"] for h in found.structured_content["results"]] == [FACT_ID]
        resident = await s.call_tool("get_resident_memory", {})
    (glob,) = [f for f in resident.structured_content["files"] if f["scope"] == "global"]
    assert Path(glob["path"]).is_relative_to(zuno)  # the user's ZUNO_CONFIG_DIR reached the server
    assert (home / "projects").is_dir()  # and so did MEMZOI_HOME: the index lives in the user's store


async def test_codex_without_env_vars_loses_the_users_stores(project, home, tmp_path):
    """The defect the snippet's env_vars fixes: Codex's scrubbed environment drops both variables."""
    server = server_of("codex", snippets()["codex"])
    assert server["env_vars"] == list(PASSED_ENV)
    elsewhere, zuno = tmp_path / "user-home", tmp_path / "zuno"
    elsewhere.mkdir()
    async with session(launch("codex", {**server, "env_vars": []}, project, home, zuno, elsewhere)) as s:
        resident = await s.call_tool("get_resident_memory", {})
    (glob,) = [f for f in resident.structured_content["files"] if f["scope"] == "global"]
    assert not Path(glob["path"]).is_relative_to(zuno) and Path(glob["path"]).is_relative_to(elsewhere)
