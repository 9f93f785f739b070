"""``memzoi mcp config CLIENT``: the snippet that makes an agent client start this machine's ``memzoi-mcp``
(:mod:`memzoi.agent.mcpconfig`)."""

from __future__ import annotations

import argparse
import os
import sys

from ._changes import emit_json
from ._common import add_command, add_group, fail, project_root


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``mcp`` and ``mcp config``."""
    from ..agent.mcpconfig import CLIENTS  # noqa: PLC0415 lazy: start-up

    top = add_command(
        sub,
        "mcp",
        help="set up agent clients to use memzoi-mcp",
        description="Set up coding-agent clients (Claude Code, Codex, Cursor, VS Code, Zed) to start "
        "memzoi-mcp, the Model Context Protocol server of this project's memory.",
        examples=["memzoi mcp config claude-code"],
        exits={1: "memzoi-mcp is not installed"},
        project="none",
    )
    msub = add_group(top, "mcp_command")
    p = add_command(
        msub,
        "config",
        help="print the client's configuration snippet for this machine",
        description="Print the configuration snippet that makes CLIENT start this machine's memzoi-mcp (its "
        "absolute path): `claude mcp add` and a committed .mcp.json for Claude Code, config.toml with env_vars for "
        "Codex, ${workspaceFolder} for Cursor and VS Code, context_servers for Zed. docs/mcp.md explains each.",
        examples=[
            "memzoi mcp config claude-code",
            "memzoi mcp config codex >> ~/.codex/config.toml",
            "memzoi mcp config zed --project-root . --json",
        ],
        exits={1: "memzoi-mcp is not installed beside this memzoi nor on PATH"},
        project="none",
    )
    p.add_argument("client", metavar="CLIENT", choices=CLIENTS, help=f"one of {', '.join(CLIENTS)}")
    p.add_argument(
        "--project-root",
        metavar="DIR",
        help="pin this project (--root DIR) instead of letting the client say where it works (Zed, "
        "which sends no MCP roots: default the project found from the current directory)",
    )
    p.add_argument(
        "--json", action="store_true", help="print {client, command, snippets: [{name, where, format, text}]} instead"
    )
    p.set_defaults(func=run_config)


def run_config(args: argparse.Namespace) -> int:
    """Print the snippets of ``args.client``."""
    from ..agent.mcpconfig import server_command, snippets  # noqa: PLC0415 lazy: start-up

    command = server_command()
    if command is None:
        return fail(
            args,
            "not_installed",
            "memzoi-mcp is neither beside this memzoi nor on PATH; install "
            "memzoi-lsp (see the README) and run this command from its environment",
        )
    project = os.path.abspath(args.project_root) if args.project_root else None
    if project is None and args.client == "zed":  # Zed sends no roots: pin the project found from here
        project = str(project_root(args))
    found = snippets(args.client, command, project=project)
    if args.json:
        emit_json({"client": args.client, "command": command, "snippets": [s.to_json() for s in found]})
        return 0
    for i, s in enumerate(found):
        if i:
            print(file=sys.stderr)
        print(f"# {s.where}", file=sys.stderr)  # stdout holds only the snippet (`>> config.toml` works)
        print(s.text)
    return 0
