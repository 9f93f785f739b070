"""End to end in a real VS Code: code-server 4.100.3 with the packaged .vsix, driven by playwright-core in headless
Debian Chromium on 127.0.0.1, on a workspace made from the corpus with one planted secret and one pending proposal.
The Problems panel shows the secret's finding, hover shows provenance, the Memory Inbox and status bar count the
proposal, and (when the server offers it) the Apply code action resolves it. Screenshots go to test-artifacts/."""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import time
import urllib.request
from pathlib import Path

import pytest

from .conftest import (
    ARTIFACTS, CODE_SERVER_VERSION, EDITOR_CACHE, EXT, PREREQS_HINT, PROPOSAL_ID, make_workspace, planted_token, require,
    venv_bin,
)

# Needs Debian's chromium and a code-server build under ~/.cache: installed by scripts/install_editor_prereqs.sh.
pytestmark = pytest.mark.editor_packages

HERE = Path(__file__).parent
USER_SETTINGS = {
    "workbench.startupEditor": "none",
    "security.workspace.trust.enabled": False,
    "extensions.autoUpdate": False,
    "extensions.autoCheckUpdates": False,
    "update.mode": "none",
    "telemetry.telemetryLevel": "off",
    "workbench.enableExperiments": False,
    "chat.disableAIFeatures": True,
    "workbench.tips.enabled": False,
}


def server_commands() -> list[str]:
    """Commands the language server registers (read from the server object, without starting it)."""
    from memzoi_lsp.server import create_server

    return sorted(create_server().protocol.fm.commands)


