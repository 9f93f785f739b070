"""The configuration snippet that makes each agent client start ``memzoi-mcp``, for this machine.

How each client starts a stdio server (reference ``agent-clients.md``, "How each client starts a stdio MCP
server"), and so what each snippet holds:

- **Claude Code** starts the server in the project, with the whole environment and ``CLAUDE_PROJECT_DIR`` set: the
  snippet is ``claude mcp add --transport stdio memzoi -- <memzoi-mcp>``, no ``--root``. For the team, a committed
  ``.mcp.json`` names ``memzoi-mcp`` by name (found on each person's ``PATH``), never a machine path.
- **Codex CLI** starts the server in the session directory with a scrubbed environment (``HOME LANG PATH SHELL
  TERM PWD SHLVL`` and CA variables): ``env_vars = ["MEMZOI_HOME", "ZUNO_CONFIG_DIR"]`` passes the two variables
  that locate the user's runtime store and resident memory, so what an agent proposes from Codex lands where the
  user's ``memzoi`` reads.
- **Cursor** starts the server in ``$HOME``: the project comes from ``"--root", "${workspaceFolder}"``.
- **VS Code** (``.vscode/mcp.json``): ``"type": "stdio"`` and ``"--root", "${workspaceFolder}"``.
- **Zed** (``context_servers`` in its ``settings.json``): the command, arguments and environment. Zed supports
  MCP tools and prompts but not roots, and does not document the directory it starts a server in, so its snippet
  pins the project (``--root``) whenever one is given (``memzoi mcp config zed`` gives the current project).

``project`` (``memzoi mcp config CLIENT --project-root DIR``) pins one project with ``--root DIR`` in every
snippet but the committed ``.mcp.json``.
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import sys
from dataclasses import dataclass
from pathlib import Path

CLIENTS = ("claude-code", "codex", "cursor", "vscode", "zed")
NAME = "memzoi"
#: The variables Codex must pass through its scrubbed environment (the user's runtime store, resident memory).
PASSED_ENV = ("MEMZOI_HOME", "ZUNO_CONFIG_DIR")
WORKSPACE = "${workspaceFolder}"


@dataclass(frozen=True)
class Snippet:
    """One snippet: ``name`` (``claude``, ``claude-project``, ``codex``, ``cursor``, ``vscode``, ``zed``),
    ``where`` it goes, ``format`` (``sh``, ``toml``, ``json``) and ``text``."""

    name: str
    where: str
    format: str
    text: str

    def to_json(self) -> dict[str, str]:
        """``{"name", "where", "format", "text"}``."""
        return {"name": self.name, "where": self.where, "format": self.format, "text": self.text}


def server_command() -> str | None:
    """The absolute path of the installed ``memzoi-mcp``: beside this Python (its virtual environment), else on
    ``PATH``; ``None`` when neither has it."""
    here = Path(sys.executable).with_name("memzoi-mcp")
    if here.is_file() and os.access(here, os.X_OK):
        return str(here.absolute())
    found = shutil.which("memzoi-mcp")
    return os.path.abspath(found) if found else None


def _toml_string(value: str) -> str:
    """A TOML basic string (JSON's escapes are TOML's for these characters)."""
    return json.dumps(value, ensure_ascii=False)


def _json(value: object) -> str:
    return json.dumps(value, indent=2, ensure_ascii=False)


def snippets(client: str, command: str, *, project: str | None = None) -> list[Snippet]:
    """The snippets of ``client`` (one of :data:`CLIENTS`) for the server at ``command`` (absolute), pinned to
    ``project`` when given. Raises ``ValueError`` for an unknown client."""
    pinned = ["--root", project] if project else []
    if client == "claude-code":
        add = ["claude", "mcp", "add", "--transport", "stdio", NAME, "--", command, *pinned]
        shared = {"mcpServers": {NAME: {"type": "stdio", "command": "memzoi-mcp", "args": [], "env": {}}}}
        return [
            Snippet(
                "claude", "run in the project (this machine; add --scope user for every project)", "sh", shlex.join(add)
            ),
            Snippet(
                "claude-project",
                ".mcp.json at the project root (committed; memzoi-mcp found on PATH)",
                "json",
                _json(shared),
            ),
        ]
    if client == "codex":
        args = ", ".join(_toml_string(a) for a in pinned)
        env = ", ".join(_toml_string(v) for v in PASSED_ENV)
        text = f"[mcp_servers.{NAME}]\ncommand = {_toml_string(command)}\nargs = [{args}]\nenv_vars = [{env}]"
        return [Snippet("codex", "~/.codex/config.toml (or .codex/config.toml in a trusted project)", "toml", text)]
    if client == "cursor":
        server: dict[str, object] = {"command": command, "args": ["--root", project or WORKSPACE]}
        return [
            Snippet(
                "cursor",
                ".cursor/mcp.json in the project (or ~/.cursor/mcp.json)",
                "json",
                _json({"mcpServers": {NAME: server}}),
            )
        ]
    if client == "vscode":
        server = {"type": "stdio", "command": command, "args": ["--root", project or WORKSPACE]}
        return [Snippet("vscode", ".vscode/mcp.json in the project", "json", _json({"servers": {NAME: server}}))]
    if client == "zed":
        server = {"command": command, "args": pinned, "env": {}}
        return [
            Snippet(
                "zed",
                "Zed settings.json (or .zed/settings.json in the project)",
                "json",
                _json({"context_servers": {NAME: server}}),
            )
        ]
    raise ValueError(f"unknown client {client!r}; one of {', '.join(CLIENTS)}")
