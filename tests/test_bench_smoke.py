"""Smoke tests of the benchmark generator and harness (``tests/benchmarks/``) on tiny workspaces, so the
benchmark code cannot rot between the runs that fill ``docs/performance.md``."""

from __future__ import annotations

import json
import sys
from collections import Counter
from pathlib import Path

from memzoi.runs.check import check_paths
from tests.benchmarks import baselines, run
from tests.benchmarks.generate import PLANTS, generate


def _tree(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*.md"))}


def test_generator_is_deterministic_and_plants_each_finding_once(tmp_path):
    a = generate(tmp_path / "a", 150, seed=7, git=False)
    b = generate(tmp_path / "b", 150, seed=7, git=False)
    assert _tree(a.root) == _tree(b.root)
    assert a.n_proposals == 15 and len(_tree(a.root)) == 165
    assert _tree(generate(tmp_path / "c", 150, seed=8, git=False).root) != _tree(a.root)

    report = check_paths([str(a.root / ".memzoi")])
    assert report.files_checked == 165
    by_path: dict[str, set[str]] = {}
    for loc in report.findings:
        by_path.setdefault(str(Path(loc.path).resolve()), set()).add(loc.finding.code)
    for kind, code in PLANTS.items():
        assert a.planted[kind], kind
        for path in a.planted[kind]:
            assert code in by_path.get(str(path.resolve()), set()), (kind, path)
    # The clean records and packets the harness edits and hovers carry no error or warning.
    noisy = Counter(
        loc.finding.code
        for loc in report.findings
        if loc.finding.severity <= 2 and Path(loc.path).resolve() in {p.resolve() for p in a.records + a.proposals}
    )
    assert not noisy, noisy


def test_harness_runs_end_to_end_on_a_tiny_workspace(tmp_path):
    out = tmp_path / "bench.json"
    md = tmp_path / "bench.md"
    rc = run.main(
        [
            "--sizes",
            "40",
            "--repeats",
            "1",
            "--edits",
            "6",
            "--requests",
            "3",
            "--no-baselines",
            "--no-git",
            "--workdir",
            str(tmp_path / "work"),
            "--json",
            str(out),
            "--markdown",
            str(md),
            "--quiet",
        ]
    )
    assert rc == 0
    res = json.loads(out.read_text())["results"][0]
    assert res["check"]["files"] == 44
    assert res["check"]["cpu_s"]["median"] > 0
    assert res["check"]["finding_codes"].get("credential_token") == 1
    assert res["floor"]["files"] == 44 and res["floor"]["wall_s"]["n"] == 1
    assert {k: res["cache"][k]["files"] for k in ("cold", "warm", "edit")} == {"cold": 44, "warm": 44, "edit": 44}
    lsp = res["lsp"]
    assert lsp["edit_ms"]["n"] == 6 and lsp["hover_key_ms"]["n"] == 3 and lsp["code_action_ms"]["n"] == 3
    # Counts, not times: each measure was taken once per repeat and is a duration (CONTRIBUTING: no wall-clock
    # assertions; which of two phases took longer is the machine's business).
    assert lsp["initialize_ms"]["n"] == lsp["spawn_to_initialize_ms"]["n"] == 1
    assert lsp["initialize_ms"]["median"] >= 0 and lsp["spawn_to_initialize_ms"]["median"] >= 0
    if sys.platform.startswith("linux"):  # RSS comes from /proc
        assert lsp["peak_rss_mb"]["median"] > 10
    assert res["rebuild"]["wall_s"]["n"] == 1 and res["search"]["wall_s"]["n"] == 1
    assert "`memzoi search` on the built index, wall" in md.read_text()
    assert (
        "`memzoi check --no-cache` wall" in md.read_text() and "cache warm, nothing changed / floor" in md.read_text()
    )


def test_baselines_read_the_same_files(tmp_path):
    man = generate(tmp_path / "w", 30, seed=2, git=False)
    files = baselines.files_of(man.root / ".memzoi")
    assert len(files) == man.files
    # Planted YAML/schema problems are among the files the naive validator rejects.
    assert baselines.naive(files) >= 3
    if run.baseline_available("detect-secrets"):
        assert baselines.detect_secrets_scan(files) >= 1  # the planted token


def test_percentiles():
    assert run.percentile([1, 2, 3, 4, 5], 50) == 3
    assert run.percentile(list(range(101)), 95) == 95
    s = run.summary([3.0, 1.0, 2.0])
    assert (s["median"], s["min"], s["max"], s["n"]) == (2.0, 1.0, 3.0, 3)


def test_fuzz_script_counts_inputs_and_exceptions(tmp_path, monkeypatch):
    from memzoi.judge import analysis as analysis_mod
    from tests.benchmarks import fuzz_pipeline

    (tmp_path / "a").mkdir()
    summary = fuzz_pipeline.run(300, 5, 100, tmp_path / "a")
    assert summary["checked"] == 300 and summary["index_rows"] == 30 and summary["exceptions"] == 0
    real = analysis_mod.analyze_text

    def faulty(text, path=None, **kw):  # one input in each batch fails: the script must count it
        if path is not None and Path(path).name == "f7.md":
            raise RecursionError
        return real(text, path, **kw)

    monkeypatch.setattr(analysis_mod, "analyze_text", faulty)
    (tmp_path / "b").mkdir()
    summary = fuzz_pipeline.run(300, 5, 100, tmp_path / "b")
    assert summary["internal_error"] == 3 and summary["exceptions"] == 3


def test_startup_benchmark_parses_importtime_output():
    from tests.benchmarks.startup import parse_importtime

    text = (
        "import time: self [us] | cumulative | imported package\n"
        "import time:       100 |        100 |   yaml.error\n"
        "import time:       200 |        300 | yaml\n"
        "import time:        50 |         50 | memzoi\n"
    )
    assert parse_importtime(text) == {"ms": 0.35, "modules": 3, "heavy": ["yaml"]}


def test_startup_benchmark_measures_each_kind_once(tmp_path):
    from tests.benchmarks import startup

    man = generate(tmp_path / "ws", 20, seed=1, git=False)
    home = tmp_path / "home"
    home.mkdir()
    keys = ["floor", "version", "lsp_initialize", "lsp_diagnostics", "mcp_initialize", "mcp_tools"]
    res = startup.measure(keys, 1, 0, man.root, man.records[0], run._env(home))
    assert list(res) == keys and all(r["wall_s"]["n"] == 1 for r in res.values())
    assert all(r["wall_s"]["median"] >= 0 and r["cpu_s"]["n"] == 1 for r in res.values())
    assert res["version"]["imports"]["heavy"] == [] and res["mcp_initialize"]["imports"] is None
    assert "memzoi.judge.analysis" in res["lsp_diagnostics"]["imports"]["heavy"]
    assert "`memzoi --version`" in startup.render(res, run.machine(), (None, None))


def test_startup_benchmark_takes_a_baseline_tree_in_the_same_rounds(tmp_path):
    from tests.benchmarks import startup

    man = generate(tmp_path / "ws", 20, seed=1, git=False)
    home = tmp_path / "home"
    home.mkdir()
    env = run._env(home)
    res = startup.measure(["floor", "version"], 1, 0, man.root, man.records[0], env, baseline=dict(env))
    assert list(res) == ["floor", "version", "version@baseline"]
    assert res["version@baseline"]["label"] == "`memzoi --version` — baseline"


def test_search_benchmark_times_the_command_and_the_mcp_tool(tmp_path, capsys):
    from tests.benchmarks import search

    out = tmp_path / "search.json"
    rc = search.main(
        ["--sizes", "30", "--repeats", "1", "--calls", "3", "--workdir", str(tmp_path), "--json", str(out)]
    )
    assert rc == 0
    per = json.loads(out.read_text())["results"]["30"]["this tree"]
    assert {k: per[k]["cpu_s"]["n"] for k in ("cli", "mcp_first", "mcp_next")} == {
        "cli": 1,
        "mcp_first": 1,
        "mcp_next": 2,
    }
    assert "MCP `search_memory`, later calls" in capsys.readouterr().out


def test_the_server_scans_account_splits_its_cpu_by_process_and_thread(tmp_path):
    """The cold scan's account (issue 29) names the server's threads and its helper processes apart, and its parts add
    up to the figures the table prints: the server's own CPU and the helpers'."""
    import math
    import os
    import time

    import pytest

    from tests.benchmarks.lsp_client import LspClient
    from tests.benchmarks.server_scan import _parts

    if not sys.platform.startswith("linux"):
        pytest.skip("the account reads /proc")
    done = tmp_path / "grandchild-done"
    helper = (
        "import pathlib, subprocess, sys; subprocess.run([sys.executable, '-c', 'pass']); "
        f"pathlib.Path({str(done)!r}).touch(); sys.stdin.read()"
    )
    server = (
        "import subprocess, sys, threading; stop = threading.Event(); threading.Thread(target=stop.wait).start(); "
        f"subprocess.Popen([sys.executable, '-c', {helper!r}], stdin=subprocess.PIPE, stdout=subprocess.DEVNULL); "
        "sys.stdin.buffer.read(); stop.set()"
    )
    client = LspClient(tmp_path, cmd=[sys.executable, "-c", server])
    try:
        deadline = time.monotonic() + 60
        while not done.exists():  # the helper has reaped its own child
            assert time.monotonic() < deadline and client.proc.poll() is None
            time.sleep(0.01)
        account = client.tree_account()
    finally:
        client.proc.kill()
        client.proc.wait()
    assert account is not None
    assert [h["parent"] for h in account["helpers"]] == [client.proc.pid]
    assert "import pathlib" in account["helpers"][0]["cmd"]
    assert len(account["threads"]["others"]) >= 1  # the thread waiting on the event
    parts = _parts(account)
    assert all(v >= 0 for v in parts.values())
    own = account["server"]["user"] + account["server"]["sys"]
    assert math.isclose(parts["main_s"] + parts["busiest_s"] + parts["rest_s"], own, abs_tol=1e-9)
    helpers = sum(h["own"] + h["reaped"] for h in account["helpers"])
    assert math.isclose(parts["forkserver_s"] + parts["workers_s"], helpers, abs_tol=1e-9)
    assert math.isclose(account["total"], own + helpers, abs_tol=1e-9)
    assert os.path.exists(done)


def test_the_server_scan_benchmark_keeps_the_tools_caches_for_its_cold_sessions(tmp_path, capsys):
    """Cold server sessions start as cold ``check`` does in the same script: nothing kept of the project, the tool's
    caches kept (issue 29: the comparison is of the project's analysis, not of a first start on the machine, which
    is shown apart); every session's diagnostics still equal check's."""
    from tests.benchmarks import server_scan

    home = tmp_path / "home"
    (home / "projects" / "p").mkdir(parents=True)
    (home / "cache").mkdir()
    (home / "cache" / "kept.marshal").write_bytes(b"x")
    server_scan.forget_projects(home)
    assert not (home / "projects").exists() and (home / "cache" / "kept.marshal").exists()

    out = tmp_path / "scan.json"
    assert (
        server_scan.main(["--sizes", "300", "--repeats", "1", "--workdir", str(tmp_path / "w"), "--json", str(out)])
        == 0
    )
    res = json.loads(out.read_text())[0]
    assert res["parity"]["cold"] and res["parity"]["warm"], res["parity"]["differ"]
    assert res["first"]["end_s"] > 0 and res["cold"]["end_s"] > 0
    assert "first start on this machine" in capsys.readouterr().out
