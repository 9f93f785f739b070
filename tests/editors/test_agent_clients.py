"""Real agent clients, installed from the npm registry by scripts/install_agent_clients.sh: Claude Code's
``claude mcp add`` then ``claude mcp list`` shows ``memzoi-mcp`` "✔ Connected" (and so does a committed
``.mcp.json`` once approved), Claude Code loads ``.zuno/RULES.md`` into its prompt through the
``@.zuno/RULES.md`` import ``memzoi integrate instructions --resident-import`` writes into ``CLAUDE.md``, and
Codex CLI's ``codex mcp list`` reads the documented snippet with its ``env_vars``. The snippets are what ``memzoi mcp config`` prints; no account or API key is used."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from memzoi.agent.mcpconfig import PASSED_ENV, snippets

from ..mcp.conftest import make_project
from .conftest import EDITOR_CACHE, PREREQS_HINT, require

pytestmark = pytest.mark.editor_packages

PREFIX = EDITOR_CACHE / "agent-clients-claude-2.1.332-codex-0.171.0"
SERVER = str(Path(sys.executable).with_name("memzoi-mcp").absolute())


@pytest.fixture(scope="session")
def bin_dir() -> Path:
    """The installed clients' ``node_modules/.bin`` (the test never installs them)."""
    found = PREFIX / "node_modules" / ".bin"
    require(
        (PREFIX / ".installed").exists() and (found / "claude").exists() and (found / "codex").exists(),
        f"Claude Code and Codex CLI are not installed: {PREREQS_HINT}",
    )
    return found


@pytest.fixture
def env(tmp_path) -> dict[str, str]:
    """A fresh user (HOME, MEMZOI_HOME) with ``memzoi-mcp`` on PATH and no credential of any agent vendor."""
    home = tmp_path / "user"
    home.mkdir()
    clean = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("ANTHROPIC", "CLAUDE", "OPENAI", "CODEX", "MEMZOI", "ZUNO"))
    }
    return {
        **clean,
        "HOME": str(home),
        "MEMZOI_HOME": str(tmp_path / "memzoi-home"),
        "ZUNO_CONFIG_DIR": str(tmp_path / "zuno"),
        "CODEX_HOME": str(home / ".codex"),
        "PATH": f"{Path(SERVER).parent}{os.pathsep}{os.environ.get('PATH', '')}",
    }


def run(argv: list[str], cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess:
    return subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True, timeout=180, stdin=subprocess.DEVNULL)


def line_of(listing: str, name: str) -> str:
    found = [line for line in listing.splitlines() if line.startswith(f"{name}:")]
    assert len(found) == 1, listing
    return found[0]


def test_claude_mcp_add_then_list_shows_connected(bin_dir, env, tmp_path):
    project = make_project(tmp_path / "repo")
    add = shlex.split(snippets("claude-code", SERVER)[0].text)
    assert add[0] == "claude"
    done = run([str(bin_dir / "claude"), *add[1:]], project, env)
    assert done.returncode == 0, done.stderr
    listed = run([str(bin_dir / "claude"), "mcp", "list"], project, env)
    assert listed.returncode == 0, listed.stderr
    line = line_of(listed.stdout, "memzoi")
    assert SERVER in line and "✔ Connected" in line, listed.stdout


def test_committed_mcp_json_connects_once_approved(bin_dir, env, tmp_path):
    project = make_project(tmp_path / "repo")
    shared = next(s for s in snippets("claude-code", SERVER) if s.name == "claude-project")
    (project / ".mcp.json").write_text(shared.text + "\n")
    listed = run([str(bin_dir / "claude"), "mcp", "list"], project, env)
    assert "Pending approval" in line_of(listed.stdout, "memzoi"), listed.stdout
    # What Claude Code records when the user trusts the folder and approves its .mcp.json servers.
    state = Path(env["HOME"]) / ".claude.json"
    data = json.loads(state.read_text()) if state.exists() else {}
    data.setdefault("projects", {})[str(project)] = {
        "hasTrustDialogAccepted": True,
        "enabledMcpjsonServers": ["memzoi"],
    }
    state.write_text(json.dumps(data))
    listed = run([str(bin_dir / "claude"), "mcp", "list"], project, env)
    line = line_of(listed.stdout, "memzoi")
    assert "memzoi-mcp" in line and "✔ Connected" in line, listed.stdout


def test_codex_mcp_list_reads_the_documented_snippet(bin_dir, env, tmp_path):
    project = make_project(tmp_path / "repo")
    codex_home = Path(env["CODEX_HOME"])
    codex_home.mkdir(parents=True)
    (codex_home / "config.toml").write_text(snippets("codex", SERVER)[0].text + "\n")
    listed = run([str(bin_dir / "codex"), "mcp", "list", "--json"], project, env)
    assert listed.returncode == 0, listed.stderr
    (server,) = [s for s in json.loads(listed.stdout) if s["name"] == "memzoi"]
    assert server["enabled"] and server["transport"]["type"] == "stdio"
    assert server["transport"]["command"] == SERVER and server["transport"]["args"] == []
    assert server["transport"]["env_vars"] == list(PASSED_ENV)


def memory_files(bin_dir: Path, project: Path, env: dict[str, str]) -> list[str]:
    """The paths of the "Memory Files" Claude Code loads into its prompt (``claude -p /context``, which runs
    locally: no model is called)."""
    done = run([str(bin_dir / "claude"), "-p", "/context"], project, env)
    assert done.returncode == 0, done.stderr
    section = done.stdout.split("### Memory Files", 1)[1].split("###", 1)[0]
    return [
        cells[2].strip()
        for cells in (row.split("|") for row in section.splitlines())
        if len(cells) > 3 and cells[2].strip().startswith("/")
    ]


@pytest.mark.parametrize("resident_import", [True, False])
def test_claude_code_loads_the_resident_file_through_the_block(bin_dir, env, tmp_path, resident_import, monkeypatch):
    from memzoi.cli.main import main as memzoi

    project = make_project(tmp_path / "repo")
    (project / ".zuno").mkdir()
    (project / ".zuno" / "RULES.md").write_text("Run make lint before pushing.\n")
    monkeypatch.setenv("MEMZOI_HOME", env["MEMZOI_HOME"])
    argv = ["integrate", "instructions", "--root", str(project), "--file", "CLAUDE.md", "--write"]
    assert memzoi([*argv, "--resident-import"] if resident_import else argv) == 0
    loaded = memory_files(bin_dir, project, env)
    assert str(project / "CLAUDE.md") in loaded
    assert (str(project / ".zuno" / "RULES.md") in loaded) == resident_import, loaded
