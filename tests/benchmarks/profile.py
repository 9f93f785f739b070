"""Where the time goes: sampling profiles (py-spy, all threads, idle samples dropped) of ``memzoi check``,
``memzoi rebuild`` and each phase of a language-server session, summarised as the functions with the largest
inclusive and self share of the samples.

    .venv/bin/python -m tests.benchmarks.profile --n 1000 --out prof/

Writes ``<phase>.txt`` (py-spy's collapsed stacks) and ``<phase>.top.txt`` per phase into ``--out`` and prints
the tops. The language-server phases are profiled by attaching to the running server, so each profile covers
only its phase: ``lsp-scan`` (initialize + background scan), ``lsp-edit``, ``lsp-hover`` (key and provenance
hovers) and ``lsp-code-action``. Needs ``py-spy`` (the ``bench`` extra) and permission to trace child processes.
"""

from __future__ import annotations

import argparse
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

from . import run
from .generate import generate
from .lsp_client import LspClient


def py_spy() -> str:
    """The py-spy executable (next to this interpreter, or on ``PATH``)."""
    here = Path(sys.executable).with_name("py-spy")
    found = str(here) if here.exists() else shutil.which("py-spy")
    if not found:
        raise SystemExit("py-spy is not installed: pip install -e '.[bench]'")
    return found


def summarise(raw: Path, top: int = 25) -> str:
    """Top functions of a collapsed-stack file by inclusive and by self share of all samples."""
    inclusive: Counter[str] = Counter()
    own: Counter[str] = Counter()
    total = 0
    for line in raw.read_text(encoding="utf-8", errors="replace").splitlines():
        stack, _, count = line.rpartition(" ")
        if not stack or not count.isdigit():
            continue
        n = int(count)
        total += n
        frames = [_short(f) for f in stack.split(";")]
        for f in set(frames):
            inclusive[f] += n
        own[frames[-1]] += n
    if not total:
        return "no samples\n"
    lines = [f"{total} samples", "", "inclusive:"]
    lines += [f"  {100 * n / total:5.1f}%  {f}" for f, n in inclusive.most_common(top)]
    lines += ["", "self:"]
    lines += [f"  {100 * n / total:5.1f}%  {f}" for f, n in own.most_common(top)]
    return "\n".join(lines) + "\n"


def _short(frame: str) -> str:
    """``func (path/to/site-packages/pkg/mod.py:12)`` -> ``func (pkg/mod.py)``: per function, not per line."""
    name, _, where = frame.partition(" (")
    where = where.rstrip(")").rsplit(":", 1)[0]
    for marker in ("site-packages/", "lsp_server/", "lib/python3"):
        if marker in where:
            where = where.split(marker, 1)[1]
            break
    return f"{name} ({where})" if where else name


class Attached:
    """``py-spy record --pid`` running while the block runs (stopped with SIGINT so it writes its output)."""

    def __init__(self, pid: int, out: Path):
        self.pid, self.out = pid, out

    def __enter__(self) -> Attached:
        self.proc = subprocess.Popen(
            [
                py_spy(),
                "record",
                "--pid",
                str(self.pid),
                "-f",
                "raw",
                "-o",
                str(self.out),
                "--rate",
                "400",
                "--nonblocking",
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        time.sleep(0.5)  # let it attach
        return self

    def __exit__(self, *exc) -> None:
        self.proc.send_signal(signal.SIGINT)
        try:
            self.proc.wait(30)
        except subprocess.TimeoutExpired:
            self.proc.kill()


def main(argv: list[str] | None = None) -> int:
    """Command line (see the module docstring)."""
    p = argparse.ArgumentParser(prog="python -m tests.benchmarks.profile", description=__doc__.split("\n", 1)[0])
    p.add_argument("--n", type=int, default=1000, help="records in the generated workspace (default 1000)")
    p.add_argument("--out", default="bench-profiles", help="output directory")
    p.add_argument("--edits", type=int, default=200)
    p.add_argument("--requests", type=int, default=100)
    args = p.parse_args(argv)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="memzoi-prof-") as tmp:
        ws = Path(tmp) / "ws"
        man = generate(ws, args.n)
        env = run._env(Path(tmp) / "home")
        reports: dict[str, Path] = {}
        for phase, cmd in (
            ("check", ["check", ".memzoi", "--format", "json"]),
            ("rebuild", ["rebuild", "--json", "--root", str(ws)]),
        ):
            raw = out / f"{phase}.txt"
            subprocess.run(
                [
                    py_spy(),
                    "record",
                    "--subprocesses",
                    "-f",
                    "raw",
                    "-o",
                    str(raw),
                    "--rate",
                    "400",
                    "--",
                    sys.executable,
                    "-m",
                    "memzoi",
                    *cmd,
                ],
                cwd=ws,
                env=env,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
            )
            reports[phase] = raw
        client = LspClient(ws, env)
        try:
            client.wait_idle()
            with Attached(client.proc.pid, out / "lsp-scan.txt"):
                client.call("initialize", run._init_params(ws))
                client.notify("initialized", {})
                client.wait_for(run._is_scan_end, timeout=1800)
            reports["lsp-scan"] = out / "lsp-scan.txt"
            docs = [run._open(client, path) for path in man.records[:4] + man.planted["legacy"][:1]]
            with Attached(client.proc.pid, out / "lsp-edit.txt"):
                run._edits(client, docs[0], args.edits)
            reports["lsp-edit"] = out / "lsp-edit.txt"
            with Attached(client.proc.pid, out / "lsp-hover.txt"):
                run._requests(client, docs, args.requests, hovers=True, actions=False)
            reports["lsp-hover"] = out / "lsp-hover.txt"
            with Attached(client.proc.pid, out / "lsp-code-action.txt"):
                run._requests(client, docs, args.requests, hovers=False, actions=True)
            reports["lsp-code-action"] = out / "lsp-code-action.txt"
        finally:
            client.close()
    for phase, raw in reports.items():
        text = summarise(raw) if raw.exists() else "no profile written\n"
        (out / f"{phase}.top.txt").write_text(text)
        print(f"== {phase} ==\n{text}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
