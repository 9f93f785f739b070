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
    for needed in ("memzoi.restart", "memzoi.apply", "memzoi.reject", "memzoi.supersede", "memzoi.tombstone"):
        assert needed in cmds
    assert "memzoi.trace.server" in manifest["contributes"]["configuration"]["properties"]
    assert manifest["contributes"]["views"]["explorer"][0]["id"] == "memzoi.inbox"


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
    from memzoi.findings import CODES
    from memzoi_lsp.settings import Settings

    props = json.loads((EXT / "package.json").read_text())["contributes"]["configuration"]["properties"]
    for name, field in Settings.model_fields.items():
        assert f"memzoi.{field.alias or name}" in props
    assert set(props["memzoi.disabled"]["items"]["enum"]) == set(CODES)
