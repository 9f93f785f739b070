"""How the ``memzoi`` process ends (:func:`memzoi.cli.main.entry`): ``check`` ends at once after its report, without
the interpreter's finalization (freeing what the run held took some 40 ms after a check of 11,000 files), with its
whole report written, its exit code kept and the exit handlers run; the other commands end as usual."""

from __future__ import annotations

import gc
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from memzoi.cli.main import main

from . import builders

#: A process that runs the command line's entry with an object whose finalizer prints when the interpreter frees it,
#: and an exit handler that prints too.
_PROBE = """
import atexit, gc, sys
from memzoi.cli.main import entry

class Freed:
    def __del__(self):
        sys.stdout.write("finalized\\n")
        sys.stdout.flush()

kept = Freed()
atexit.register(lambda: sys.stdout.write(f"exit handler ran, collector {'on' if gc.isenabled() else 'off'}\\n"))
sys.argv = ["memzoi", *sys.argv[1:]]
entry()
"""


def _run(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, MEMZOI_HOME=str(tmp_path / "home"))
    return subprocess.run(
        [sys.executable, "-c", _PROBE, *args], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120
    )


def _workspace(tmp_path: Path, records: int, leaky: int = 1) -> None:
    for i in range(records):
        builders.write(tmp_path, builders.record_path(f"r-{i}"), builders.record(f"r-{i}"))
    # records with a finding, so the exit code is 1 and the report is not empty
    for i in range(leaky):
        rid = f"leaky-{i}"
        builders.write(
            tmp_path, builders.record_path(rid), builders.record(rid, body="AKIAIOSFODNN7EXAMPLE is the key\n")
        )


def test_check_ends_at_once_with_its_whole_report_and_exit_code(tmp_path):
    _workspace(tmp_path, 40)
    done = _run(tmp_path, "check", ".memzoi", "--format", "json", "--no-cache")
    report, _, rest = done.stdout.rpartition("}\n")
    assert done.returncode == 1, done.stderr
    parsed = json.loads(report + "}")
    assert parsed["files_checked"] == 41 and parsed["findings"]
    # the exit handler ran after the report, the collector stayed off (nothing is freed); the interpreter did not
    # free the process's objects
    assert rest == "exit handler ran, collector off\n"
    assert "finalized" not in done.stdout


def test_a_large_report_into_a_pipe_is_whole(tmp_path):
    # more than a pipe buffer (64 KiB) of report, read by the parent while the child writes: nothing is cut off
    _workspace(tmp_path, 0, leaky=400)
    done = _run(tmp_path, "check", ".memzoi", "--format", "json", "--no-cache")
    report = done.stdout.removesuffix("exit handler ran, collector off\n")
    assert len(report) > 64 * 1024 and done.returncode == 1
    assert json.loads(report)["files_checked"] == 400


def test_search_ends_at_once_with_its_whole_answer(tmp_path):
    _workspace(tmp_path, 3, leaky=0)
    done = _run(tmp_path, "search", "record", "--json", "--no-progress")
    answer, _, rest = done.stdout.rpartition("}\n")
    assert done.returncode == 0, done.stderr
    assert len(json.loads(answer + "}")["records"]) == 3
    assert rest == "exit handler ran, collector on\n"  # the handlers ran; the interpreter freed nothing
    assert "finalized" not in done.stdout


def test_rebuild_ends_at_once_with_its_summary_and_a_whole_store(tmp_path):
    _workspace(tmp_path, 12)
    done = _run(tmp_path, "rebuild", "--no-progress")
    assert done.returncode == 0, done.stderr
    summary, _, rest = done.stdout.rpartition("(see `memzoi check`)\n")
    assert summary.startswith("indexed 13 file(s): 13 record(s)")
    # the exit handler ran after the summary; the interpreter did not free the process's objects (the collector
    # is left as it is: a rebuild does not turn it off)
    assert rest == "exit handler ran, collector on\n" and "finalized" not in done.stdout
    doctor = _run(tmp_path, "doctor")
    assert "the index matches the .memzoi files" in doctor.stdout, doctor.stdout


@pytest.mark.parametrize("args", [("schema", "record"), ("check", "--help")])
def test_other_commands_end_as_usual(tmp_path, args):
    _workspace(tmp_path, 1)
    done = _run(tmp_path, *args)
    assert done.stdout.endswith("collector on\nfinalized\n"), done.stderr


def test_a_check_run_in_process_leaves_the_collector_on(tmp_path, monkeypatch, capsys):
    # main() without entry(): the caller's process goes on (a test, an embedding tool), so its collector is its own
    monkeypatch.chdir(tmp_path)
    _workspace(tmp_path, 2)
    assert gc.isenabled()
    assert main(["check", ".memzoi", "--format", "json", "--no-cache"]) == 1
    assert gc.isenabled()
