"""Start-up of the commands run most often: ``memzoi --version``, ``memzoi --help``, ``memzoi explain CODE``, the
language server (spawn → ``initialize`` answered, spawn → first diagnostics of an opened record) and the MCP
server (spawn → ``initialize`` answered, spawn → ``tools/list`` answered), side by side with the floor
``python -c pass`` and with the bare import of each server's protocol library.

Run from the project root (``--baseline`` adds the same measures of another source tree, e.g. a checkout of the
previous commit made with ``git worktree add ../memzoi-base HEAD~1``, in the same rounds)::

    .venv/bin/python -m tests.benchmarks.startup --repeats 20 --json startup.json --markdown startup.md
    .venv/bin/python -m tests.benchmarks.startup --repeats 20 --baseline ../memzoi-base/lsp_server

Every figure is a fresh process. The measures run in interleaved rounds (each measure once per round, floor
included), so all of them see the same load; the first ``--warmup`` rounds are not counted (they fill Python's
bytecode caches). Wall times are medians with (min–max); "× floor" is the median over the floor's median. CPU is
the process's user + system time up to the same moment (from ``/proc`` for the servers, in 10 ms ticks), which
says more than wall time on a loaded machine. The import column is ``python -X importtime`` of one more run: the
sum of the cumulative times of the top-level imports (the interpreter's own ``site`` and ``encodings`` included,
as the floor's row shows) up to the moment the measure ends (for the servers: the answer or the diagnostics),
with the number of modules imported by then and which of the heavy dependencies they include.

``--workspace N`` adds spawn → first diagnostics of a record opened at once in a workspace of N records (and N/10
pending packets, committed to git; :mod:`tests.benchmarks.generate`), whose scan then starts beside it: **cold**
(the project's runtime directory removed before each session: no verdict cache, no index) and **warm** (the
verdict cache a ``memzoi check`` of the workspace wrote, before the rounds). Each tree measured (``--baseline``)
has runtime directories of its own, so neither reads the other's stamps. ``--only`` keeps the named measures::

    .venv/bin/python -m tests.benchmarks.startup --repeats 10 --workspace 10000 \
        --only floor,lsp_initialize,lsp_diagnostics,lsp_ws_cold,lsp_ws_warm --baseline ../memzoi-base/lsp_server
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from .generate import generate
from .lsp_client import LspClient
from .run import _diags_for, _env, _init_params, machine, summary

#: Modules worth naming when a command imports them: what a cheap command should not pay for.
HEAVY = (
    "pydantic",
    "yaml",
    "sqlite3",
    "blake3",
    "regex",
    "memzoi.models",
    "memzoi.safety",
    "memzoi.judge.analysis",
    "lsprotocol.types",
    "pygls",
    "mcp",
)
LSP_LIBRARIES = "import lsprotocol.types, pygls.lsp.server"
MCP_LIBRARIES = "import mcp.server.lowlevel, mcp.server.stdio"


def script(name: str) -> list[str]:
    """How to run console script ``name`` with this interpreter (so ``-X importtime`` can go in between): its
    file beside the interpreter, else the package's ``-m`` form."""
    path = Path(sys.executable).with_name(name)
    if path.is_file():
        return [str(path)]
    return ["-m", {"memzoi": "memzoi", "memzoi-lsp": "memzoi_lsp", "memzoi-mcp": "memzoi_mcp"}[name]]


def parse_importtime(text: str) -> dict[str, Any]:
    """``{"ms", "modules", "heavy"}`` from ``-X importtime`` output: the sum of the top-level cumulative times in
    milliseconds, how many modules were imported and which of :data:`HEAVY` (or their submodules) among them."""
    total_us = 0
    names: list[str] = []
    for line in text.splitlines():
        if not line.startswith("import time:") or "self [us]" in line:
            continue
        parts = line.split("|", 2)
        if len(parts) != 3:
            continue
        name = parts[2].rstrip()
        names.append(name.strip())
        if len(name) - len(name.lstrip(" ")) == 1:  # one space: imported by no other module
            total_us += int(parts[1])
    heavy = [h for h in HEAVY if any(n == h or n.startswith(h + ".") for n in names)]
    return {"ms": total_us / 1000, "modules": len(names), "heavy": heavy}


def _read(path: Path | None) -> str:
    return path.read_text(encoding="utf-8", errors="replace") if path else ""


