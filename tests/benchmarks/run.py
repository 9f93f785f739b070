"""The benchmark harness: generated workspaces, ``memzoi check``, ``memzoi rebuild`` and the language server,
side by side with a naive python-frontmatter + jsonschema baseline and detect-secrets (SPEC §9).

Run from the project root (needs the ``bench`` extra for the baselines)::

    .venv/bin/python -m tests.benchmarks.run --sizes 1000,10000 --json bench.json --markdown bench.md

Every wall-clock figure is a fresh process (cold: no index, no caches of ours; the OS page cache is warm after
generation, as on a developer machine), repeated ``--repeats`` times and reported as median with min–max.
Latencies (edit → diagnostics, hover, code action) are percentiles over many requests in one session, measured
in the client from the moment a message is written to the moment the answer is parsed; the server runs with
``debounceMs: 0`` (``initializationOptions``), so the edit figure excludes the debounce.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from .generate import Manifest, generate
from .lsp_client import LspClient

#: SPEC §9 bars, checked at 10,000 records: metric key -> (limit, unit, statistic shown).
BARS = {
    "check_wall_s": (3.0, "s", "median"),
    "lsp_initialize_ms": (100.0, "ms", "median"),
    "lsp_edit_ms": (20.0, "ms", "p95"),
    "lsp_hover_key_ms": (20.0, "ms", "p95"),
    "lsp_hover_provenance_ms": (20.0, "ms", "p95"),
    "lsp_code_action_ms": (20.0, "ms", "p95"),
    "lsp_peak_rss_mb": (200.0, "MB", "median"),
}


def percentile(values: list[float], q: float) -> float:
    """The ``q``-th percentile (0–100) by linear interpolation between closest ranks."""
    xs = sorted(values)
    if not xs:
        return float("nan")
    k = (len(xs) - 1) * q / 100
    lo = int(k)
    hi = min(lo + 1, len(xs) - 1)
    return xs[lo] + (xs[hi] - xs[lo]) * (k - lo)


def summary(values: list[float]) -> dict[str, float]:
    """``{n, median, min, max, p50, p95, p99}`` of ``values``."""
    if not values:
        return {"n": 0}
    return {
        "n": len(values),
        "median": statistics.median(values),
        "min": min(values),
        "max": max(values),
        "p50": percentile(values, 50),
        "p95": percentile(values, 95),
        "p99": percentile(values, 99),
    }


def _env(home: Path) -> dict[str, str]:
    env = dict(os.environ)
    env["MEMZOI_HOME"] = str(home)  # never touch the user's ~/.memzoi
    env.pop("PYTHONPROFILEIMPORTTIME", None)
    # Measure what a user runs: Python keeps compiled bytecode next to the sources after the first run. Some
    # sandboxes and CI images turn that off, which adds the compilation of every module to every "cold" run.
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    return env


def warm_bytecode(env: dict[str, str]) -> None:
    """Import the commands and the server once, untimed, so that their bytecode caches exist (see :func:`_env`)."""
    subprocess.run(
        [sys.executable, "-c", "import memzoi.cli.main, memzoi.runs.check, memzoi.stores.index, memzoi_lsp.server"],
        env=env,
        check=True,
    )


def timed(cmd: list[str], cwd: Path, env: dict[str, str]) -> tuple[float, subprocess.CompletedProcess]:
    """Run ``cmd`` to completion; returns ``(wall seconds, completed process)``. The process's CPU seconds
    (user + system, its own reaped children included) are stored as ``proc.cpu_s``: on a loaded machine they
    say more than the wall time."""
    before = _children_cpu()
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True)
    wall = time.perf_counter() - t0
    proc.cpu_s = _children_cpu() - before  # type: ignore[attr-defined]
    return wall, proc


def _children_cpu() -> float:
    try:
        import resource
    except ImportError:  # not on Windows
        return float("nan")
    ru = resource.getrusage(resource.RUSAGE_CHILDREN)
    return ru.ru_utime + ru.ru_stime


def measure_check(
    ws: Path,
    repeats: int,
    env: dict[str, str],
    extra: tuple[str, ...] = ("--no-cache",),
    before: Any = None,
    target: str = ".memzoi",
) -> dict[str, Any]:
    """``memzoi check .memzoi --format json`` (cold by default: ``--no-cache``), ``before()`` run untimed before
    each run: wall seconds per run, files checked, files/s; ``stdout`` of the last run."""
    walls: list[float] = []
    cpus: list[float] = []
    files = 0
    codes: dict[str, int] = {}
    last = b""
    for i in range(repeats):
        if before is not None:
            before(i)
        wall, proc = timed([sys.executable, "-m", "memzoi", "check", target, "--format", "json", *extra], ws, env)
        last = proc.stdout
        cpus.append(proc.cpu_s)
        if proc.returncode not in (0, 1):
            raise RuntimeError(f"memzoi check failed ({proc.returncode}): {proc.stderr.decode()[-2000:]}")
        data = json.loads(proc.stdout)
        files = data["files_checked"]
        codes = {}
        for f in data["findings"]:
            codes[f["code"]] = codes.get(f["code"], 0) + 1
        walls.append(wall)
    return {
        "wall_s": summary(walls),
        "cpu_s": summary(cpus),
        "files": files,
        "files_per_s": files / statistics.median(walls),
        "finding_codes": codes,
        "stdout": last,
    }


def _drop_cache(home: Path) -> None:
    for p in home.rglob("memzoi-lsp-store.db*"):
        p.unlink()


def measure_cache(
    ws: Path, man: Manifest, repeats: int, env: dict[str, str], home: Path, uncached: bytes
) -> dict[str, Any]:
    """``memzoi check`` with the verdict cache: *cold* (the cache removed before each run, so the run fills it),
    *warm* (nothing changed since the previous run) and *edit* (one line appended to one clean record before each
    run; the record is restored at the end). Warm runs must print exactly ``uncached`` (the ``--no-cache``
    report of the same files)."""
    out: dict[str, Any] = {"cold": measure_check(ws, repeats, env, (), before=lambda i: _drop_cache(home))}
    out["warm"] = measure_check(ws, repeats, env, ())
    if out["warm"]["stdout"] != uncached or out["cold"]["stdout"] != uncached:
        raise RuntimeError("memzoi check printed another report with the verdict cache than without it")
    target = man.records[len(man.records) // 2]
    original = target.read_bytes()

    def edit(i: int) -> None:
        target.write_bytes(original + f"\nOne more line of guidance, take {i}.\n".encode())

    try:
        out["edit"] = measure_check(ws, repeats, env, (), before=edit)
    finally:
        target.write_bytes(original)
    # One record given by name, the rest of the workspace warm in the cache (an editor's or pre-commit's check);
    # run once untimed first, so the restored record's entry is back. Its report must be --no-cache's.
    one = str(man.records[len(man.records) // 3].relative_to(ws))
    base = measure_check(ws, 1, env, ("--no-cache",), target=one)["stdout"]
    measure_check(ws, 1, env, (), target=one)
    out["one"] = measure_check(ws, repeats, env, (), target=one)
    if out["one"]["stdout"] != base:
        raise RuntimeError("memzoi check of one file printed another report with the verdict cache than without it")
    for r in out.values():
        r.pop("stdout", None)
    return out


def measure_rebuild(ws: Path, repeats: int, env: dict[str, str]) -> dict[str, Any]:
    """``memzoi rebuild --json`` (index recreated from the files each time): wall seconds and the command's own
    ``seconds``."""
    walls: list[float] = []
    inner: list[float] = []
    cpus: list[float] = []
    for _ in range(repeats):
        wall, proc = timed([sys.executable, "-m", "memzoi", "rebuild", "--json", "--root", str(ws)], ws, env)
        cpus.append(proc.cpu_s)
        if proc.returncode != 0:
            raise RuntimeError(f"memzoi rebuild failed ({proc.returncode}): {proc.stderr.decode()[-2000:]}")
        walls.append(wall)
        inner.append(json.loads(proc.stdout).get("seconds", float("nan")))
    return {"wall_s": summary(walls), "inner_s": summary(inner), "cpu_s": summary(cpus)}


def measure_search(ws: Path, repeats: int, env: dict[str, str], query: str = "lineage") -> dict[str, Any]:
    """``memzoi search QUERY --json`` on the index the rebuild rows left (nothing changed since, so the refresh
    only stats the files): wall and CPU seconds from process start to output."""
    walls: list[float] = []
    cpus: list[float] = []
    for _ in range(repeats):
        wall, proc = timed([sys.executable, "-m", "memzoi", "search", query, "--json", "--root", str(ws)], ws, env)
        if proc.returncode != 0 or not json.loads(proc.stdout)["records"]:
            raise RuntimeError(f"memzoi search failed ({proc.returncode}): {proc.stderr.decode()[-2000:]}")
        walls.append(wall)
        cpus.append(proc.cpu_s)
    return {"wall_s": summary(walls), "cpu_s": summary(cpus)}


def baseline_available(what: str) -> bool:
    """Whether the packages of a baseline are installed (the ``bench`` extra)."""
    import importlib.util

    mods = ("frontmatter", "jsonschema") if what == "naive" else ("detect_secrets",)
    return all(importlib.util.find_spec(m) is not None for m in mods)


def measure_baseline(ws: Path, what: str, repeats: int, env: dict[str, str]) -> dict[str, Any] | None:
    """A baseline (``naive`` or ``detect-secrets``) in a fresh process per run, like ``memzoi check``."""
    if what != "floor" and not baseline_available(what):
        return None
    root = Path(__file__).resolve().parents[2]
    env = dict(env)
    env["PYTHONPATH"] = str(root) + os.pathsep + env.get("PYTHONPATH", "")
    walls: list[float] = []
    inner: list[float] = []
    cpus: list[float] = []
    out: dict[str, Any] = {}
    for _ in range(repeats):
        wall, proc = timed([sys.executable, "-m", "tests.benchmarks.baselines", what, str(ws)], ws, env)
        cpus.append(proc.cpu_s)
        if proc.returncode != 0:
            raise RuntimeError(f"baseline {what} failed: {proc.stderr.decode()[-2000:]}")
        out = json.loads(proc.stdout)
        walls.append(wall)
        inner.append(out["seconds"])
    return {
        "wall_s": summary(walls),
        "inner_s": summary(inner),
        "cpu_s": summary(cpus),
        "files": out.get("files"),
        "problems": out.get("problems"),
    }


# --- language server ---------------------------------------------------------------------------------------


def _capabilities() -> dict[str, Any]:
    return {
        "general": {"positionEncodings": ["utf-16"]},
        "window": {"workDoneProgress": True},
        "textDocument": {
            "synchronization": {"didSave": True, "dynamicRegistration": False},
            "publishDiagnostics": {"versionSupport": True, "relatedInformation": True},
            "hover": {"contentFormat": ["markdown", "plaintext"]},
            "codeAction": {
                "codeActionLiteralSupport": {"codeActionKind": {"valueSet": ["quickfix", "refactor", "source"]}},
                "resolveSupport": {"properties": ["edit"]},
                "dataSupport": True,
            },
        },
        "workspace": {"workspaceFolders": True},
    }


def _is_scan_end(msg: dict) -> bool:
    if msg.get("method") == "$/progress":
        value = msg.get("params", {}).get("value", {})
        return value.get("kind") == "end" and str(msg["params"].get("token", "")).startswith("memzoi-scan")
    return False


def _diags_for(uri: str, version: int | None = None):
    def pred(msg: dict) -> bool:
        if msg.get("method") != "textDocument/publishDiagnostics":
            return False
        p = msg["params"]
        return p["uri"] == uri and (version is None or p.get("version") == version)

    return pred


def lsp_session(
    ws: Path, man: Manifest, env: dict[str, str], *, edits: int = 0, requests: int = 0, timeout: float = 900
) -> dict[str, Any]:
    """One server session on ``ws``: initialize, background scan, then (optionally) ``edits`` edits of an open
    record and ``requests`` hovers and code actions. Returns the raw samples in milliseconds and RSS in bytes."""
    client = LspClient(ws, env)
    out: dict[str, Any] = {}
    try:
        client.wait_idle()  # interpreter start-up is measured apart, by cold_start()
        before = client._stat()
        dt, _ = client.call("initialize", _init_params(ws), timeout=timeout)
        out["initialize_ms"] = dt * 1000
        t_init = client.notify("initialized", {})
        _, t_end, _ = client.wait_for(_is_scan_end, timeout=timeout)
        out["scan_s"] = t_end - t_init
        after = client._stat()
        if before and after:
            out["scan_cpu_s"] = (after[1] - before[1]) / os.sysconf("SC_CLK_TCK")
        out["rss_after_scan"] = client.peak_rss()[1]
        if edits or requests:
            out.update(_interactive(client, man, edits, requests))
        out["peak_rss"] = client.peak_rss()[0]
    finally:
        client.close()
    return out


def _init_params(ws: Path) -> dict[str, Any]:
    root_uri = ws.resolve().as_uri()
    return {
        "processId": os.getpid(),
        "clientInfo": {"name": "memzoi-bench", "version": "1"},
        "rootUri": root_uri,
        "workspaceFolders": [{"uri": root_uri, "name": ws.name}],
        "capabilities": _capabilities(),
        "initializationOptions": {"debounceMs": 0},
    }


def cold_start(ws: Path, env: dict[str, str], timeout: float = 120) -> float:
    """Milliseconds from spawning ``memzoi-lsp`` to the answer of an ``initialize`` written at once (what an
    editor waits for: interpreter start-up and imports included). No scan runs: ``initialized`` is never
    sent."""
    client = LspClient(ws, env)
    try:
        client.request("initialize", _init_params(ws))
        t, _ = client.response(1, timeout)
        return (t - client.started) * 1000
    finally:
        client.close()


def _open(client: LspClient, path: Path) -> tuple[str, str, list]:
    uri = path.resolve().as_uri()
    text = path.read_text(encoding="utf-8")
    mark = client.mark()
    client.notify(
        "textDocument/didOpen", {"textDocument": {"uri": uri, "languageId": "markdown", "version": 1, "text": text}}
    )
    _, _, msg = client.wait_for(_diags_for(uri, 1), start=mark, timeout=120)
    return uri, text, msg["params"]["diagnostics"]


def _interactive(client: LspClient, man: Manifest, edits: int, requests: int) -> dict[str, Any]:
    targets = man.records[:: max(1, len(man.records) // 8)][:8]
    planted = [ps[0] for k, ps in sorted(man.planted.items()) if ps and k in ("legacy", "duplicate_key", "invisible")]
    docs = [_open(client, p) for p in targets + planted]
    out = {"edit_ms": _edits(client, docs[0], edits)}
    out.update(_requests(client, docs, requests))
    for d_uri, _, _ in docs:
        client.notify("textDocument/didClose", {"textDocument": {"uri": d_uri}})
    return out


def _edits(client: LspClient, doc: tuple[str, str, list], edits: int) -> list[float]:
    """Type and delete one character at the end of the last body line of the open document ``doc``, waiting
    each time for the diagnostics of that version; returns the latencies in milliseconds."""
    uri, text, _ = doc
    lines = text.split("\n")
    line = len(lines) - 2 if len(lines) > 1 and lines[-1] == "" else len(lines) - 1
    col = len(lines[line].encode("utf-16-le")) // 2
    edit_ms: list[float] = []
    version = 1
    for i in range(edits):
        version += 1
        end = col if i % 2 == 0 else col + 1
        change = {
            "range": {"start": {"line": line, "character": col}, "end": {"line": line, "character": end}},
            "text": "x" if i % 2 == 0 else "",
        }
        mark = client.mark()
        sent = client.notify(
            "textDocument/didChange", {"textDocument": {"uri": uri, "version": version}, "contentChanges": [change]}
        )
        _, t, _ = client.wait_for(_diags_for(uri, version), start=mark, timeout=60)
        edit_ms.append((t - sent) * 1000)
    if edits % 2:  # leave the text as it was
        change = {
            "range": {"start": {"line": line, "character": col}, "end": {"line": line, "character": col + 1}},
            "text": "",
        }
        client.notify(
            "textDocument/didChange", {"textDocument": {"uri": uri, "version": version + 1}, "contentChanges": [change]}
        )
    return edit_ms


def _requests(
    client: LspClient, docs: list[tuple[str, str, list]], requests: int, *, hovers: bool = True, actions: bool = True
) -> dict[str, list[float]]:
    """``requests`` rounds over the open ``docs``: a hover on the ``id`` key, a provenance hover (on the
    ``title`` value) and a code action over the whole document with its published diagnostics."""
    hover_key: list[float] = []
    hover_prov: list[float] = []
    action_ms: list[float] = []
    for i in range(requests):
        d_uri, d_text, diags = docs[i % len(docs)]
        d_lines = d_text.split("\n")
        title_line = next((n for n, l in enumerate(d_lines) if l.startswith("title:")), 1)
        if hovers:
            dt, _ = client.call(
                "textDocument/hover", {"textDocument": {"uri": d_uri}, "position": {"line": 1, "character": 1}}
            )
            hover_key.append(dt * 1000)
            dt, _ = client.call(
                "textDocument/hover",
                {"textDocument": {"uri": d_uri}, "position": {"line": title_line, "character": 10}},
            )
            hover_prov.append(dt * 1000)
        if actions:
            dt, _ = client.call(
                "textDocument/codeAction",
                {
                    "textDocument": {"uri": d_uri},
                    "range": {"start": {"line": 0, "character": 0}, "end": {"line": len(d_lines), "character": 0}},
                    "context": {"diagnostics": diags, "triggerKind": 1},
                },
            )
            action_ms.append(dt * 1000)
    return {"hover_key_ms": hover_key, "hover_provenance_ms": hover_prov, "code_action_ms": action_ms}


def measure_lsp(
    ws: Path, man: Manifest, sessions: int, edits: int, requests: int, env: dict[str, str]
) -> dict[str, Any]:
    """``sessions`` cold server sessions (initialize, scan, RSS); the last one also runs the interactive part."""
    runs = [
        lsp_session(
            ws, man, env, edits=edits if i == sessions - 1 else 0, requests=requests if i == sessions - 1 else 0
        )
        for i in range(sessions)
    ]
    cold = [cold_start(ws, env) for _ in range(sessions)]
    last = runs[-1]
    mb = 1024 * 1024
    return {
        "initialize_ms": summary([r["initialize_ms"] for r in runs]),
        "spawn_to_initialize_ms": summary(cold),
        "scan_s": summary([r["scan_s"] for r in runs]),
        "scan_cpu_s": summary([r["scan_cpu_s"] for r in runs if "scan_cpu_s" in r]),
        "rss_after_scan_mb": summary([r["rss_after_scan"] / mb for r in runs if r.get("rss_after_scan")]),
        "peak_rss_mb": summary([r["peak_rss"] / mb for r in runs if r.get("peak_rss")]),
        "edit_ms": summary(last.get("edit_ms", [])),
        "hover_key_ms": summary(last.get("hover_key_ms", [])),
        "hover_provenance_ms": summary(last.get("hover_provenance_ms", [])),
        "code_action_ms": summary(last.get("code_action_ms", [])),
    }


# --- driver ------------------------------------------------------------------------------------------------


def machine() -> dict[str, Any]:
    """The machine and load the figures were taken on."""
    cpu = platform.processor() or "?"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    try:
        load = os.getloadavg()
    except OSError:
        load = None
    return {
        "nproc": os.cpu_count(),
        "cpu": cpu,
        "python": platform.python_version(),
        "platform": platform.platform(),
        "loadavg": load,
        "utc": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
    }


def run_size(n: int, workdir: Path, args: argparse.Namespace) -> dict[str, Any]:
    """Generate the workspace for ``n`` records and take every measurement that applies to that size."""
    ws = workdir / f"ws-{n}"
    t0 = time.perf_counter()
    man = generate(ws, n, args.seed, git=not args.no_git)
    res: dict[str, Any] = {
        "n_records": n,
        "n_proposals": man.n_proposals,
        "generate_s": time.perf_counter() - t0,
        "load_before": machine()["loadavg"],
    }
    home = workdir / f"home-{n}"
    home.mkdir()
    env = _env(home)
    warm_bytecode(env)
    log = (lambda *a: print(*a, file=sys.stderr, flush=True)) if not args.quiet else (lambda *a: None)
    log(f"[{n}] generated {man.files} files in {res['generate_s']:.1f} s")
    res["floor"] = measure_baseline(ws, "floor", args.repeats, env)
    log(f"[{n}] floor median {res['floor']['wall_s']['median']:.2f} s")
    res["check"] = measure_check(ws, args.repeats, env)
    log(f"[{n}] check median {res['check']['wall_s']['median']:.2f} s")
    res["cache"] = measure_cache(ws, man, args.repeats, env, home, res["check"].pop("stdout"))
    log(
        f"[{n}] cached check median cold {res['cache']['cold']['wall_s']['median']:.2f} s, warm "
        f"{res['cache']['warm']['wall_s']['median']:.2f} s, one edit {res['cache']['edit']['wall_s']['median']:.2f} s"
    )
    if not args.no_baselines:
        res["naive"] = measure_baseline(ws, "naive", args.repeats, env)
        if args.ds_repeats >= 0:
            res["detect_secrets"] = measure_baseline(ws, "detect-secrets", args.ds_repeats or args.repeats, env)
        log(f"[{n}] baselines done")
    if not args.no_rebuild:
        res["rebuild"] = measure_rebuild(ws, args.repeats, env)
        log(f"[{n}] rebuild median {res['rebuild']['wall_s']['median']:.2f} s")
        res["search"] = measure_search(ws, args.repeats, env)
        log(f"[{n}] search median {res['search']['wall_s']['median']:.2f} s")
    if n <= args.lsp_max:
        res["lsp"] = measure_lsp(ws, man, args.lsp_sessions or args.repeats, args.edits, args.requests, env)
        log(f"[{n}] lsp done")
    res["load_after"] = machine()["loadavg"]
    if not args.keep:
        shutil.rmtree(ws, ignore_errors=True)
    return res


def _fmt(s: dict[str, float] | None, key: str = "median", scale: float = 1.0, digits: int = 2) -> str:
    if not s or not s.get("n"):
        return "–"
    if key == "median":
        v, lo, hi = s["median"] * scale, s["min"] * scale, s["max"] * scale
        return f"{v:.{digits}f} ({lo:.{digits}f}–{hi:.{digits}f})" if s["n"] > 1 else f"{v:.{digits}f}"
    return f"{s[key] * scale:.{digits}f}"


def render(results: list[dict[str, Any]], mach: dict[str, Any]) -> str:
    """A Markdown report: one column per workspace size, medians with (min–max), percentiles, ratios."""
    head = (
        "| measurement | "
        + " | ".join(f"{r['n_records']:,} rec + {r['n_proposals']:,} prop" for r in results)
        + " | SPEC §9 bar (at 10k) |"
    )
    rows = [head, "|" + " --- |" * (len(results) + 2)]

    def row(label: str, cells: list[str], bar: str = "") -> None:
        rows.append(f"| {label} | " + " | ".join(cells) + f" | {bar} |")

    def get(r, *path):
        for p in path:
            r = r.get(p) if isinstance(r, dict) else None
        return r

    def floor_ratio(r, *path):
        a, b = get(r, *path, "wall_s", "median"), get(r, "floor", "wall_s", "median")
        return f"{a / b:.1f}×" if a and b else "–"

    row(
        "floor: read + BLAKE3 of every file (fresh process) wall, s", [_fmt(get(r, "floor", "wall_s")) for r in results]
    )
    row("floor CPU, s", [_fmt(get(r, "floor", "cpu_s")) for r in results])
    row("`memzoi check --no-cache` wall, s", [_fmt(get(r, "check", "wall_s")) for r in results], "< 3 s")
    row("`memzoi check --no-cache` CPU (user+sys), s", [_fmt(get(r, "check", "cpu_s")) for r in results])
    row("`memzoi check --no-cache` files/s (wall)", [f"{get(r, 'check', 'files_per_s'):,.0f}" for r in results])
    row("`memzoi check --no-cache` / floor", [floor_ratio(r, "check") for r in results], "≤ 6×")
    for key, label, bar in (
        ("cold", "cache cold (empty, filled by the run)", "≤ 6×"),
        ("warm", "cache warm, nothing changed", "≤ 2×"),
        ("edit", "cache warm, one file changed", "≤ 2.5×"),
        ("one", "one record given by name, the rest warm", "≤ 0.5 s"),
    ):
        row(f"`memzoi check`, {label}: wall, s", [_fmt(get(r, "cache", key, "wall_s")) for r in results])
        row(f"`memzoi check`, {label}: CPU, s", [_fmt(get(r, "cache", key, "cpu_s")) for r in results])
        row(f"`memzoi check`, {label} / floor", [floor_ratio(r, "cache", key) for r in results], bar)
    row("naive frontmatter+jsonschema wall, s", [_fmt(get(r, "naive", "wall_s")) for r in results])
    row("naive CPU, s", [_fmt(get(r, "naive", "cpu_s")) for r in results])
    row("detect-secrets wall, s", [_fmt(get(r, "detect_secrets", "wall_s")) for r in results])
    row("detect-secrets CPU, s", [_fmt(get(r, "detect_secrets", "cpu_s")) for r in results])

    def ratio(r, other):
        a, b = get(r, "check", "wall_s", "median"), get(r, other, "wall_s", "median")
        return f"{a / b:.2f}×" if a and b else "–"

    def ratio_both(r):
        a = get(r, "check", "wall_s", "median")
        b, c = get(r, "naive", "wall_s", "median"), get(r, "detect_secrets", "wall_s", "median")
        return f"{a / (b + c):.2f}×" if a and b and c else "–"

    row("ratio check / naive", [ratio(r, "naive") for r in results])
    row("ratio check / detect-secrets", [ratio(r, "detect_secrets") for r in results])
    row("ratio check / (naive + detect-secrets)", [ratio_both(r) for r in results])
    row("`memzoi rebuild` wall, s", [_fmt(get(r, "rebuild", "wall_s")) for r in results])
    row("`memzoi rebuild` CPU (with its workers), s", [_fmt(get(r, "rebuild", "cpu_s")) for r in results])

    def rebuild_ratio(r):
        a, b = get(r, "rebuild", "wall_s", "median"), get(r, "cache", "cold", "wall_s", "median")
        return f"{a / b:.2f}×" if a and b else "–"

    row(
        "`memzoi rebuild` / cold `memzoi check` (cache filled by the run), wall",
        [rebuild_ratio(r) for r in results],
        "≤ 1.2×",
    )
    row(
        "`memzoi search` on the built index, wall, s",
        [_fmt(get(r, "search", "wall_s")) for r in results],
        "≤ 0.3 s (at 50k)",
    )
    row("`memzoi search` on the built index, CPU, s", [_fmt(get(r, "search", "cpu_s")) for r in results])
    row("LSP `initialize` answered, ms", [_fmt(get(r, "lsp", "initialize_ms"), digits=1) for r in results], "< 100 ms")
    row(
        "LSP cold start: spawn → `initialize` answered, ms",
        [_fmt(get(r, "lsp", "spawn_to_initialize_ms"), digits=0) for r in results],
    )
    row("LSP `initialized` → background scan end, s", [_fmt(get(r, "lsp", "scan_s")) for r in results])
    row("LSP server CPU during initialize + scan, s", [_fmt(get(r, "lsp", "scan_cpu_s")) for r in results])
    for key, label in (
        ("edit_ms", "edit → diagnostics (debounce 0)"),
        ("hover_key_ms", "hover on a key"),
        ("hover_provenance_ms", "hover provenance"),
        ("code_action_ms", "code action"),
    ):
        ps = ("p50", "p95", "p99") if key == "edit_ms" else ("p50", "p95")
        cells = []
        for r in results:
            s = get(r, "lsp", key)
            cells.append(" / ".join(_fmt(s, p, digits=1) for p in ps) + (f" (n={s['n']})" if s and s.get("n") else ""))
        row(f"{label}, ms {'/'.join(ps)}", cells, "p95 < 20 ms")
    row("server RSS after scan, MB", [_fmt(get(r, "lsp", "rss_after_scan_mb"), digits=0) for r in results])
    row("server peak RSS, MB", [_fmt(get(r, "lsp", "peak_rss_mb"), digits=0) for r in results], "< 200 MB")
    row(
        "load average before → after",
        [f"{r['load_before'][0]:.1f} → {r['load_after'][0]:.1f}" if r.get("load_before") else "–" for r in results],
    )
    info = (
        f"Machine: {mach['nproc']} CPUs, {mach['cpu']}, Python {mach['python']}, {mach['platform']}; "
        f"taken {mach['utc']}."
    )
    return info + "\n\n" + "\n".join(rows) + "\n"


def main(argv: list[str] | None = None) -> int:
    """Command line: see the module docstring and ``--help``."""
    p = argparse.ArgumentParser(prog="python -m tests.benchmarks.run", description=__doc__.split("\n", 1)[0])
    p.add_argument("--sizes", default="1000,10000", help="comma-separated record counts (default 1000,10000)")
    p.add_argument("--repeats", type=int, default=3, help="cold runs per command and server sessions (default 3)")
    p.add_argument("--edits", type=int, default=500, help="edits of an open record (default 500)")
    p.add_argument("--requests", type=int, default=200, help="hover and code-action requests each (default 200)")
    p.add_argument("--lsp-sessions", type=int, default=0, help="cold server sessions (default: --repeats)")
    p.add_argument("--lsp-max", type=int, default=10_000, help="largest size the server is measured on")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument(
        "--ds-repeats",
        type=int,
        default=0,
        help="runs of detect-secrets (default: --repeats; -1: skip it; it takes minutes at 10,000 records)",
    )
    p.add_argument(
        "--no-baselines",
        action="store_true",
        help="skip the naive and detect-secrets baselines (the read+BLAKE3 floor is always measured)",
    )
    p.add_argument("--no-rebuild", action="store_true", help="skip `memzoi rebuild`")
    p.add_argument("--no-git", action="store_true", help="do not commit the generated workspace to git")
    p.add_argument("--workdir", help="where workspaces are generated (default: a temporary directory)")
    p.add_argument("--keep", action="store_true", help="keep the generated workspaces")
    p.add_argument("--json", dest="json_out", help="write the raw results here")
    p.add_argument("--markdown", help="write the Markdown table here")
    p.add_argument(
        "--render",
        nargs="+",
        metavar="JSON",
        help="measure nothing: render the table from results files written by --json (one column per size; "
        "a size in several files takes each measurement from the last file that has it)",
    )
    p.add_argument("--quiet", action="store_true")
    args = p.parse_args(argv)
    if args.render:
        loaded = [json.loads(Path(f).read_text()) for f in args.render]
        merged: dict[int, dict[str, Any]] = {}
        for d in loaded:  # the same size in several files: later files win, measurement by measurement
            for r in d["results"]:
                merged.setdefault(r["n_records"], {}).update(r)
        results = [merged[n] for n in sorted(merged)]
        table = render(results, loaded[-1]["machine"])
        print(table)
        if args.markdown:
            Path(args.markdown).write_text(table)
        return 0
    sizes = [int(s) for s in args.sizes.split(",") if s.strip()]
    tmp = None
    if args.workdir:
        workdir = Path(args.workdir)
        workdir.mkdir(parents=True, exist_ok=True)
    else:
        tmp = tempfile.TemporaryDirectory(prefix="memzoi-bench-")
        workdir = Path(tmp.name)
    try:
        results = [run_size(n, workdir, args) for n in sizes]
    finally:
        if tmp is not None:
            tmp.cleanup()
    mach = machine()
    table = render(results, mach)
    print(table)
    if args.json_out:
        Path(args.json_out).write_text(json.dumps({"machine": mach, "results": results}, indent=2) + "\n")
    if args.markdown:
        Path(args.markdown).write_text(table)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