@pytest.fixture(scope="session")
def code_server() -> Path:
    """The code-server binary installed by scripts/install_code_server.sh (the test never installs it)."""
    require(shutil.which("node") is not None, "node is not installed")
    require(Path("/usr/bin/chromium").exists(), f"Debian chromium is not installed: {PREREQS_HINT}")
    prefix = EDITOR_CACHE / f"code-server-{CODE_SERVER_VERSION}"
    binary = prefix / "node_modules" / ".bin" / "code-server"
    require((prefix / ".installed").exists() and binary.exists(), f"code-server is not installed: {PREREQS_HINT}")
    return binary


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def drive(code_server: Path, vsix: Path, tmp_path: Path, ws: dict, settings: dict, shots: Path,
          **drive_env: str) -> tuple[subprocess.CompletedProcess, dict, str]:
    """Install ``vsix`` into a fresh code-server profile with user ``settings``, open ``ws`` and run cs_drive.js
    (with ``drive_env``) against it. Returns the driver's process, its JSON report and the Memzoi output log."""
    run_dir = tmp_path / "cs"
    (run_dir / "ud" / "User").mkdir(parents=True)
    (run_dir / "ud" / "User" / "settings.json").write_text(json.dumps(settings, indent=2))
    env = dict(
        os.environ,
        XDG_CONFIG_HOME=str(run_dir / "cfg"),  # keeps code-server's config.yaml out of the home directory
        XDG_DATA_HOME=str(run_dir / "data"),
        MEMZOI_HOME=str(tmp_path / "memzoi-home"),
        MEMZOI_ACTOR="reviewer",
    )
    common = ["--user-data-dir", str(run_dir / "ud"), "--extensions-dir", str(run_dir / "ext")]
    inst = subprocess.run([str(code_server), *common, "--install-extension", str(vsix), "--force"],
                          env=env, capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL)
    assert inst.returncode == 0 and "successfully installed" in inst.stdout, inst.stdout + inst.stderr

    port = free_port()
    log_path = run_dir / "code-server.log"
    with open(log_path, "w") as log:
        cs = subprocess.Popen(
            [str(code_server), *common, "--bind-addr", f"127.0.0.1:{port}", "--auth", "none", "--disable-telemetry",
             "--disable-update-check", "--disable-workspace-trust", "--disable-getting-started-override", str(ws["root"])],
            env=env, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
            start_new_session=True,  # its own process group: killing it takes down the extension host and the server
        )
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=2).read()
                break
            except OSError:
                if time.monotonic() > deadline or cs.poll() is not None:
                    pytest.fail("code-server did not come up:\n" + log_path.read_text()[-4000:])
                time.sleep(0.3)
        out = tmp_path / "drive.json"
        full_env = dict(
            os.environ,
            NODE_PATH=str(EXT / "node_modules"),
            CS_URL=f"http://127.0.0.1:{port}/?folder={ws['root']}",
            WS=str(ws["root"]),
            SHOT_DIR=str(shots),
            OUT=str(out),
            **drive_env,
        )
        p = subprocess.run(["node", str(HERE / "cs_drive.js")], env=full_env, capture_output=True, text=True,
                           timeout=600, stdin=subprocess.DEVNULL)
    finally:
        try:
            os.killpg(cs.pid, signal.SIGTERM)
            cs.wait(timeout=15)
        except (ProcessLookupError, subprocess.TimeoutExpired):
            try:
                os.killpg(cs.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
    report = json.loads(out.read_text()) if out.exists() else {}
    exthost = ""
    for f in sorted((run_dir / "ud" / "logs").rglob("*Memzoi*.log")) if (run_dir / "ud" / "logs").exists() else []:
        exthost += f.read_text(errors="replace")[-3000:]
    return p, report, exthost


@pytest.mark.timeout(1800)
def test_vscode_end_to_end(code_server: Path, vsix: Path, tmp_path: Path, corpus: Path) -> None:
    server = venv_bin("memzoi-lsp")
    require(server is not None, "memzoi-lsp is not installed (pip install -e .)")
    ws = make_workspace(tmp_path / "ws", corpus)
    shots = ARTIFACTS / "vscode"
    shutil.rmtree(shots, ignore_errors=True)
    shots.mkdir(parents=True)
    apply = any(c.endswith("apply") or c.endswith(".apply") for c in server_commands())
    p, report, exthost = drive(code_server, vsix, tmp_path, ws, dict(USER_SETTINGS, **{"memzoi.server.path": server}),
                               shots, APPLY="1" if apply else "0")
    assert p.returncode == 0, f"{p.stdout}\n{p.stderr}\n--- Memzoi output\n{exthost}"
    names = [s["name"] for s in report["steps"]]
    assert "problems panel shows the credential finding" in names
    assert "hover shows provenance" in names
    assert "inbox lists the proposal" in names
    assert planted_token() not in json.dumps(report) + p.stdout
    assert (shots / "vscode-e2e.png").stat().st_size > 10_000
    assert apply, f"memzoi-lsp registers no apply command ({server_commands()})"
    for name in ("Ctrl+. lists the lifecycle actions", "Preview opens a diff", "applied: packet resolved", "inbox updated",
                 "no problems for the removed file", "History shows the change", "Undo from History",
                 "one toast on a refusal"):
        assert name in names, (name, names)
    for shot in ("vscode-quickfix-menu.png", "vscode-preview-diff.png", "vscode-history.png", "vscode-refusal.png"):
        assert (shots / shot).stat().st_size > 10_000
    # undone from the History: the packet is pending again and nothing else is left
    assert ws["proposal"].exists()
    assert not (ws["root"] / ".memzoi" / "proposals" / "resolved" / "applied" / f"{PROPOSAL_ID}.md").exists()


@pytest.mark.timeout(1800)
def test_vsix_alone_starts_the_bundled_server(code_server: Path, vsix: Path, tmp_path: Path, corpus: Path) -> None:
    """A clean profile, no memzoi-lsp on PATH and no server setting: the .vsix's bundled server, run by a plain
    python3 (which has no memzoi-lsp installed), diagnoses the workspace."""
    python = shutil.which("python3")
    require(python is not None, "python3 is not on PATH")
    plain = subprocess.run([python, "-c", "import memzoi_lsp"], capture_output=True, cwd=tmp_path)
    require(plain.returncode != 0, "python3 on PATH has memzoi-lsp installed: it would not show the bundle alone")
    require(shutil.which("memzoi-lsp") is None, "memzoi-lsp is on PATH: it would not show the bundle alone")
    ws = make_workspace(tmp_path / "ws", corpus)
    shots = ARTIFACTS / "vscode-bundled"
    shutil.rmtree(shots, ignore_errors=True)
    shots.mkdir(parents=True)
    p, report, exthost = drive(code_server, vsix, tmp_path, ws, dict(USER_SETTINGS), shots, APPLY="0", ONLY_PROBLEMS="1")
    assert p.returncode == 0, f"{p.stdout}\n{p.stderr}\n--- Memzoi output\n{exthost}"
    assert "problems panel shows the credential finding" in [s["name"] for s in report["steps"]]
    assert "(found via bundled)" in exthost and "-m memzoi_lsp" in exthost, exthost