def proc_cpu_s(pid: int) -> float:
    """User + system CPU seconds of the running process ``pid`` so far (``nan`` without ``/proc``)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return float("nan")
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _children_cpu_s() -> float:
    ru = resource.getrusage(resource.RUSAGE_CHILDREN)
    return ru.ru_utime + ru.ru_stime


# --- one fresh process per measure ---------------------------------------------------------------------------


def run_once(argv: list[str], cwd: Path, env: dict[str, str], importtime: bool = False) -> tuple[float, float, str]:
    """Run ``python [-X importtime] argv…`` to completion; ``(wall seconds, CPU seconds, stderr)``. Exit status 0
    required."""
    cmd = [sys.executable, *(["-X", "importtime"] if importtime else []), *argv]
    cpu0 = _children_cpu_s()
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    wall = time.perf_counter() - t0
    if proc.returncode != 0:
        raise RuntimeError(f"{cmd} failed ({proc.returncode}): {proc.stderr.decode()[-2000:]}")
    return wall, _children_cpu_s() - cpu0, proc.stderr.decode("utf-8", "replace")


def lsp_once(ws: Path, doc: Path, env: dict[str, str], errlog: Path | None = None) -> dict[str, Any]:
    """One ``memzoi-lsp`` session as an editor starts it: ``initialize`` written at once, then ``initialized``
    and the ``didOpen`` of ``doc``. Seconds from spawn to the ``initialize`` answer and to the first
    diagnostics of ``doc``; with ``errlog`` (``-X importtime`` on), the import figures at both moments."""
    cmd = [sys.executable, *(["-X", "importtime"] if errlog else []), *script("memzoi-lsp")]
    out: dict[str, Any] = {}
    with open(errlog or os.devnull, "wb") as err:
        client = LspClient(ws, env, cmd=cmd, stderr=err)
        try:
            rid, _ = client.request("initialize", _init_params(ws))
            t_init, _ = client.response(rid, timeout=120)
            out["initialize_cpu_s"] = proc_cpu_s(client.proc.pid)
            if errlog:
                out["imports_initialize"] = parse_importtime(_read(errlog))
            client.notify("initialized", {})
            uri = doc.resolve().as_uri()
            client.notify(
                "textDocument/didOpen",
                {
                    "textDocument": {
                        "uri": uri,
                        "languageId": "markdown",
                        "version": 1,
                        "text": doc.read_text(encoding="utf-8"),
                    }
                },
            )
            _, t_diag, _ = client.wait_for(_diags_for(uri, 1), timeout=120)
            out["diagnostics_cpu_s"] = proc_cpu_s(client.proc.pid)
            if errlog:
                out["imports_diagnostics"] = parse_importtime(_read(errlog))
        finally:
            client.close()
    out["initialize_s"] = t_init - client.started
    out["diagnostics_s"] = t_diag - client.started
    return out


def mcp_once(ws: Path, env: dict[str, str], errlog: Path | None = None, timeout: float = 120) -> dict[str, Any]:
    """One ``memzoi-mcp --root ws`` session as an agent starts it (newline-delimited JSON-RPC on stdio):
    ``initialize`` written at once, then ``notifications/initialized`` and ``tools/list`` (which loads the core).
    Seconds from spawn to each answer; with ``errlog``, the import figures at the ``tools/list`` answer."""
    cmd = [sys.executable, *(["-X", "importtime"] if errlog else []), *script("memzoi-mcp"), "--root", str(ws)]
    out: dict[str, Any] = {}
    with open(errlog or os.devnull, "wb") as err:
        t0 = time.perf_counter()
        proc = subprocess.Popen(cmd, cwd=ws, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=err)
        watchdog = threading.Timer(timeout, proc.kill)  # a hung server ends the benchmark, not the machine
        watchdog.start()

        def send(msg: dict) -> None:
            proc.stdin.write(json.dumps(msg).encode("utf-8") + b"\n")
            proc.stdin.flush()

        def answer(rid: int) -> float:
            while True:
                line = proc.stdout.readline()
                if not line:
                    raise RuntimeError(f"memzoi-mcp exited before answering request {rid}: {_read(errlog)[-2000:]}")
                msg = json.loads(line)
                if msg.get("id") == rid and "method" not in msg:
                    if "error" in msg:
                        raise RuntimeError(f"memzoi-mcp request {rid} failed: {msg['error']}")
                    return time.perf_counter()

        try:
            send(
                {
                    "jsonrpc": "2.0",
                    "id": 1,
                    "method": "initialize",
                    "params": {
                        "protocolVersion": "2025-06-18",
                        "capabilities": {},
                        "clientInfo": {"name": "memzoi-bench", "version": "1"},
                    },
                }
            )
            out["initialize_s"] = answer(1) - t0
            out["initialize_cpu_s"] = proc_cpu_s(proc.pid)
            send({"jsonrpc": "2.0", "method": "notifications/initialized"})
            send({"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {}})
            out["tools_s"] = answer(2) - t0
            out["tools_cpu_s"] = proc_cpu_s(proc.pid)
            if errlog:
                out["imports_tools"] = parse_importtime(_read(errlog))
        finally:
            proc.stdin.close()
            proc.wait(30)
            watchdog.cancel()
    return out


# --- the measures ---------------------------------------------------------------------------------------------

#: key → (label, what runs). ``("run", argv)`` runs to completion; ``("lsp", key)`` / ``("mcp", key)`` take one
#: figure of a server session (one session gives both of its figures).
MEASURES: dict[str, tuple[str, tuple[str, Any]]] = {
    "floor": ("`python -c pass` (floor)", ("run", ["-c", "pass"])),
    "version": ("`memzoi --version`", ("run", [*script("memzoi"), "--version"])),
    "help": ("`memzoi --help`", ("run", [*script("memzoi"), "--help"])),
    "explain": ("`memzoi explain credential_token`", ("run", [*script("memzoi"), "explain", "credential_token"])),
    "lsp_libraries": (f"`python -c '{LSP_LIBRARIES}'` (the LSP libraries alone)", ("run", ["-c", LSP_LIBRARIES])),
    "lsp_initialize": ("`memzoi-lsp` spawn → `initialize` answered", ("lsp", "initialize")),
    "lsp_diagnostics": ("`memzoi-lsp` spawn → first diagnostics of the opened record", ("lsp", "diagnostics")),
    "lsp_ws_cold": (
        "`memzoi-lsp` spawn → first diagnostics of the opened record, {n}-record workspace, cold",
        ("lsp_ws", "cold"),
    ),
    "lsp_ws_warm": (
        "`memzoi-lsp` spawn → first diagnostics of the opened record, {n}-record workspace, warm",
        ("lsp_ws", "warm"),
    ),
    "mcp_libraries": (f"`python -c '{MCP_LIBRARIES}'` (the MCP SDK alone)", ("run", ["-c", MCP_LIBRARIES])),
    "mcp_initialize": ("`memzoi-mcp` spawn → `initialize` answered", ("mcp", "initialize")),
    "mcp_tools": ("`memzoi-mcp` spawn → `tools/list` answered", ("mcp", "tools")),
}


#: Measures that do not run this project's code (the same with or without ``--baseline``).
NOT_OURS = ("floor", "lsp_libraries", "mcp_libraries")
#: Measures that need ``--workspace``.
WORKSPACE_MEASURES = ("lsp_ws_cold", "lsp_ws_warm")


class BigWorkspace:
    """The ``--workspace`` workspace and, per tree measured, its cold and warm runtime directories (the memzoi
    home of each session: :meth:`env`)."""

    def __init__(self, root: Path, n: int, tmp: Path) -> None:
        man = generate(root, n, seed=1, git=True)
        self.root, self.n, self.doc, self.tmp = man.root, n, man.records[0], tmp
        self.homes: dict[tuple[int, str], Path] = {}

    def env(self, env: dict[str, str], state: str) -> dict[str, str]:
        """``env`` with the memzoi home of ``state`` (``cold``: its project directories removed now; ``warm``:
        made once by a ``memzoi check`` of the workspace under ``env``)."""
        key = (id(env), state)
        home = self.homes.get(key)
        if home is None:
            home = self.tmp / f"home-{len(self.homes)}-{state}"
            home.mkdir()
            self.homes[key] = home
            if state == "warm":
                run = subprocess.run(
                    [sys.executable, *script("memzoi"), "check", ".memzoi"],
                    cwd=self.root,
                    env=dict(env, MEMZOI_HOME=str(home)),
                    stdout=subprocess.DEVNULL,
                    stderr=subprocess.PIPE,
                )
                if run.returncode not in (0, 1):
                    raise RuntimeError(f"memzoi check failed ({run.returncode}): {run.stderr.decode()[-2000:]}")
        if state == "cold":
            shutil.rmtree(home / "projects", ignore_errors=True)
        return dict(env, MEMZOI_HOME=str(home))


def measure(
    keys: list[str],
    repeats: int,
    warmup: int,
    ws: Path,
    doc: Path,
    env: dict[str, str],
    log=lambda *a: None,
    baseline: dict[str, str] | None = None,
    big: BigWorkspace | None = None,
) -> dict[str, Any]:
    """Wall-time and CPU samples (seconds) of every measure in ``keys``, ``warmup + repeats`` interleaved rounds,
    then one ``-X importtime`` run of each. With ``baseline`` (the environment of another source tree), each
    measure of this project's code is also taken with it in the same rounds, as ``KEY@baseline``. ``big``: the
    workspace of the ``lsp_ws_*`` measures."""
    slots = [(k, k, env) for k in keys]
    if baseline is not None:
        slots = [s for k in keys for s in [(k, k, env)] + ([] if k in NOT_OURS else [(f"{k}@baseline", k, baseline)])]
    walls: dict[str, list[float]] = {name: [] for name, _, _ in slots}
    cpus: dict[str, list[float]] = {name: [] for name, _, _ in slots}
    for i in range(warmup + repeats):
        sessions: dict[tuple[str, int], dict[str, Any]] = {}  # one server session per kind and tree each round
        for name, key, e in slots:
            kind, what = MEASURES[key][1]
            if kind == "run":
                wall, cpu, _ = run_once(what, ws, e)
            elif kind == "lsp_ws":
                assert big is not None, "--workspace is needed"
                got = lsp_once(big.root, big.doc, big.env(e, what))
                wall, cpu = got["diagnostics_s"], got["diagnostics_cpu_s"]
            else:
                if (kind, id(e)) not in sessions:
                    sessions[kind, id(e)] = lsp_once(ws, doc, e) if kind == "lsp" else mcp_once(ws, e)
                got = sessions[kind, id(e)]
                wall, cpu = got[f"{what}_s"], got[f"{what}_cpu_s"]
            if i >= warmup:
                walls[name].append(wall)
                cpus[name].append(cpu)
        log(f"round {i + 1}/{warmup + repeats}" + (" (warm-up)" if i < warmup else ""))
    imports: dict[str, Any] = {}
    with tempfile.TemporaryDirectory(prefix="memzoi-importtime-") as tmp:
        sessions = {}
        for name, key, e in slots:
            kind, what = MEASURES[key][1]
            errlog = Path(tmp) / f"{kind}-{id(e)}"
            if kind == "run":
                imports[name] = parse_importtime(run_once(what, ws, e, importtime=True)[2])
            elif kind == "lsp_ws" and big is not None:
                errlog = Path(tmp) / f"{name}"
                imports[name] = lsp_once(big.root, big.doc, big.env(e, what), errlog)["imports_diagnostics"]
            elif kind == "lsp" or what == "tools":  # MCP's figure at `initialize` would need a session of its own
                if (kind, id(e)) not in sessions:
                    sessions[kind, id(e)] = lsp_once(ws, doc, e, errlog) if kind == "lsp" else mcp_once(ws, e, errlog)
                imports[name] = sessions[kind, id(e)][f"imports_{what}"]
    return {
        name: {
            "label": MEASURES[key][0].format(n=f"{big.n:,}" if big else "N")
            + (" — baseline" if name.endswith("@baseline") else ""),
            "wall_s": summary(walls[name]),
            "cpu_s": summary(cpus[name]),
            "imports": imports.get(name),
        }
        for name, key, _ in slots
    }


def render(results: dict[str, Any], mach: dict[str, Any], load: tuple[Any, Any]) -> str:
    """The Markdown table: wall time, ratio to the floor, CPU time, import time, modules, heavy modules."""
    floor = results["floor"]["wall_s"]["median"]
    rows = [
        "| measure | wall, ms: median (min–max) | × floor | CPU, ms: median | imports, ms | modules | "
        "heavy modules imported |",
        "| --- | --- | --- | --- | --- | --- | --- |",
    ]
    for r in results.values():
        w = r["wall_s"]
        wall = (
            f"{w['median'] * 1000:.0f} ({w['min'] * 1000:.0f}–{w['max'] * 1000:.0f})"
            if w["n"] > 1
            else f"{w['median'] * 1000:.0f}"
        )
        imp = r["imports"]
        cells = [f"{imp['ms']:.0f}", str(imp["modules"]), ", ".join(imp["heavy"]) or "none"] if imp else ["–"] * 3
        cpu = f"{r['cpu_s']['median'] * 1000:.0f}" if r.get("cpu_s", {}).get("n") else "–"
        rows.append(f"| {r['label']} | {wall} | {w['median'] / floor:.1f}× | {cpu} | " + " | ".join(cells) + " |")
    lb, la = load
    loads = f"load average {lb[0]:.2f} before, {la[0]:.2f} after" if lb and la else "load average unknown"
    n = results["floor"]["wall_s"]["n"]
    info = (
        f"Machine: {mach['nproc']} CPUs, {mach['cpu']}, Python {mach['python']}, {mach['platform']}; taken "
        f"{mach['utc']}, {n} rounds, {loads}."
    )
    return info + "\n\n" + "\n".join(rows) + "\n"


def main(argv: list[str] | None = None) -> int:
    """Command line: see the module docstring and ``--help``."""
    p = argparse.ArgumentParser(prog="python -m tests.benchmarks.startup", description=__doc__.split("\n\n", 1)[0])
    p.add_argument("--repeats", type=int, default=20, help="counted rounds (default 20)")
    p.add_argument("--warmup", type=int, default=1, help="rounds run first and not counted (default 1)")
    p.add_argument("--no-lsp", action="store_true", help="leave out the language server")
    p.add_argument("--no-mcp", action="store_true", help="leave out the MCP server")
    p.add_argument(
        "--baseline",
        metavar="DIR",
        help="also measure the source tree DIR (the folder holding memzoi/, e.g. lsp_server/ of another "
        "checkout) in the same rounds, put first on PYTHONPATH: before and after side by side",
    )
    p.add_argument(
        "--workspace",
        type=int,
        default=0,
        metavar="N",
        help="also measure first diagnostics in a workspace of N records, cold and warm (see above)",
    )
    p.add_argument("--only", metavar="KEYS", help=f"comma-separated measures to take, of: {', '.join(MEASURES)}")
    p.add_argument("--json", dest="json_out", help="write the raw results here")
    p.add_argument("--markdown", help="write the Markdown table here")
    p.add_argument("--quiet", action="store_true")
    args = p.parse_args(argv)
    keys = [
        k
        for k in MEASURES
        if not (args.no_lsp and k.startswith("lsp"))
        and not (args.no_mcp and k.startswith("mcp"))
        and (args.workspace or k not in WORKSPACE_MEASURES)
    ]
    if args.only:
        only = args.only.split(",")
        unknown = sorted(set(only) - set(MEASURES))
        if unknown:
            p.error(f"unknown measures: {', '.join(unknown)}")
        keys = [k for k in keys if k in only]
        if "floor" not in keys:
            keys.insert(0, "floor")  # the table's ratios are to the floor
    log = (lambda *a: None) if args.quiet else (lambda *a: print(*a, file=sys.stderr, flush=True))
    with tempfile.TemporaryDirectory(prefix="memzoi-startup-") as tmp:
        man = generate(Path(tmp) / "ws", 20, seed=1, git=False)
        home = Path(tmp) / "home"
        home.mkdir()
        before = machine()["loadavg"]
        env = _env(home)
        baseline = None
        if args.baseline:
            baseline = dict(
                env,
                PYTHONPATH=os.pathsep.join(
                    [str(Path(args.baseline).resolve()), *filter(None, [env.get("PYTHONPATH")])]
                ),
            )
        big = None
        if args.workspace:
            log(f"generating a workspace of {args.workspace} records")
            big = BigWorkspace(Path(tmp) / "big", args.workspace, Path(tmp))
        results = measure(keys, args.repeats, args.warmup, man.root, man.records[0], env, log, baseline, big)
        after = machine()["loadavg"]
    mach = machine()
    table = render(results, mach, (before, after))
    print(table)
    if args.json_out:
        Path(args.json_out).write_text(
            json.dumps({"machine": mach, "load": [before, after], "results": results}, indent=2) + "\n"
        )
    if args.markdown:
        Path(args.markdown).write_text(table)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
