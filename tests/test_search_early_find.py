"""``memzoi search`` run by the console script (:func:`memzoi.cli.main.entry`) starts GNU find over the project's
files before argparse and the command's imports (:func:`memzoi.cli.main.list_ahead`), with the root found by the
dispatcher's rule; the command takes that listing only where its own root is the same. A find over another root, or
one no command took (a usage error, ``--help``, a refused ``--limit``), is killed and reaped: no process is left."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from memzoi.cli import main as cli_main
from memzoi.stores import findlisting, findstart

from . import builders
from .test_find_listing import needs_gnu_find


def _project(root: Path, title: str) -> Path:
    builders.write(root, builders.record_path("walrus"), builders.record("walrus", title=title))
    builders.write(root, builders.record_path("other"), builders.record("other", title="Something else"))
    return root


def _titles(out: str) -> list[str]:
    return [r["title"] for r in json.loads(out)["records"]]


@pytest.fixture
def entered(monkeypatch):
    """``(events, run)``: ``run(*argv)`` runs the console script's entry in this process and returns its exit code;
    ``events`` records each find started (``("find", root, finding)``), the parser built (``("parser",)``) and each
    find whose listing was read (``("read", finding)``). The process is not ended at once."""
    events: list[tuple] = []
    real_start, real_collect, real_build = findstart.start, findlisting.collect, cli_main.build_parser

    def start(root):
        finding = real_start(root)
        events.append(("find", os.path.abspath(root), finding))
        return finding

    def collect(finding):
        events.append(("read", finding))
        return real_collect(finding)

    def build(only=None):
        events.append(("parser",))
        return real_build(only)

    monkeypatch.setattr(findstart, "start", start)
    monkeypatch.setattr(findlisting, "start", start)
    monkeypatch.setattr(findlisting, "collect", collect)
    monkeypatch.setattr(cli_main, "build_parser", build)
    monkeypatch.setattr(cli_main, "_ENDING", {"entry": False, "at_once": False})
    monkeypatch.setattr(cli_main, "end_at_once", lambda code: None)

    def run(*argv: str) -> int:
        monkeypatch.setattr(sys, "argv", ["memzoi", *argv])
        with pytest.raises(SystemExit) as exited:
            cli_main.entry()
        return int(exited.value.code or 0)

    return events, run


def _built(events: list[tuple], *roots: Path) -> None:
    for root in roots:  # the first search builds the index (a rebuild lists by itself)
        assert cli_main.main(["search", "walrus", "--root", str(root), "--no-progress", "--json"]) == 0
    events.clear()


@needs_gnu_find
def test_find_starts_before_the_parser_and_its_listing_is_the_one_read(tmp_path, monkeypatch, capsys, entered):
    events, run = entered
    root = _project(tmp_path / "proj", "Walrus habits")
    _built(events, root)
    capsys.readouterr()
    monkeypatch.chdir(root / ".memzoi" / "records")  # the root is found from here, as the command finds it
    assert run("search", "walrus", "--json", "--no-progress") == 0
    assert _titles(capsys.readouterr().out) == ["Walrus habits"]
    finds = [e for e in events if e[0] == "find"]
    assert len(finds) == 1 and events[0][:2] == ("find", str(root)) and events[1] == ("parser",)
    early = finds[0][2]
    assert early is not None and ("read", early) in events  # the early find's listing was the refresh's input
    assert early.proc.returncode == 0 and findstart._EARLY == []


@needs_gnu_find
def test_the_root_in_root_is_where_find_starts_early(tmp_path, monkeypatch, capsys, entered):
    events, run = entered
    here, there = _project(tmp_path / "here", "Walrus here"), _project(tmp_path / "there", "Walrus there")
    _built(events, here, there)
    capsys.readouterr()
    monkeypatch.chdir(here)
    assert run("search", "walrus", f"--root={there}", "--json", "--no-progress") == 0
    assert _titles(capsys.readouterr().out) == ["Walrus there"]
    finds = [e for e in events if e[0] == "find"]
    assert len(finds) == 1 and finds[0][1] == str(there) and events[0] is finds[0]
    assert ("read", finds[0][2]) in events


@needs_gnu_find
def test_an_early_find_over_another_root_is_discarded_and_the_result_is_the_commands(
    tmp_path, monkeypatch, capsys, entered
):
    events, run = entered
    here, there = _project(tmp_path / "here", "Walrus here"), _project(tmp_path / "there", "Walrus there")
    _built(events, here, there)
    capsys.readouterr()
    monkeypatch.chdir(here)
    # argparse takes `--roo` for `--root`; the early start does not: it lists the current project, which the
    # command then does not use
    assert run("search", "walrus", "--roo", str(there), "--json", "--no-progress") == 0
    assert _titles(capsys.readouterr().out) == ["Walrus there"]
    finds = [e for e in events if e[0] == "find"]
    assert [f[1] for f in finds] == [str(here), str(there)] and events[0] is finds[0]
    early, used = finds[0][2], finds[1][2]
    assert early is not None and used is not None
    assert early.proc.returncode is not None and early.out.closed and early.err.closed  # stopped and reaped
    assert ("read", early) not in events and ("read", used) in events
    assert findstart._EARLY == []


def _fake_find(tmp_path: Path) -> Path:
    """A `find` that sleeps for a minute: left running, it shows in the process table."""
    fake = tmp_path / "bin" / "find"
    fake.parent.mkdir()
    fake.write_text(f"#!{sys.executable}\nimport time\ntime.sleep(60)\n")
    fake.chmod(0o755)
    return fake


def _with_fake_find(tmp_path: Path) -> tuple[Path, Path, dict[str, str]]:
    """A project, a :func:`_fake_find` and an environment whose ``PATH`` finds it first."""
    fake = _fake_find(tmp_path)
    env = dict(os.environ, PATH=f"{fake.parent}{os.pathsep}{os.environ.get('PATH', '')}")
    return _project(tmp_path / "proj", "Walrus habits"), fake, env


def _running(marker: str) -> list[int]:
    """The processes whose command line holds ``marker``."""
    out = []
    for pid in (p for p in os.listdir("/proc") if p.isdigit()):
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                if marker.encode() in f.read():
                    out.append(int(pid))
        except OSError:
            continue
    return out


@pytest.mark.skipif(not os.path.isdir("/proc/self"), reason="needs /proc to see the processes left")
@pytest.mark.parametrize(
    ("args", "code"),
    [
        (("--mode", "bogus"), 2),  # a usage error: argparse exits
        (("--help",), 0),
        (("--limit", "0"), 2),  # refused by the command before it lists
        (("--root", "nowhere"), 2),  # not a project
    ],
    ids=["usage-error", "help", "bad-limit", "not-a-project"],
)
def test_no_find_is_left_on_any_way_out(tmp_path, args, code):
    root = _project(tmp_path / "proj", "Walrus habits")
    fake = _fake_find(tmp_path)
    env = dict(os.environ, PATH=f"{fake.parent}{os.pathsep}{os.environ.get('PATH', '')}")
    try:
        done = subprocess.run(
            [sys.executable, "-m", "memzoi", "search", "walrus", *args],
            cwd=root,
            env=env,
            capture_output=True,
            timeout=120,
        )
        assert done.returncode == code, done.stderr
        assert _running(str(fake)) == []
    finally:
        for pid in _running(str(fake)):
            os.kill(pid, 9)


@needs_gnu_find
def test_a_search_that_rebuilds_the_index_reaps_the_find_it_did_not_read(tmp_path, monkeypatch, capsys, entered):
    events, run = entered
    root = _project(tmp_path / "proj", "Walrus habits")
    _built(events, root)
    capsys.readouterr()
    (root / ".memzoi/config.toml").write_text('[project]\nid = "other"\n')  # every row is re-judged: a rebuild
    monkeypatch.chdir(root)
    assert run("search", "walrus", "--json", "--no-progress") == 0
    assert _titles(capsys.readouterr().out) == ["Walrus habits"]
    finds = [e for e in events if e[0] == "find"]
    assert len(finds) == 1 and not [e for e in events if e[0] == "read"]  # the rebuild listed by itself
    assert finds[0][2].proc.returncode is not None and finds[0][2].out.closed  # stopped (or ended) and reaped


@needs_gnu_find
def test_a_listing_taken_from_an_early_find_dates_from_when_that_find_started(tmp_path):
    """A listing serves only calls that arrived before it started (:func:`memzoi.stores.calllisting.valid`), so
    the listing made of an early find carries that find's start, never the later moment it was taken."""
    root = _project(tmp_path / "p", "Walrus")
    findstart.start_early(root)
    started = findstart._EARLY[-1].started_ns
    ahead = findlisting.Ahead(root)
    try:
        assert ahead.started_ns == started and started < time.monotonic_ns()
        assert str(root / ".memzoi" / "records" / "walrus.md") in ahead().paths()
    finally:
        ahead.close()
        findstart.drop_early()


