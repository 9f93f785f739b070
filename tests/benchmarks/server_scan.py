"""The language server's workspace scan beside ``memzoi check``, in the same run: cold and warm starts.

``python -m tests.benchmarks.server_scan [--sizes 10000] [--repeats 3] [--workdir DIR] [--keep]`` generates each
workspace (:mod:`tests.benchmarks.generate`: N records + N/10 pending packets, committed to git) and prints one
table with, per size:

- cold ``memzoi check .memzoi --format json --no-cache`` (wall seconds), the reference of the scan's target;
- the **cold** server (nothing kept of the project: no verdict cache, no index, no publish set; the tool's own
  caches in the runtime directory, compiled code and patterns, as warm as cold ``check``'s, :func:`forget_projects`):
  spawn → every diagnostic of the scan published (the last ``publishDiagnostics`` before the scan's work-done
  progress ends), spawn → progress end, and the ratio of the first to cold ``check``;
- the server's **first start on the machine** (an empty runtime directory: the tool's caches made too), the same
  times, shown apart;
- the **warm** server (the runtime directory the cold session left: its verdict cache and index): the same;
- spawn → the first diagnostics of a record opened right after ``initialized`` (cold and warm);
- the server's peak RSS (``VmHWM``) and the CPU seconds of its process tree (workers included) when the scan
  ended, beside cold ``check``'s CPU;
- whether the server published, for every file, as many diagnostics as ``check`` reports for it.

Every time is from spawning the process, so the interpreter's start-up and the server's imports are included.
The load average before and after is printed with the table: on a shared machine, read the figures beside it.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from .generate import generate
from .lsp_client import LspClient
from .run import _capabilities, _env, _is_scan_end, timed, warm_bytecode


def check_cold(ws: Path, env: dict[str, str]) -> tuple[float, dict[str, int], float]:
    """Wall seconds of a cold ``memzoi check``, its number of findings per absolute path, and its CPU seconds
    (user + system, its worker processes included)."""
    wall, proc = timed([sys.executable, "-m", "memzoi", "check", ".memzoi", "--format", "json", "--no-cache"], ws, env)
    if proc.returncode not in (0, 1):
        raise RuntimeError(f"memzoi check failed ({proc.returncode}): {proc.stderr.decode()[-2000:]}")
    counts: dict[str, int] = {}
    for f in json.loads(proc.stdout)["findings"]:
        key = str((ws / f["path"]).resolve())
        counts[key] = counts.get(key, 0) + 1
    return wall, counts, proc.cpu_s  # type: ignore[attr-defined]


def server_session(ws: Path, env: dict[str, str], opened: Path, timeout: float = 900) -> dict[str, Any]:
    """One server session: spawn, ``initialize``, ``initialized``, ``didOpen`` of ``opened`` at once, and wait
    for the scan's progress to end. Seconds from spawn; ``published``: diagnostics per path, last published."""
    client = LspClient(ws, env)
    root = ws.resolve().as_uri()
    params = {
        "processId": os.getpid(),
        "rootUri": root,
        "workspaceFolders": [{"uri": root, "name": ws.name}],
        "capabilities": _capabilities(),
        "initializationOptions": {"debounceMs": 0},
    }
    uri = opened.resolve().as_uri()
    try:
        client.call("initialize", params, timeout=timeout)
        client.notify("initialized", {})
        client.notify(
            "textDocument/didOpen",
            {
                "textDocument": {
                    "uri": uri,
                    "languageId": "markdown",
                    "version": 1,
                    "text": opened.read_text(encoding="utf-8"),
                }
            },
        )
        end, t_end, _ = client.wait_for(_is_scan_end, timeout=timeout)
        peak = client.peak_rss()[0]
        cpu, own = client.tree_cpu(), client.tree_cpu(own=True)
        account = client.tree_account()
        first = None
        last = 0.0
        published: dict[str, int] = {}
        for t, msg in client.notifications[:end]:
            if msg.get("method") != "textDocument/publishDiagnostics":
                continue
            last = t
            p = msg["params"]
            published[p["uri"]] = len(p["diagnostics"])
            if first is None and p["uri"] == uri:
                first = t
        if first is None:  # published after the scan (it should not be)
            _, first, _ = client.wait_for(
                lambda m: m.get("method") == "textDocument/publishDiagnostics" and m["params"]["uri"] == uri,
                start=end,
                timeout=timeout,
            )
    finally:
        client.close()
    s = client.started
    return {
        "all_s": last - s,
        "end_s": t_end - s,
        "open_s": first - s,
        "peak_mb": (peak or 0) / 2**20,
        "cpu_s": cpu if cpu is not None else float("nan"),
        "own_cpu_s": own if own is not None else float("nan"),
        "published": {_path(u): n for u, n in published.items() if n},
        **_parts(account),
    }


