"""End to end in a real VS Code: code-server 4.100.3 with the packaged .vsix, driven by playwright-core in headless
Debian Chromium on 127.0.0.1, on a workspace made from the corpus with one planted secret, one pending proposal and
one the git-plane gate blocks. The Problems panel shows the secret's finding, hover shows provenance, the Memory
Inbox and status bar count the proposals and say which one is blocked (no Apply on it), the Apply code action
resolves the other, and a refused Apply gives one toast. Screenshots go to test-artifacts/vscode/; the time from the
extension's activation to the first Problems row is printed."""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import socket
import subprocess
import time
import urllib.request
from datetime import datetime
from pathlib import Path

import pytest

from .conftest import (
    ARTIFACTS,
    CODE_SERVER_VERSION,
    EDITOR_CACHE,
    EXT,
    PREREQS_HINT,
    PROPOSAL_ID,
    make_workspace,
    planted_token,
    require,
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


def drive(
    code_server: Path,
    vsix: Path,
    tmp_path: Path,
    ws: dict,
    settings: dict,
    shots: Path,
    script: str = "cs_drive.js",
    **drive_env: str,
) -> tuple[subprocess.CompletedProcess, dict, str]:
    """Install ``vsix`` into a fresh code-server profile with user ``settings``, open ``ws`` and run ``script``
    (cs_drive.js by default, with ``drive_env``) against it. Returns the driver's process, its JSON report and the
    Memzoi output log."""
    run_dir = tmp_path / "cs"
    (run_dir / "ud" / "User").mkdir(parents=True)
    (run_dir / "ud" / "User" / "settings.json").write_text(json.dumps(settings, indent=2))
    env = dict(
        os.environ,
        XDG_CONFIG_HOME=str(run_dir / "cfg"),  # keeps code-server's config.yaml out of the home directory
        XDG_DATA_HOME=str(run_dir / "data"),
        MEMZOI_HOME=str(tmp_path / "memzoi-home"),
        MEMZOI_ACTOR="reviewer",
        ZUNO_CONFIG_DIR=str(tmp_path / "zuno"),  # the global resident file stays out of the home directory
    )
    common = ["--user-data-dir", str(run_dir / "ud"), "--extensions-dir", str(run_dir / "ext")]
    inst = subprocess.run(
        [str(code_server), *common, "--install-extension", str(vsix), "--force"],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        stdin=subprocess.DEVNULL,
    )
    assert inst.returncode == 0 and "successfully installed" in inst.stdout, inst.stdout + inst.stderr

    port = free_port()
    log_path = run_dir / "code-server.log"
    with open(log_path, "w") as log:
        cs = subprocess.Popen(
            [
                str(code_server),
                *common,
                "--bind-addr",
                f"127.0.0.1:{port}",
                "--auth",
                "none",
                "--disable-telemetry",
                "--disable-update-check",
                "--disable-workspace-trust",
                "--disable-getting-started-override",
                str(ws["root"]),
            ],
            env=env,
            stdout=log,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
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
        # The driver reads what the editor wrote with the CLI: the same MEMZOI_HOME and ZUNO_CONFIG_DIR.
        full_env.update({k: v for k, v in env.items() if k.startswith(("MEMZOI_", "ZUNO_"))})
        p = subprocess.run(
            ["node", str(HERE / script)],
            env=full_env,
            capture_output=True,
            text=True,
            timeout=600,
            stdin=subprocess.DEVNULL,
        )
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
    logs = sorted((run_dir / "ud" / "logs").rglob("*Memzoi*.log")) if (run_dir / "ud" / "logs").exists() else []
    for f in logs:
        text = f.read_text(errors="replace")
        exthost += text[-3000:]
        report.setdefault("activated_at", activation_ms(text))
    return p, report, exthost


def activation_ms(log_text: str) -> float | None:
    """Wall-clock ms of the extension's "Memzoi extension … activated" line in its output log (local time, as the
    log writes it), or ``None``."""
    m = re.search(r"^(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{3}) \[info\] Memzoi extension \S+ activated", log_text, re.M)
    return datetime.strptime(m.group(1), "%Y-%m-%d %H:%M:%S.%f").timestamp() * 1000 if m else None


def print_startup_timing(report: dict, what: str, capsys: pytest.CaptureFixture[str]) -> None:
    """Extension activation -> first Problems row, from the activation line of the extension's own log (printed for
    the record; machine load decides it, so it is never asserted)."""
    [row] = [s for s in report["steps"] if s["name"] == "problems panel shows the credential finding"]
    start = report.get("activated_at")
    with capsys.disabled():
        if start is None:
            print(f"\n[timing] {what}: no activation line in the extension log")
        else:
            print(f"\n[timing] {what}: extension activation -> first Problems row: {row['at'] - start:.0f} ms")


def clear_shots(shots: Path, prefix: str) -> None:
    """Remove this test's earlier screenshots (names starting with ``prefix``; '' = those of no other test)."""
    shots.mkdir(parents=True, exist_ok=True)
    for f in shots.glob("*.png"):
        if f.name.startswith(prefix) if prefix else not f.name.startswith(BUNDLED_PREFIX):
            f.unlink()


BUNDLED_PREFIX = "bundled-"


def add_gated_packet(ws: dict, corpus: Path) -> Path:
    """A second pending packet that the git-plane gate blocks: the corpus packet as it is (project scope without a
    project id: scope_project_mismatch, a warning on a pending packet), under another id, title and body."""
    data = (corpus / "examples" / "proposals" / f"{PROPOSAL_ID}.md").read_text(encoding="utf-8")
    gated_id = "mem_2026_07_06_cache_002"
    text = (
        data.replace(PROPOSAL_ID, gated_id)
        .replace("Protected routes must validate sessions server-side", "Cache keys include the tenant id")
        .replace("Protected API routes must validate the session server-side.", "Every cache key names its tenant.")
    )
    assert "Protected routes" not in text and "kind: project" in text
    path = ws["proposal"].parent / f"{gated_id}.md"
    path.write_text(text, encoding="utf-8")
    return path


@pytest.mark.timeout(1800)
def test_vscode_end_to_end(
    code_server: Path, vsix: Path, tmp_path: Path, corpus: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    server = venv_bin("memzoi-lsp")
    require(server is not None, "memzoi-lsp is not installed (pip install -e .)")
    ws = make_workspace(tmp_path / "ws", corpus)
    gated = add_gated_packet(ws, corpus)
    shots = ARTIFACTS / "vscode"
    clear_shots(shots, "")
    apply = any(c.endswith("apply") or c.endswith(".apply") for c in server_commands())
    p, report, exthost = drive(
        code_server,
        vsix,
        tmp_path,
        ws,
        dict(USER_SETTINGS, **{"memzoi.server.path": server}),
        shots,
        APPLY="1" if apply else "0",
        GATED="1",
    )
    assert p.returncode == 0, f"{p.stdout}\n{p.stderr}\n--- Memzoi output\n{exthost}"
    names = [s["name"] for s in report["steps"]]
    assert "problems panel shows the credential finding" in names
    assert "hover shows provenance" in names
    assert "inbox lists the proposal" in names
    assert planted_token() not in json.dumps(report) + p.stdout
    print_startup_timing(report, "VS Code (memzoi.server.path)", capsys)
    assert "inbox: blocked packet shows why and has no Apply" in names
    assert (shots / "vscode-e2e.png").stat().st_size > 10_000
    assert apply, f"memzoi-lsp registers no apply command ({server_commands()})"
    for name in (
        "Ctrl+. lists the lifecycle actions",
        "Preview opens a diff",
        "applied: packet resolved",
        "inbox updated",
        "no problems for the removed file",
        "History shows the change",
        "Undo from History",
        "one toast on a refusal",
        "one toast on a refused Apply",
    ):
        assert name in names, (name, names)
    for shot in (
        "vscode-quickfix-menu.png",
        "vscode-preview-diff.png",
        "vscode-history.png",
        "vscode-refusal.png",
        "vscode-inbox-blocked.png",
        "vscode-refused-apply.png",
    ):
        assert (shots / shot).stat().st_size > 10_000
    assert gated.exists()  # the refused Apply wrote nothing
    # undone from the History: the packet is pending again and nothing else is left
    assert ws["proposal"].exists()
    assert not (ws["root"] / ".memzoi" / "proposals" / "resolved" / "applied" / f"{PROPOSAL_ID}.md").exists()


@pytest.mark.timeout(1800)
def test_vsix_alone_starts_the_bundled_server(
    code_server: Path, vsix: Path, tmp_path: Path, corpus: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A clean profile, no memzoi-lsp on PATH and no server setting: the .vsix's bundled server, run by a plain
    python3 (which has no memzoi-lsp installed), diagnoses the workspace."""
    python = shutil.which("python3")
    require(python is not None, "python3 is not on PATH")
    plain = subprocess.run([python, "-c", "import memzoi_lsp"], capture_output=True, cwd=tmp_path)
    require(plain.returncode != 0, "python3 on PATH has memzoi-lsp installed: it would not show the bundle alone")
    require(shutil.which("memzoi-lsp") is None, "memzoi-lsp is on PATH: it would not show the bundle alone")
    ws = make_workspace(tmp_path / "ws", corpus)
    shots = ARTIFACTS / "vscode"  # beside the end-to-end test's, named bundled-*.png
    clear_shots(shots, BUNDLED_PREFIX)
    p, report, exthost = drive(
        code_server,
        vsix,
        tmp_path,
        ws,
        dict(USER_SETTINGS),
        shots,
        APPLY="0",
        ONLY_PROBLEMS="1",
        SHOT_PREFIX=BUNDLED_PREFIX,
    )
    assert p.returncode == 0, f"{p.stdout}\n{p.stderr}\n--- Memzoi output\n{exthost}"
    assert "problems panel shows the credential finding" in [s["name"] for s in report["steps"]]
    assert "(found via bundled)" in exthost and "-m memzoi_lsp" in exthost, exthost
    assert (shots / f"{BUNDLED_PREFIX}vscode-problems.png").stat().st_size > 10_000
    print_startup_timing(report, "VS Code (bundled server)", capsys)
