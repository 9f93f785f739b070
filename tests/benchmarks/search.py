"""Search with the index current: ``memzoi search QUERY --json`` (a fresh process: imports, the refresh's stat
walk, the query) and the MCP tool ``search_memory`` in a running ``memzoi-mcp`` (its first call, which loads the
core, and the calls after it, which pay only the refresh and the query: with change notifications, the stats of
what changed instead of a walk), and a later call right after a same-size edit of one record (that record
re-indexed), at a given workspace size.

Run from the project root::

    .venv/bin/python -m tests.benchmarks.search --sizes 50000 --repeats 5 --workdir W
    .venv/bin/python -m tests.benchmarks.search --sizes 50000 --baseline ../memzoi-base/lsp_server

Each size's workspace is generated (:mod:`tests.benchmarks.generate`, reused when ``--workdir`` already holds it)
and searched twice, untimed (the first search builds the index when it is missing or was made by another build),
so the measured runs find the index current: the refresh only stats the files. Then ``--repeats`` interleaved rounds, each a ``memzoi search`` and one
MCP session of ``--calls`` calls (with ``--baseline``, the same for the other source tree in the same round, with
a memzoi home of its own, since another build's index is rebuilt, never served). Wall and CPU (user + system of
the process: from ``getrusage`` for the command, from ``/proc`` for the server) are medians with min–max; the load
average before and after is printed with the table.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

from .generate import generate
from .run import _env, machine, summary
from .startup import _children_cpu_s, proc_cpu_s, script


def prepare(ws: Path, n: int, env: dict[str, str], seed: int = 1) -> None:
    """Generate the workspace of ``n`` records at ``ws`` unless it is there, and leave its index current under
    ``env``'s memzoi home: searched twice (a search builds an index that is missing or was made by another build,
    and refreshes one that is there; the second finds it current)."""
    if not (ws / ".memzoi" / "records").is_dir():
        generate(ws, n, seed=seed)
    for argv in (["search", "lineage", "--json"], ["search", "lineage", "--json"]):
        proc = subprocess.run(
            [sys.executable, *script("memzoi"), *argv, "--root", str(ws), "--no-progress"],
            cwd=ws,
            env=env,
            capture_output=True,
        )
        if proc.returncode != 0:
            raise RuntimeError(f"memzoi {argv[0]} failed ({proc.returncode}): {proc.stderr.decode()[-2000:]}")


def cli_once(ws: Path, env: dict[str, str], query: str) -> tuple[float, float]:
    """One ``memzoi search QUERY --json``: ``(wall s, CPU s)``; it must find a record."""
    cpu0 = _children_cpu_s()
    t0 = time.perf_counter()
    proc = subprocess.run(
        [sys.executable, *script("memzoi"), "search", query, "--json", "--root", str(ws), "--no-progress"],
        cwd=ws,
        env=env,
        capture_output=True,
    )
    wall = time.perf_counter() - t0
    if proc.returncode != 0 or not json.loads(proc.stdout)["records"]:
        raise RuntimeError(f"memzoi search failed ({proc.returncode}): {proc.stderr.decode()[-2000:]}")
    return wall, _children_cpu_s() - cpu0


def edit_one(ws: Path) -> None:
    """A same-size edit of one record of ``ws`` (the last character of its body flipped), as a person or an agent
    edits a file between two calls: the next call re-indexes it."""
    folder = ws / ".memzoi" / "records"
    while True:
        entries = sorted(os.scandir(folder), key=lambda e: e.name)
        files = [e for e in entries if e.is_file() and e.name.endswith(".md")]
        if files:
            path = Path(files[0].path)
            break
        folder = Path(next(e.path for e in entries if e.is_dir()))
    data = bytearray(path.read_bytes())
    i = len(data.rstrip(b"\n")) - 1
    data[i] = ord("X") if data[i] != ord("X") else ord("Y")
    path.write_bytes(bytes(data))


def mcp_session(
    ws: Path, env: dict[str, str], query: str, calls: int, timeout: float = 600, edits: int = 0
) -> list[tuple[float, float]]:
    """One ``memzoi-mcp --root ws`` session: ``initialize``, then ``calls`` calls of ``search_memory``, then
    ``edits`` calls each right after an edit of one record (:func:`edit_one`, untimed); ``(wall s, CPU s)`` of each
    call, from the request written to its answer read."""
    proc = subprocess.Popen(
        [sys.executable, *script("memzoi-mcp"), "--root", str(ws)],
        cwd=ws,
        env=env,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )
    watchdog = threading.Timer(timeout, proc.kill)  # a hung server ends the benchmark, not the machine
    watchdog.start()
    assert proc.stdin is not None and proc.stdout is not None

    def send(msg: dict[str, Any]) -> None:
        proc.stdin.write(json.dumps(msg).encode("utf-8") + b"\n")  # type: ignore[union-attr]
        proc.stdin.flush()  # type: ignore[union-attr]

    def answer(rid: int) -> dict[str, Any]:
        while True:
            line = proc.stdout.readline()  # type: ignore[union-attr]
            if not line:
                raise RuntimeError(f"memzoi-mcp exited before answering request {rid}")
            msg = json.loads(line)
            if msg.get("id") == rid and "method" not in msg:
                if "error" in msg or msg.get("result", {}).get("isError"):
                    raise RuntimeError(f"memzoi-mcp request {rid} failed: {str(msg)[:2000]}")
                return msg

    out: list[tuple[float, float]] = []
    try:
        params = {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "bench", "version": "1"}}
        send({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": params})
        answer(0)
        send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        for i in range(1, calls + edits + 1):
            if i > calls:
                edit_one(ws)
            cpu0 = proc_cpu_s(proc.pid)
            t0 = time.perf_counter()
            send(
                {
                    "jsonrpc": "2.0",
                    "id": i,
                    "method": "tools/call",
                    "params": {"name": "search_memory", "arguments": {"query": query}},
                }
            )
            msg = answer(i)
            out.append((time.perf_counter() - t0, proc_cpu_s(proc.pid) - cpu0))
            if not msg["result"].get("structuredContent", {}).get("results"):
                raise RuntimeError("search_memory found nothing")
    finally:
        proc.stdin.close()
        proc.wait(60)
        watchdog.cancel()
    return out


def measure(
    ws: Path, trees: dict[str, dict[str, str]], repeats: int, calls: int, query: str, log: Any
) -> dict[str, Any]:
    """Interleaved rounds over ``trees`` (name → environment): per tree the CLI's and the MCP calls' samples."""
    samples: dict[str, dict[str, list[tuple[float, float]]]] = {
        t: {"cli": [], "mcp_first": [], "mcp_next": [], "mcp_edit": []} for t in trees
    }
    for i in range(repeats):
        for name, env in trees.items():
            # the edits of the sessions before this one made the tree's index stale: an untimed search brings it
            # current first, so each measure is of an index that is current (issue 29's condition)
            cli_once(ws, env, query)
            samples[name]["cli"].append(cli_once(ws, env, query))
            got = mcp_session(ws, env, query, calls, edits=calls - 1)
            samples[name]["mcp_first"].append(got[0])
            samples[name]["mcp_next"] += got[1:calls]
            samples[name]["mcp_edit"] += got[calls:]
        log(f"round {i + 1}/{repeats}")
    return {
        name: {
            key: {"wall_s": summary([w for w, _ in xs]), "cpu_s": summary([c for _, c in xs])}
            for key, xs in per.items()
        }
        for name, per in samples.items()
    }


LABELS = {
    "cli": "`memzoi search` (fresh process)",
    "mcp_first": "MCP `search_memory`, first call of a session",
    "mcp_next": "MCP `search_memory`, later calls",
    "mcp_edit": "MCP `search_memory`, later call right after an edit of one record",
}


def _cell(s: dict[str, Any]) -> str:
    if not s.get("n"):
        return "–"
    return f"{s['median']:.3f} ({s['min']:.3f}–{s['max']:.3f})"


def render(results: dict[int, dict[str, Any]], load: tuple[Any, Any], mach: dict[str, Any]) -> str:
    """The Markdown table: per size, tree and measure, wall and CPU medians (min–max)."""
    rows = ["| size | tree | measure | wall, s | CPU, s |", "| --- | --- | --- | --- | --- |"]
    for n, per_tree in results.items():
        for tree, per in per_tree.items():
            for key, label in LABELS.items():
                rows.append(f"| {n:,} | {tree} | {label} | {_cell(per[key]['wall_s'])} | {_cell(per[key]['cpu_s'])} |")
    lb, la = load
    loads = f"load average {lb[0]:.2f} before, {la[0]:.2f} after" if lb and la else "load average unknown"
    return (
        f"Machine: {mach['nproc']} CPUs, {mach['cpu']}, Python {mach['python']}; taken {mach['utc']}; {loads}.\n\n"
        + "\n".join(rows)
        + "\n"
    )


def main(argv: list[str] | None = None) -> int:
    """Command line: see the module docstring and ``--help``."""
    p = argparse.ArgumentParser(prog="python -m tests.benchmarks.search", description=__doc__.split("\n\n", 1)[0])
    p.add_argument("--sizes", default="50000", help="comma-separated record counts (default 50000)")
    p.add_argument("--repeats", type=int, default=5, help="interleaved rounds (default 5)")
    p.add_argument("--calls", type=int, default=6, help="search_memory calls per MCP session (default 6)")
    p.add_argument("--query", default="lineage", help="the words searched (default: lineage)")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--workdir", required=True, help="where workspaces and memzoi homes are kept (reused)")
    p.add_argument(
        "--baseline",
        metavar="DIR",
        help="also measure the source tree DIR (the folder holding memzoi/, e.g. lsp_server/ of another checkout), "
        "put first on PYTHONPATH, in the same rounds",
    )
    p.add_argument("--json", dest="json_out", help="write the raw results here")
    p.add_argument("--quiet", action="store_true")
    args = p.parse_args(argv)
    log = (lambda *a: None) if args.quiet else (lambda *a: print(*a, file=sys.stderr, flush=True))
    workdir = Path(args.workdir).resolve()
    results: dict[int, dict[str, Any]] = {}
    before = machine()["loadavg"]
    for n in (int(s) for s in args.sizes.split(",")):
        ws = workdir / f"ws{n}"
        trees: dict[str, dict[str, str]] = {}
        for name, src in [("this tree", None), ("baseline", args.baseline)][: 2 if args.baseline else 1]:
            home = workdir / f"home{n}-{'baseline' if src else 'this'}"
            home.mkdir(parents=True, exist_ok=True)
            env = _env(home)
            if src:
                env["PYTHONPATH"] = os.pathsep.join([str(Path(src).resolve()), *filter(None, [env.get("PYTHONPATH")])])
            log(f"[{n}] preparing {name}")
            prepare(ws, n, env, args.seed)
            trees[name] = env
        results[n] = measure(ws, trees, args.repeats, max(2, args.calls), args.query, log)
    after = machine()["loadavg"]
    table = render(results, (before, after), machine())
    print(table)
    if args.json_out:
        Path(args.json_out).write_text(json.dumps({"load": [before, after], "results": results}, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
