"""``memzoi mcp config CLIENT`` and :mod:`memzoi.agent.mcpconfig`: this machine's snippet for each client."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from memzoi.agent import mcpconfig
from memzoi.cli.main import main as memzoi

MEMZOI = Path(sys.executable).with_name("memzoi")
SERVER = str(Path(sys.executable).with_name("memzoi-mcp").absolute())


def config(capsys, *argv: str) -> tuple[int, dict]:
    capsys.readouterr()
    code = memzoi(["mcp", "config", *argv, "--json"])
    return code, json.loads(capsys.readouterr().out)


@pytest.mark.parametrize("client", mcpconfig.CLIENTS)
def test_each_client_gets_the_absolute_path_of_this_memzoi_mcp(client, capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    code, out = config(capsys, client)
    assert code == 0 and out["client"] == client and out["command"] == SERVER and Path(SERVER).is_file()
    for s in out["snippets"]:
        assert s["format"] in ("sh", "toml", "json") and s["where"]
        if s["name"] != "claude-project":
            assert SERVER in s["text"]


def test_codex_passes_the_users_stores_through_the_scrubbed_environment(capsys):
    (s,) = config(capsys, "codex")[1]["snippets"]
    server = tomllib.loads(s["text"])["mcp_servers"]["memzoi"]
    assert server == {"command": SERVER, "args": [], "env_vars": ["MEMZOI_HOME", "ZUNO_CONFIG_DIR"]}


def test_cursor_and_vscode_take_the_workspace_folder(capsys):
    cursor = json.loads(config(capsys, "cursor")[1]["snippets"][0]["text"])["mcpServers"]["memzoi"]
    assert cursor["args"] == ["--root", "${workspaceFolder}"]
    vscode = json.loads(config(capsys, "vscode")[1]["snippets"][0]["text"])["servers"]["memzoi"]
    assert vscode == {"type": "stdio", "command": SERVER, "args": ["--root", "${workspaceFolder}"]}


def test_zed_pins_the_current_project(capsys, project, monkeypatch):
    monkeypatch.chdir(project / ".memzoi")
    zed = json.loads(config(capsys, "zed")[1]["snippets"][0]["text"])
    assert zed == {"context_servers": {"memzoi": {"command": SERVER, "args": ["--root", str(project)], "env": {}}}}


def test_project_root_pins_every_machine_snippet(capsys, tmp_path):
    out = config(capsys, "claude-code", "--project-root", str(tmp_path))[1]
    add, shared = out["snippets"]
    assert add["text"].endswith(f"-- {SERVER} --root {tmp_path}")
    assert json.loads(shared["text"])["mcpServers"]["memzoi"]["args"] == []  # committed: no machine path
    codex = tomllib.loads(config(capsys, "codex", "--project-root", str(tmp_path))[1]["snippets"][0]["text"])
    assert codex["mcp_servers"]["memzoi"]["args"] == ["--root", str(tmp_path)]


def test_unknown_client_and_missing_server(capsys, monkeypatch, tmp_path):
    with pytest.raises(SystemExit) as exc:
        memzoi(["mcp", "config", "emacs"])
    assert exc.value.code == 2
    with pytest.raises(ValueError):
        mcpconfig.snippets("emacs", SERVER)
    monkeypatch.setattr(sys, "executable", str(tmp_path / "python"))
    monkeypatch.setenv("PATH", str(tmp_path))
    code, out = config(capsys, "codex")
    assert code == 1 and out["error"]["code"] == "not_installed"


def test_text_output_is_only_the_snippet_on_stdout(tmp_path):
    done = subprocess.run(
        [str(MEMZOI), "mcp", "config", "codex"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "PATH": os.environ.get("PATH", "")},
    )
    assert done.returncode == 0, done.stderr
    assert tomllib.loads(done.stdout)["mcp_servers"]["memzoi"]["command"] == SERVER
    assert done.stderr.startswith("# ~/.codex/config.toml")