def _parts(account: dict[str, Any] | None) -> dict[str, float]:
    """The figures of :meth:`LspClient.tree_account` a table shows, in CPU seconds (NaN without ``/proc``): the
    server's main thread, its busiest other live thread (the scan thread in a cold scan), its other threads (live and
    finished) and its system time; the fork server's own; the workers' (what the fork server reaped, and live ones)."""
    nan = float("nan")
    if account is None:
        return {k: nan for k in ("main_s", "busiest_s", "rest_s", "server_sys_s", "forkserver_s", "workers_s")}
    th = account["threads"]
    others = th["others"]
    helpers = account["helpers"]
    roots = [h for h in helpers if h["parent"] not in {x["pid"] for x in helpers}]
    return {
        "main_s": th["main"],
        "busiest_s": others[0] if others else 0.0,
        "rest_s": sum(others[1:]) + th["exited"],
        "server_sys_s": account["server"]["sys"],
        "forkserver_s": sum(h["own"] for h in roots),
        "workers_s": sum(h["reaped"] for h in helpers) + sum(h["own"] for h in helpers if h not in roots),
    }


def _path(uri: str) -> str:
    from urllib.parse import unquote, urlparse

    return str(Path(unquote(urlparse(uri).path)).resolve())


def _same(published: dict[str, int], expected: dict[str, int]) -> bool:
    """The server's counts per file equal check's: by path, except that check shows a secret-bearing path
    redacted (``<redacted-path:…>``), so those files are compared as a multiset of counts."""
    hidden = sorted(n for p, n in expected.items() if "<redacted-path:" in p)
    shown = {p: n for p, n in expected.items() if "<redacted-path:" not in p}
    rest = sorted(n for p, n in published.items() if p not in shown)
    return all(published.get(p) == n for p, n in shown.items()) and rest == hidden


#: The keys of :func:`_parts`, medians in the results.
_ACCOUNT = ("main_s", "busiest_s", "rest_s", "server_sys_s", "forkserver_s", "workers_s")


def _median(rows: list[dict[str, Any]], key: str) -> float:
    return statistics.median(r[key] for r in rows)


def forget_projects(home: Path) -> None:
    """Remove what the runtime directory ``home`` keeps of projects (their stores, indexes, publish sets, ledgers:
    ``projects/``), and keep what it keeps of the tool (``cache/``: the compiled code, patterns and answers a start
    of any project reuses). A cold server session then starts as cold ``memzoi check`` does in this script: no
    verdict of the project known, the tool's caches as warm as the check's own runtime directory keeps them."""
    shutil.rmtree(home / "projects", ignore_errors=True)


def run_size(n: int, workdir: Path, repeats: int, seed: int) -> dict[str, Any]:
    """Generate the workspace of ``n`` records and measure it (see the module docstring)."""
    ws = workdir / f"ws-{n}"
    if not (ws / ".memzoi").is_dir():
        generate(ws, n, seed, git=True)
    opened = sorted((ws / ".memzoi" / "records").rglob("*.md"))[0]
    check_home = workdir / f"home-check-{n}"
    check_home.mkdir(exist_ok=True)
    env = _env(check_home)
    warm_bytecode(env)
    checks = [check_cold(ws, env) for _ in range(repeats)]
    expected = checks[-1][1]
    first, cold, warm = [], [], []
    for _ in range(repeats):
        home = workdir / f"home-server-{n}"
        shutil.rmtree(home, ignore_errors=True)
        home.mkdir()
        env = _env(home)
        first.append(server_session(ws, env, opened))  # nothing kept: no project state, no tool caches
        forget_projects(home)
        cold.append(server_session(ws, env, opened))
        warm.append(server_session(ws, env, opened))
    check_s = statistics.median(c[0] for c in checks)
    check_cpu = statistics.median(c[2] for c in checks)
    parity = {
        "cold": all(_same(r["published"], expected) for r in cold + first),
        "warm": all(_same(r["published"], expected) for r in warm),
    }
    differ = sorted(
        {
            p
            for r in first + cold + warm
            for p in r["published"].keys() | expected.keys()
            if r["published"].get(p) != expected.get(p) and "<redacted-path:" not in p
        }
    )
    parity["differ"] = [(p, expected.get(p), [r["published"].get(p) for r in first + cold + warm]) for p in differ[:10]]
    return {
        "n": n,
        "files": sum(1 for _ in (ws / ".memzoi").rglob("*.md")),
        "check_s": check_s,
        "check_cpu_s": check_cpu,
        "cold": {k: _median(cold, k) for k in ("all_s", "end_s", "open_s", "peak_mb", "cpu_s", "own_cpu_s", *_ACCOUNT)},
        "warm": {k: _median(warm, k) for k in ("all_s", "end_s", "open_s", "peak_mb", "cpu_s", "own_cpu_s")},
        "first": {k: _median(first, k) for k in ("all_s", "end_s", "cpu_s")},
        "parity": parity,
    }


