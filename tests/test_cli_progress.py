"""Progress of a long `memzoi check` / `memzoi rebuild` (memzoi.cli.progress): drawn on a terminal's stderr only,
one line rewritten in place and cleared at the end, never in a pipe, a log or any report format."""

from __future__ import annotations

import io
import json
import os
import pty
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from memzoi.cli.main import main
from memzoi.cli.progress import Progress, progress_wanted
from tests.benchmarks.generate import generate


class FakeTTY(io.StringIO):
    def isatty(self) -> bool:
        if self.closed:  # as a real closed stream does
            raise ValueError("I/O operation on closed file")
        return True


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_a_long_run_draws_one_line_with_the_rate_and_clears_it():
    stream, clock = FakeTTY(), Clock()
    p = Progress("check", "checking", stream=stream, min_files=300, clock=clock)
    assert p.enabled
    clock.now += 2.0
    p(500, 1000)
    clock.now += 2.0
    p(1000, 1000)
    p.finish()
    out = stream.getvalue()
    assert out.startswith("\rmemzoi check: checking 500/1,000 files (50%), 250 files/s")
    assert "\rmemzoi check: checking 1,000/1,000 files (100%), 250 files/s" in out
    assert "\n" not in out  # one line, rewritten
    last = "memzoi check: checking 1,000/1,000 files (100%), 250 files/s"
    assert out.endswith("\r" + " " * len(last) + "\r")  # cleared, cursor back at the start


def test_redraws_are_throttled_but_the_last_one_is_drawn():
    stream, clock = FakeTTY(), Clock()
    p = Progress("rebuild", "indexing", stream=stream, min_files=10, clock=clock)
    for done in range(1, 501):
        clock.now += 0.001  # 500 files in half a second: a few redraws, not 500
        p(done, 500)
    draws = stream.getvalue().count("\r")
    assert 2 <= draws <= 10
    assert "500/500 files (100%)" in stream.getvalue()


def test_a_short_run_stays_silent_until_the_delay_passes():
    stream, clock = FakeTTY(), Clock()
    p = Progress("check", "checking", stream=stream, min_files=300, delay=1.0, clock=clock)
    p(1, 20)
    p.finish()
    assert stream.getvalue() == ""  # nothing drawn, nothing to clear
    clock.now += 1.5  # a small run that is slow (a slow disk) shows it after all
    p(2, 20)
    assert "2/20 files" in stream.getvalue()


def test_a_shorter_line_pads_over_a_longer_one():
    stream, clock = FakeTTY(), Clock()
    p = Progress("check", "checking", stream=stream, min_files=0, clock=clock)
    clock.now += 1
    p(9_999, 10_000)
    clock.now += 10_000  # the rate drops from 9,999 to 1 files/s: the line gets shorter
    p(10_000, 10_000)
    first, second = stream.getvalue().split("\r")[1:3]
    assert len(second) == len(first) and second.rstrip().endswith("1 files/s")


def test_progress_is_wanted_on_a_terminal_only():
    assert progress_wanted(FakeTTY(), environ={"TERM": "xterm"})
    assert not progress_wanted(io.StringIO(), environ={"TERM": "xterm"})  # a pipe or a file
    assert not progress_wanted(FakeTTY(), environ={"TERM": "dumb"})
    assert not progress_wanted(FakeTTY(), disabled=True, environ={})
    closed = FakeTTY()
    closed.close()
    assert not progress_wanted(closed, environ={})


def test_a_vanished_terminal_ends_the_progress_without_failing_the_run():
    stream, clock = FakeTTY(), Clock()
    p = Progress("check", "checking", stream=stream, min_files=0, clock=clock)
    stream.close()
    p(1, 2)
    p.finish()
    assert not p.enabled


@pytest.fixture(scope="module")
def big(tmp_path_factory) -> Path:
    """A project of 330 files: above the size from which progress is shown."""
    root = tmp_path_factory.mktemp("progress") / "ws"
    generate(root, 300, git=False)
    return root


def test_no_progress_when_stderr_is_not_a_terminal(big, capsys):
    assert main(["check", "--root", str(big), "--format", "json", "--no-cache"]) in (0, 1)
    out, err = capsys.readouterr()
    assert json.loads(out)["files_checked"] == 330
    assert "checking" not in err and "\r" not in err and "\r" not in out
    assert main(["rebuild", "--root", str(big), "--json"]) == 0
    out, err = capsys.readouterr()
    assert json.loads(out)["files_indexed"] == 330 and err == ""


def _on_a_terminal(args: list[str], cwd: Path, env: dict[str, str], stdout: Path) -> str:
    """Run ``python -m memzoi ARGS`` with stderr on a pseudo-terminal and stdout into ``stdout``; what the
    terminal received."""
    master, slave = pty.openpty()
    chunks: list[bytes] = []

    def read() -> None:
        while True:
            try:
                data = os.read(master, 4096)
            except OSError:  # EIO: the child closed the terminal
                return
            if not data:
                return
            chunks.append(data)

    with open(stdout, "wb") as out:
        proc = subprocess.Popen(
            [sys.executable, "-m", "memzoi", *args],
            cwd=cwd,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=slave,
        )
    os.close(slave)
    reader = threading.Thread(target=read)
    reader.start()
    assert proc.wait(timeout=600) in (0, 1)
    reader.join(timeout=60)
    os.close(master)
    return b"".join(chunks).decode("utf-8", "replace")


def test_a_real_check_on_a_terminal_shows_progress_and_its_report_does_not(big, tmp_path):
    env = {**os.environ, "TERM": "xterm"}
    env.pop("NO_COLOR", None)
    seen = _on_a_terminal(["check", ".memzoi", "--format", "json", "--no-cache"], big, env, tmp_path / "out.json")
    assert "memzoi check: checking" in seen and "/330 files" in seen and "files/s" in seen
    assert seen.endswith("\r") and seen.rsplit("\r", 2)[-2].strip() == ""  # the line is cleared at the end
    report = (tmp_path / "out.json").read_text(encoding="utf-8")
    assert json.loads(report)["files_checked"] == 330 and "checking" not in report and "\r" not in report

    seen = _on_a_terminal(["rebuild", "--json"], big, env, tmp_path / "rebuild.json")
    assert "memzoi rebuild: indexing" in seen and "330/330 files (100%)" in seen
    assert json.loads((tmp_path / "rebuild.json").read_text(encoding="utf-8"))["files_indexed"] == 330


@pytest.mark.parametrize("how", ["--no-progress", "TERM=dumb", "--quiet"])
def test_progress_is_off_with_no_progress_quiet_or_a_dumb_terminal(big, tmp_path, how):
    env = {**os.environ, "TERM": "dumb" if how == "TERM=dumb" else "xterm"}
    flags = [how] if how.startswith("--") else []
    seen = _on_a_terminal(["check", ".memzoi", "--format", "json", *flags], big, env, tmp_path / "out.json")
    assert "checking" not in seen
