"""A cold scan told as its project is registered (:mod:`memzoi.runs.coldstart`): the workers' fork server starts
then only for a project without a store that holds many files, preloading the module the scan's workers run."""

from __future__ import annotations

from pathlib import Path

import pytest

from memzoi.base import parallel
from memzoi.runs import coldstart, prefill, scanverdicts
from memzoi.stores.fileentry import entry_chunk
from memzoi.stores.store import store_path


def _plane(root: Path, records: int, packets: int = 0) -> Path:
    md = root / ".memzoi"
    for i in range(records):
        folder = md / "records" / (f"area-{i % 3}" if i % 2 else "")
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"r-{i}.md").write_text("---\n---\n", encoding="utf-8")
    for i in range(packets):
        folder = md / "proposals" / "pending"
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"p-{i}.md").write_text("---\n---\n", encoding="utf-8")
    (md / "records" / "notes.txt").write_text("not Markdown", encoding="utf-8")
    hidden = md / ".trash"
    hidden.mkdir()
    for i in range(coldstart.PARALLEL_THRESHOLD):
        (hidden / f"h-{i}.md").write_text("", encoding="utf-8")
    return md


def _few_and_many(tmp_path: Path) -> tuple[Path, Path]:
    """Two projects: one of 10 records, one of as many as the workers start at."""
    few, many = tmp_path / "few", tmp_path / "many"
    _plane(few, 10)
    _plane(many, coldstart.PARALLEL_THRESHOLD)
    return few, many


@pytest.mark.parametrize(("records", "packets", "many"), [(299, 0, False), (250, 49, False), (250, 50, True)])
def test_many_files_counts_markdown_names_in_every_folder_but_hidden_ones(tmp_path, records, packets, many):
    assert coldstart.many_files(_plane(tmp_path, records, packets)) is many


def test_a_missing_or_unreadable_folder_holds_no_files(tmp_path):
    assert not coldstart.many_files(tmp_path / "absent", at_least=1)
    assert coldstart.many_files(_plane(tmp_path, 1), at_least=1)


def test_likely_cold_without_a_store_and_with_many_files_only(tmp_path, monkeypatch):
    started: list[str] = []
    monkeypatch.setattr(parallel, "start_helper", lambda module: started.append(module) or True)
    few, many = _few_and_many(tmp_path)
    assert not coldstart.likely_cold(few, few / ".memzoi")
    assert not coldstart.prestart(few, few / ".memzoi") and started == []
    assert coldstart.likely_cold(many, many / ".memzoi")
    assert coldstart.prestart(many, many / ".memzoi") and started == [coldstart.WORKER_MODULE]
    store = store_path(many)  # where the store is looked for is where the stores module puts it
    store.parent.mkdir(parents=True)
    store.write_bytes(b"")
    assert not coldstart.likely_cold(many, many / ".memzoi")
    assert not coldstart.prestart(many, many / ".memzoi") and len(started) == 1


def test_the_fork_server_preloads_what_the_scan_s_workers_run():
    assert coldstart.WORKER_MODULE == entry_chunk.__module__
    assert scanverdicts.PARALLEL_THRESHOLD is coldstart.PARALLEL_THRESHOLD


#: Run in a fresh interpreter (one thread, as the language server before its reader starts): the fork server made
#: by forking it serves workers, holds the caller's imports (its command line is the caller's, not a new
#: interpreter's ``-c``), keeps only standard input, output, error and its own socket and pipe, and has no logging
#: handler of the caller's.
_FORKED = r"""
import logging, multiprocessing, os, sys
from multiprocessing import forkserver
from memzoi.base import parallel

logging.getLogger("memzoi").addHandler(logging.FileHandler(sys.argv[1]))  # the caller's: never the workers'
held = sys.argv[1] + ".held"
extra = os.open(held, os.O_CREAT | os.O_RDONLY)  # a descriptor of the caller's: not inherited by the fork server
assert parallel.fork_helper("json")
pid = forkserver._forkserver._forkserver_pid
print("again", parallel.fork_helper("json"))
with multiprocessing.get_context("forkserver").Pool(1) as pool:  # served: the fork server is past its set-up
    print("work", pool.apply(os.getppid) == pid, pool.apply(logging.getLogger("memzoi").hasHandlers))
    print("prefilter", pool.apply(eval, ("'memzoi.safety.prepared' in __import__('sys').modules",)))
print("caller", "memzoi.safety.prepared" in sys.modules)  # the fork server imported it, not the caller
with open(f"/proc/{pid}/cmdline", "rb") as f:
    print("cmdline", f.read().split(b"\0")[:3] == open("/proc/self/cmdline", "rb").read().split(b"\0")[:3])
fds = {int(fd): os.readlink(f"/proc/{pid}/fd/{fd}") for fd in os.listdir(f"/proc/{pid}/fd")}
print("fds", {0, 1, 2} <= fds.keys(), held in fds.values())
"""


def test_the_fork_server_forked_from_a_caller_of_one_thread_shares_its_imports_and_serves_workers(tmp_path):
    import subprocess
    import sys

    if not parallel.can_use_helper():
        pytest.skip("no fork server on this platform")
    log = tmp_path / "caller.log"
    out = subprocess.run(
        [sys.executable, "-c", _FORKED, str(log)], capture_output=True, text=True, timeout=120, check=True
    ).stdout.split("\n")
    assert out[0] == "again False"  # one fork server: a second call starts none
    assert out[1] == "work True False"  # workers forked by it, without the caller's logging handler
    assert out[2:4] == ["prefilter True", "caller False"]
    assert out[4] == "cmdline True"  # the caller's process image, not a new interpreter's
    assert out[5] == "fds True False"  # standard input, output and error, and nothing else of the caller's


def test_no_fork_server_is_forked_from_a_process_running_threads(monkeypatch):
    import threading

    forked: list[object] = []
    monkeypatch.setattr(parallel, "_forked", lambda *args: forked.append(args) or 0)
    stop = threading.Event()
    other = threading.Thread(target=stop.wait)
    other.start()
    try:
        assert not parallel.fork_helper(coldstart.WORKER_MODULE)
    finally:
        stop.set()
        other.join()
    assert forked == []


def test_prefork_forks_only_for_a_likely_cold_project(tmp_path, monkeypatch):
    forked: list[str] = []
    monkeypatch.setattr(parallel, "fork_helper", lambda module: forked.append(module) or True)
    monkeypatch.setattr(prefill, "start", lambda root, md: True)  # (tests/test_prefill.py)
    few, many = _few_and_many(tmp_path)
    looked: list[object] = []
    real = coldstart.worktree_runtime_dir
    monkeypatch.setattr(coldstart, "worktree_runtime_dir", lambda root: looked.append(root) or real(root))
    assert not coldstart.prefork([few, tmp_path / "absent"]) and forked == []
    assert looked == []  # no large .memzoi: the store's place (git's keys) is never looked up
    assert coldstart.prefork([few, many]) and forked == [coldstart.WORKER_MODULE]