@pytest.mark.skipif(not os.path.isdir("/proc/self"), reason="needs /proc to see the processes left")
def test_no_find_is_left_when_the_search_is_terminated(tmp_path):
    root, fake, env = _with_fake_find(tmp_path)
    search = subprocess.Popen(
        [sys.executable, "-m", "memzoi", "search", "walrus"],
        cwd=root,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 60
        while not _running(str(fake)) and time.monotonic() < deadline:  # until find runs
            time.sleep(0.01)
        assert _running(str(fake))
        search.terminate()  # SIGTERM, as a service manager or `timeout` sends it
        assert search.wait(timeout=60) != 0
        assert _running(str(fake)) == []  # killed and reaped on the way out, not left to run orphaned
    finally:
        search.kill()
        search.wait()
        for pid in _running(str(fake)):
            os.kill(pid, 9)


#: The console script's entry, with a SIGTERM sent the moment find has started (before the listing is even kept).
_TERMINATED_AT_START = """
import os, signal
from memzoi.cli import main
from memzoi.stores import findstart
real = findstart.start
def start(root):
    found = real(root)
    os.kill(os.getpid(), signal.SIGTERM)
    return found
findstart.start = start
main.entry()
"""


@pytest.mark.skipif(not os.path.isdir("/proc/self"), reason="needs /proc to see the processes left")
def test_a_sigterm_as_soon_as_find_started_leaves_no_find(tmp_path):
    # SIGTERM ends a search through SystemExit from before find starts, so no moment leaves find orphaned
    root, fake, env = _with_fake_find(tmp_path)
    done = subprocess.run(
        [sys.executable, "-c", _TERMINATED_AT_START, "search", "walrus"], cwd=root, env=env, capture_output=True
    )
    try:
        assert done.returncode == 143  # SystemExit(128 + SIGTERM), not killed by the signal (-15)
        assert _running(str(fake)) == []
    finally:
        for pid in _running(str(fake)):
            os.kill(pid, 9)


@pytest.mark.skipif(not os.path.isdir("/proc/self"), reason="needs /proc to see the processes left")
def test_a_find_whose_wait_is_interrupted_is_killed_and_reaped(tmp_path, monkeypatch):
    root = _project(tmp_path / "proj", "Walrus habits")
    fake = _fake_find(tmp_path)
    monkeypatch.setenv("PATH", f"{fake.parent}{os.pathsep}{os.environ.get('PATH', '')}")
    finding = findstart.start(root)
    assert finding is not None
    real_wait, interrupts = finding.proc.wait, [KeyboardInterrupt()]

    def interrupted(*args, **kwargs):
        if interrupts:
            raise interrupts.pop()  # Ctrl-C, or SIGTERM raised as SystemExit, while the search waits for find
        return real_wait(*args, **kwargs)

    monkeypatch.setattr(finding.proc, "wait", interrupted)
    try:
        with pytest.raises(KeyboardInterrupt):
            finding.wait()
        assert finding.proc.returncode is not None  # killed and reaped: no find, no zombie
        assert finding.out.closed and finding.err.closed
        assert _running(str(fake)) == []
    finally:
        for pid in _running(str(fake)):
            os.kill(pid, 9)


def test_a_sigterm_during_a_hold_waits_for_the_outermost_hold_then_cleans_up_and_exits():
    import signal

    cleaned: list[str] = []
    before = signal.signal(signal.SIGTERM, findstart.terminated)
    try:
        with pytest.raises(SystemExit) as ended:
            with findstart.held(lambda: cleaned.append("outer")):
                with findstart.held(lambda: cleaned.append("inner")):
                    os.kill(os.getpid(), signal.SIGTERM)
                    for _ in range(1000):  # the handler runs between bytecodes: it only notes the signal
                        pass
                    cleaned.append("inside")
                cleaned.append("after inner")
        assert ended.value.code == 143 and cleaned == ["inside", "after inner", "outer"]
        with pytest.raises(SystemExit):  # outside a hold it ends the process at once
            os.kill(os.getpid(), signal.SIGTERM)
            for _ in range(1000):
                pass
    finally:
        signal.signal(signal.SIGTERM, before)


@pytest.mark.skipif(not os.path.isdir("/proc/self"), reason="needs /proc to see the processes left")
@pytest.mark.parametrize("query", ["", "   ", "?! -- ...", "a"], ids=["empty", "blanks", "punctuation", "one-letter"])
def test_a_query_without_a_word_is_a_usage_error(tmp_path, query):
    """A query with no word to search for would match nothing whatever the index holds: a usage error (exit 2, with
    what a query needs), not 'no matches' with exit 0; the find started ahead is reaped."""
    root = _project(tmp_path / "proj", "Walrus habits")
    fake = _fake_find(tmp_path)
    env = dict(os.environ, PATH=f"{fake.parent}{os.pathsep}{os.environ.get('PATH', '')}")
    try:
        done = subprocess.run(
            [sys.executable, "-m", "memzoi", "search", query], cwd=root, env=env, capture_output=True, timeout=120
        )
        assert done.returncode == 2, done.stderr
        assert b"no word to search for" in done.stderr and done.stdout == b""
        assert _running(str(fake)) == []
    finally:
        for pid in _running(str(fake)):
            os.kill(pid, 9)