def render(results: list[dict[str, Any]], load: tuple[tuple[float, ...], tuple[float, ...]]) -> str:
    """The Markdown table of :func:`run_size`'s results."""
    lines = [
        "| Measure (median, from spawn) | "
        + " | ".join(f"{r['n']:,} records ({r['files']:,} files)" for r in results)
        + " |",
        "|---|" + "---|" * len(results),
    ]

    def row(label: str, fn) -> None:
        lines.append(f"| {label} | " + " | ".join(fn(r) for r in results) + " |")

    row("cold `memzoi check --no-cache`", lambda r: f"{r['check_s']:.2f} s")
    row("cold `memzoi check --no-cache`: CPU", lambda r: f"{r['check_cpu_s']:.2f} s")
    for state in ("cold", "warm"):
        row(
            f"{state} server: all diagnostics published",
            lambda r, s=state: f"{r[s]['all_s']:.2f} s ({r[s]['all_s'] / r['check_s']:.2f}× check)",
        )
        row(f"{state} server: scan progress ended (index included)", lambda r, s=state: f"{r[s]['end_s']:.2f} s")
        row(
            f"{state} server: CPU of its process tree at the scan's end",
            lambda r, s=state: (
                f"{r[s]['cpu_s']:.2f} s ({r[s]['cpu_s'] / r['check_cpu_s']:.2f}× check; "
                f"the server process alone {r[s]['own_cpu_s']:.2f} s)"
            ),
        )
        if state == "cold":
            row(
                "cold server: that CPU by process and thread",
                lambda r: (
                    f"server: main thread {r['cold']['main_s']:.2f} s, busiest other thread "
                    f"{r['cold']['busiest_s']:.2f} s, other threads {r['cold']['rest_s']:.2f} s "
                    f"(system time {r['cold']['server_sys_s']:.2f} s of the three); fork server "
                    f"{r['cold']['forkserver_s']:.2f} s; workers {r['cold']['workers_s']:.2f} s"
                ),
            )
        row(
            f"{state} server: first diagnostics of the opened file",
            lambda r, s=state: f"{r[s]['open_s'] * 1000:.0f} ms",
        )
        row(f"{state} server: peak RSS at the end of the scan", lambda r, s=state: f"{r[s]['peak_mb']:.0f} MB")
    row(
        "first start on this machine (no tool caches either): all diagnostics / scan ended / CPU",
        lambda r: (
            f"{r['first']['all_s']:.2f} s ({r['first']['all_s'] / r['check_s']:.2f}× check) / "
            f"{r['first']['end_s']:.2f} s ({r['first']['end_s'] / r['check_s']:.2f}×) / {r['first']['cpu_s']:.2f} s"
        ),
    )
    row(
        "diagnostics per file equal `check`'s (cold / warm)",
        lambda r: f"{'yes' if r['parity']['cold'] else 'NO'} / {'yes' if r['parity']['warm'] else 'NO'}",
    )
    before, after = load
    lines.append("")
    lines.append(
        f"Load average before {before[0]:.2f} {before[1]:.2f} {before[2]:.2f}, "
        f"after {after[0]:.2f} {after[1]:.2f} {after[2]:.2f}; {os.cpu_count()} CPUs; "
        f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}."
    )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m tests.benchmarks.server_scan", description=__doc__.split("\n", 1)[0])
    p.add_argument("--sizes", default="10000", help="comma-separated record counts (default 10000)")
    p.add_argument("--repeats", type=int, default=3, help="cold + warm server sessions and cold checks (default 3)")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--workdir", help="where workspaces are generated and kept (default: a temporary directory)")
    p.add_argument("--keep", action="store_true", help="keep the temporary directory")
    p.add_argument("--json", dest="json_out", help="write the raw results here")
    a = p.parse_args(argv)
    workdir = Path(a.workdir) if a.workdir else Path(tempfile.mkdtemp(prefix="memzoi-server-scan-"))
    workdir.mkdir(parents=True, exist_ok=True)
    before = os.getloadavg()
    try:
        results = [run_size(int(s), workdir, a.repeats, a.seed) for s in a.sizes.split(",")]
    finally:
        if not a.workdir and not a.keep:
            shutil.rmtree(workdir, ignore_errors=True)
    table = render(results, (before, os.getloadavg()))
    print(table)
    if a.json_out:
        Path(a.json_out).write_text(json.dumps(results, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
