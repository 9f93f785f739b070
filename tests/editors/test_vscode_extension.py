"""The VS Code extension builds, type-checks, lints, passes its unit tests (node's test runner) and packages to a
.vsix whose manifest matches the server's settings; all driven from pytest so CI runs them."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from .conftest import EXT, REPO, npm_env, run

pytestmark = pytest.mark.timeout(900)


def test_typecheck_and_lint(node_modules: Path) -> None:
    run(["npm", "run", "typecheck"], EXT, 300, npm_env())
    run(["npm", "run", "lint"], EXT, 300, npm_env())


def test_unit_tests_with_node_test_runner(node_modules: Path) -> None:
    p = run(["npm", "test"], EXT, 300, npm_env())
    summary = dict(re.findall(r"^# (tests|pass|fail) (\d+)$", p.stdout, re.M))
    assert int(summary["fail"]) == 0, p.stdout
    assert int(summary["pass"]) >= 25, p.stdout  # the suites in src/test ran, not an empty glob


def test_package_contents(vsix: Path) -> None:
    with zipfile.ZipFile(vsix) as z:
        names = set(z.namelist())
        manifest = json.loads(z.read("extension/package.json"))
    assert "extension/dist/extension.js" in names
    assert "extension/readme.md" in {n.lower() for n in names}
    # bundled by esbuild: neither sources nor node_modules ship
    assert not any(n.startswith(("extension/node_modules/", "extension/src/")) for n in names), sorted(names)
    assert manifest["main"] == "./dist/extension.js"
    cmds = {c["command"]: c for c in manifest["contributes"]["commands"]}
    assert all(c["category"] == "Memzoi" for c in cmds.values())
    for needed in (
        "memzoi.restart",
        "memzoi.palette.apply",
        "memzoi.palette.reject",
        "memzoi.palette.supersede",
        "memzoi.palette.tombstone",
    ):
        assert needed in cmds
    # palette ids never clash with the server's executeCommand ids (vscode-languageclient registers those)
    from memzoi_lsp.server import create_server

    assert not set(cmds) & set(create_server().protocol.fm.commands)
    assert "memzoi.trace.server" in manifest["contributes"]["configuration"]["properties"]
    # The inbox has its own activity-bar container (resident rows visible without collapsing the file tree).
    assert manifest["contributes"]["viewsContainers"]["activitybar"][0]["id"] == "memzoi"
    assert manifest["contributes"]["views"]["memzoi"][0]["id"] == "memzoi.inbox"
    assert "extension/media/inbox.svg" in names
    assert manifest["contributes"]["configuration"]["properties"]["memzoi.confirmWrites"]["default"] is True
    # The bundled server's compiled packages fit one interpreter: the .vsix records which (the extension checks the
    # chosen interpreter against it) and ships the probe that asks an interpreter the same questions.
    with zipfile.ZipFile(vsix) as z:
        abi = json.loads(z.read("extension/bundled/python-abi.json"))
        assert "extension/bundled/python_abi.py" in names
    built = [n for n in names if "/_pydantic_core" in n and n.endswith(abi["ext_suffix"])]
    assert built, f"no pydantic-core built for {abi['ext_suffix']}"
    assert abi["implementation"] and re.fullmatch(r"\d+\.\d+", abi["version"]) and abi["machine"]


def test_bundle_loads_outside_vscode_only_for_vscode(vsix: Path) -> None:
    """The bundle is self-contained: requiring it fails only on the `vscode` module (provided by the editor)."""
    js = EXT / "dist" / "extension.js"
    p = subprocess.run(
        ["node", "-e", f"try {{ require({json.dumps(str(js))}) }} catch (e) {{ console.log(e.message) }}"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert "Cannot find module 'vscode'" in p.stdout, p.stdout + p.stderr


def test_contributes_mirror_server_settings_and_command_table() -> None:
    """package.json's settings and commands are generated from the server's Settings model and the command
    table; the check fails when either changed without regenerating."""
    p = subprocess.run(
        [sys.executable, str(EXT / "scripts" / "contributes.py"), "--check"], capture_output=True, text=True, cwd=REPO
    )
    assert p.returncode == 0, p.stdout + p.stderr
    from memzoi.base.findings import CODES
    from memzoi_lsp.settings import wire_names

    props = json.loads((EXT / "package.json").read_text())["contributes"]["configuration"]["properties"]
    for name in wire_names():
        assert f"memzoi.{name}" in props
    assert set(props["memzoi.disabled"]["items"]["enum"]) == set(CODES)


def _ts_table() -> set[tuple[tuple[str, ...], str | None]]:
    src = (EXT / "src/logic/commands.ts").read_text(encoding="utf-8")
    table = src[src.index("export const COMMANDS") :]
    table = table[: table.index("\n];")]
    out = set()
    for block in re.split(r"\{\s*id:", table)[1:]:
        server = tuple(re.findall(r"'([\w.]+)'", re.search(r"server: \[([^\]]*)\]", block).group(1)))
        reason = re.search(r"reason: '(\w+)'", block)
        out.add((server, reason.group(1) if reason else None))
    return out


def _lua_table() -> set[tuple[tuple[str, ...], str | None]]:
    src = (REPO / "editors/nvim/lua/memzoi/init.lua").read_text(encoding="utf-8")
    table = src[src.index("M.commands = {") : src.index("\n}\n", src.index("M.commands = {"))]
    out = set()
    for block in re.split(r"\{\s*name = ", table)[1:]:
        server = re.search(r"server = \{([^}]*)\}", block)
        reason = re.search(r"reason = '(\w+)'", block)
        out.add((tuple(re.findall(r"'([\w.]+)'", server.group(1))), reason.group(1) if reason else None))
    return out


def _elisp_table() -> set[tuple[tuple[str, ...], str | None]]:
    src = (REPO / "editors/emacs/memzoi.el").read_text(encoding="utf-8")
    table = src[src.index("(defconst memzoi-commands") : src.index('"Commands: name')]
    out = set()
    for m in re.finditer(r":server \(([^)]*)\)[^\n]*", table):
        reason = re.search(r":reason (\w+)", m.group(0))
        out.add((tuple(re.findall(r'"([\w.]+)"', m.group(1))), reason.group(1) if reason else None))
    return out


def test_editor_command_tables_agree() -> None:
    """VS Code, Neovim and Emacs map their commands onto the same server command ids and reason rules."""
    ts, lua, el = _ts_table(), _lua_table(), _elisp_table()
    assert len(ts) == 17
    assert lua == ts
    assert el and el <= ts
    reasons = {server[0]: reason for server, reason in ts}
    for cmd in ("memzoi.reject", "memzoi.supersede", "memzoi.tombstone"):
        assert reasons[cmd] == "required"


def test_server_commands_reachable_from_the_palette() -> None:
    """Each command the server registers has a palette entry (or is reachable through Run Server Command…)."""
    from memzoi_lsp.server import create_server

    mapped = {s for server, _ in _ts_table() for s in server}
    registered = sorted(create_server().protocol.fm.commands)
    assert registered, "the server registers no commands"
    unmapped = [c for c in registered if c not in mapped]
    pkg = json.loads((EXT / "package.json").read_text())
    assert "memzoi.runServerCommand" in {c["command"] for c in pkg["contributes"]["commands"]}
    # Mapped commands get prompts and argument shapes. The others are the data and two-step commands the views and
    # flows call (the inbox's lists, Memory Health, previews before a write): each must be named in full somewhere in
    # the extension's source (never assembled from parts), else no VS Code user can reach it.
    source = "\n".join(p.read_text(encoding="utf-8") for p in (EXT / "src").rglob("*.ts") if "test" not in p.parts)
    unreachable = [c for c in unmapped if f"'{c}'" not in source]
    assert unreachable == [], f"server commands no VS Code palette entry, view or flow calls: {unreachable}"
