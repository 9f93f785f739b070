"""The Memory Inbox acts on exactly the row clicked, in a real VS Code (code-server with the packaged .vsix, driven by
cs_inbox.js in headless Chromium), issue 28. A workspace with four pending packets (three the core lets through, one
only routable to local memory) and two pending resident-memory candidates; another packet stays open in the editor
while every inline button is clicked on its own row. After each write the driver compares the files on disk: exactly
the clicked target changed. Screenshots of each flow go to docs/editors/; the time from opening a record to its
first diagnostic is printed with the load average."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from .. import builders
from .conftest import captures_dir, make_workspace, require, venv_bin
from .test_vscode_e2e import USER_SETTINGS, code_server, drive  # noqa: F401  (code_server is a fixture)

pytestmark = pytest.mark.editor_packages

DOCS = captures_dir()
OPEN_ID = "prop_lint"
PACKETS = {
    # id: (title, sensitivity)
    "prop_cache": ("Cache keys name their tenant", "repo-safe"),
    OPEN_ID: ("Lint before pushing", "repo-safe"),
    "prop_notes": ("My local notes", "local-only"),
}
APPLY = ("mem_2026_07_06_auth_001", "Protected routes must validate sessions server-side")


def add_packets(ws: dict) -> None:
    for pid, (title, sensitivity) in PACKETS.items():
        body = f"# {title}\n\n{title} (a rule of {pid}).\n"
        builders.write(
            ws["root"], builders.packet_path(pid), builders.packet(pid, title=title, sensitivity=sensitivity, body=body)
        )


def propose(ws: dict, env: dict, *args: str) -> str:
    p = subprocess.run(
        [
            venv_bin("memzoi"),
            "resident",
            "propose",
            "--root",
            str(ws["root"]),
            "--json",
            "--scope",
            "project",
            "--reason",
            "house style",
            "--confidence",
            "0.6",
            *args,
        ],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        stdin=subprocess.DEVNULL,
    )
    assert p.returncode == 0, p.stdout + p.stderr
    return json.loads(p.stdout)["id"]


@pytest.mark.timeout(1800)
def test_inbox_buttons_act_on_the_clicked_row(
    code_server: Path,
    vsix: Path,
    tmp_path: Path,
    corpus: Path,  # noqa: F811
    capsys: pytest.CaptureFixture[str],
) -> None:
    server = venv_bin("memzoi-lsp")
    require(server is not None, "memzoi-lsp is not installed (pip install -e .)")
    ws = make_workspace(tmp_path / "ws", corpus)
    add_packets(ws)
    (ws["root"] / ".zuno").mkdir()
    (ws["root"] / ".zuno" / "RULES.md").write_text("Use tabs.", encoding="utf-8")
    env = dict(
        os.environ,
        MEMZOI_HOME=str(tmp_path / "memzoi-home"),
        MEMZOI_ACTOR="reviewer",
        ZUNO_CONFIG_DIR=str(tmp_path / "zuno"),
    )
    approve = propose(ws, env, "--action", "replace", "--old-text", "tabs", "--content", "Tabs only")
    reject = propose(ws, env, "--action", "add", "--content", "Run make lint first")
    DOCS.mkdir(parents=True, exist_ok=True)
    for old in DOCS.glob("vscode-*.png"):
        old.unlink()
    targets = {
        "titles": [APPLY[1], *(t for t, _ in PACKETS.values())],
        "open": [
            [APPLY[0], APPLY[1]],
            ["prop_cache", PACKETS["prop_cache"][0]],
            ["prop_notes", PACKETS["prop_notes"][0]],
        ],
        "apply": list(APPLY),
        "reject": ["prop_cache", PACKETS["prop_cache"][0]],
        "route": ["prop_notes", PACKETS["prop_notes"][0]],
    }
    resident = {
        "approve": {"id": approve, "text": "Tabs only"},
        "reject": {"id": reject, "text": "Run make lint first"},
    }
    p, report, exthost = drive(
        code_server,
        vsix,
        tmp_path,
        ws,
        dict(USER_SETTINGS, **{"memzoi.server.path": server}),
        DOCS,
        script="cs_inbox.js",
        OPEN_ID=OPEN_ID,
        TARGETS=json.dumps(targets),
        RESIDENT=json.dumps(resident),
        MEMZOI_BIN=venv_bin("memzoi") or "memzoi",
    )
    assert p.returncode == 0, f"{p.stdout}\n{p.stderr}\n--- Memzoi output\n{exthost}"
    names = [s["name"] for s in report["steps"]]
    for name in (
        "Apply: changed on disk",
        "Reject: changed on disk",
        "Route to local memory: changed on disk",
        "resident Approve: changed on disk",
        "the hidden RULES.md tab shows the approved text",
        "resident Reject: one message",
        "resident Undo: changed on disk",
        "the packet open in the editor never changed",
    ):
        assert name in names, (name, names)
    for png in (
        "vscode-inbox.png",
        "vscode-review-apply.png",
        "vscode-applied.png",
        "vscode-rejected.png",
        "vscode-resident-approve.png",
        "vscode-resident-reject.png",
        "vscode-resident-undo.png",
    ):
        assert (DOCS / png).stat().st_size > 10_000, png
    assert (ws["root"] / ".memzoi" / "proposals" / "pending" / f"{OPEN_ID}.md").exists()
    [timing] = [s for s in report["steps"] if s["name"] == "record opened -> first diagnostic"]
    with capsys.disabled():
        print(
            f"\n[timing] VS Code: opening a record -> its first diagnostic: {timing['record_to_diagnostic_ms']} ms "
            f"(load average {' '.join(f'{x:.2f}' for x in os.getloadavg())})"
        )
