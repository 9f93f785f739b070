"""``check_paths`` in worker processes gives the same report as in-process, and the shortcuts of a large check
(skipping the second listing of a fully walked ``.memzoi``, deduplicating by inode) keep every finding."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from memzoi.base import parallel
from memzoi.base.parallel import ChunkPool, can_fork
from memzoi.runs import check as check_mod
from memzoi.runs.check import PARALLEL_THRESHOLD, check_paths, expand
from tests import builders
from tests.benchmarks.generate import generate


def _summary(report) -> list[tuple]:
    return [(l.path, l.finding.code, l.finding.message, l.start, l.end) for l in report.findings]


@pytest.mark.skipif(not can_fork(), reason="worker processes need fork in a single-threaded process")
def test_workers_and_in_process_give_identical_reports(tmp_path, monkeypatch):
    ws = generate(tmp_path / "ws", 300, seed=3, git=False)
    memzoi = str(ws.root / ".memzoi")
    used: list[bool] = []
    real = check_mod.ChunkPool.iter_results

    def spy(self):
        used.append(self.parallel)
        return real(self)

    monkeypatch.setattr(check_mod.ChunkPool, "iter_results", spy)
    parallel = check_paths([memzoi], workers=2, cache=False)  # both analyse every file (no store, no replay)
    serial = check_paths([memzoi], workers=1, cache=False)
    assert used == [True, False]  # the first run really used worker processes, the second none
    assert parallel.files_checked == serial.files_checked == 330 >= PARALLEL_THRESHOLD
    assert _summary(parallel) == _summary(serial)
    codes = {l.finding.code for l in parallel.findings}
    # per-file (schema, detectors), cross-file (lineage, duplicates) and retention findings all survive
    assert {"duplicate_key", "credential_token", "dangling_reference", "duplicate_content"} <= codes


def _squares(chunk: list[int]) -> list[int]:
    return [x * x for x in chunk]


_PARENT = os.getpid()


def _die_in_worker(chunk: list[int]) -> list[int]:
    if 7 in chunk and os.getpid() != _PARENT:
        os._exit(3)
    return [(x, os.getpid() == _PARENT) for x in chunk]


def test_chunk_pool_small_runs_stay_in_process():
    pool = ChunkPool(_squares, workers=2, chunksize=4, start_at=100)
    for i in range(30):
        pool.add(i)
    assert pool.results() == [i * i for i in range(30)] and not pool.parallel


@pytest.mark.skipif(not can_fork(), reason="worker processes need fork in a single-threaded process")
def test_chunk_pool_keeps_order_and_redoes_the_chunks_of_a_dead_worker():
    pool = ChunkPool(_squares, workers=2, chunksize=3, start_at=5)
    for i in range(50):
        pool.add(i)
    assert pool.parallel
    assert pool.results() == [i * i for i in range(50)]
    pool = ChunkPool(_die_in_worker, workers=2, chunksize=3, start_at=5)
    for i in range(40):
        pool.add(i)
    got = pool.results()
    assert [x for x, _ in got] == list(range(40))
    assert any(here for x, here in got if x == 7)  # the killed chunk was redone in this process


@pytest.mark.skipif(not can_fork(), reason="worker processes need fork in a single-threaded process")
def test_chunk_pool_hands_out_at_most_ahead_chunks_beyond_the_one_read():
    """With ``ahead``, a caller reading slowly never has every chunk made at once (the server's scan keeps its
    memory so), the order is kept, and a chunk's results are let go once read."""
    pool = ChunkPool(_squares, workers=2, chunksize=3, start_at=5, ahead=2)
    for i in range(50):
        pool.add(i)
    assert pool.parallel
    got = []
    for value in pool.iter_results():
        got.append(value)
        read = (len(got) - 1) // 3  # the chunk being read
        sent = sum(1 for f in pool._futures if f is not None and f is not parallel._UNSENT)
        assert sent <= 1 + 2, (read, sent)  # the one read (held until its last result is taken) and two ahead
    assert got == [i * i for i in range(50)]


def test_cli_check_in_workers_matches_in_process(tmp_path):
    """The real command (a fresh single-threaded process, so it forks) prints what the library prints serially."""
    ws = generate(tmp_path / "ws", 300, seed=5, git=False)
    memzoi = str(ws.root / ".memzoi")
    proc = subprocess.run(
        [sys.executable, "-m", "memzoi.cli.main", "check", memzoi, "--format", "json"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
    )
    assert proc.returncode == 1, proc.stderr
    import json

    got = json.loads(proc.stdout)
    serial = check_paths([memzoi], workers=1)
    assert got["files_checked"] == serial.files_checked
    assert [(f["path"], f["code"], f["message"]) for f in got["findings"]] == [
        (l.path, l.finding.code, l.finding.message) for l in serial.findings
    ]


def _record(rid: str, body: str, **fields) -> str:
    return builders.record(
        rid, type="fact", title=f"T {rid}", source="human", timestamp="2026-01-01T00:00:00Z", body=body, **fields
    )


def test_a_stray_file_below_proposals_is_walked_and_still_takes_part_in_cross_file_checks(tmp_path):
    """Every file below `.memzoi` is walked (stray files are committed too), so a walked `.memzoi` is complete; a
    stray Markdown file below proposals/ still counts in cross-file checks, as Memzoi's walk lists it."""
    md = tmp_path / ".memzoi"
    (md / "records").mkdir(parents=True)
    (md / "proposals").mkdir()
    (md / "records" / "a.md").write_text(_record("a", "Same body text here."), encoding="utf-8")
    (md / "proposals" / "b.md").write_text(_record("b", "Same body text here."), encoding="utf-8")
    found = expand(str(md))
    assert sorted(Path(p).name for p, _ in found.files) == ["a.md", "b.md"]
    assert found.complete == {os.path.abspath(md)}
    assert expand(str(tmp_path)).complete == {os.path.abspath(md)}
    assert expand(str(md / "records")).complete == set()
    report = check_paths([str(md / "records")])
    assert ("a.md", "duplicate_content") in [(Path(l.path).name, l.finding.code) for l in report.findings]


def test_the_same_file_given_twice_is_checked_once(tmp_path):
    md = tmp_path / ".memzoi"
    (md / "records").mkdir(parents=True)
    (md / "records" / "a.md").write_text(_record("a", "Body."), encoding="utf-8")
    link = tmp_path / "alias"
    link.symlink_to(md, target_is_directory=True)
    report = check_paths([str(md), str(md / "records" / "a.md"), str(link / "records")])
    assert report.files_checked == 1


# -- placement: the per-folder cache of `place` agrees with classifying the whole path every time ----------------

from hypothesis import (  # noqa: E402
    given,
    settings,
    strategies as st,  # noqa: E402
)

from memzoi.judge.workspace import Placement, Role, place  # noqa: E402

_SEGMENTS = st.sampled_from(
    [
        "",
        ".",
        "..",
        ".memzoi",
        "records",
        "proposals",
        "pending",
        "resolved",
        "applied",
        "rejected",
        "a.md",
        "index.md",
        "log.md",
        "x",
        "b/",
        "ü.md",
        "/",
        ".hidden",
        ".h.md",
    ]
)


def _reference_place(path: str) -> Placement:
    """The rule spelled out on the full path: nearest `.memzoi` among the parts, then role by the parts below."""
    parts = Path(path).parts
    if ".memzoi" not in parts:
        return Placement(Role.OTHER)
    idx = len(parts) - 1 - parts[::-1].index(".memzoi")
    memzoi_dir, rel = Path(*parts[: idx + 1]), parts[idx + 1 :]
    name = Path(path).name
    if any(p.startswith(".") and p not in (".", "..") for p in rel):  # Memzoi's walk skips it: never a record
        return Placement(Role.OTHER, memzoi_dir, hidden=True)
    if name in ("index.md", "log.md"):
        return Placement(Role.RESERVED, memzoi_dir)
    ident = None
    if len(rel) >= 2 and rel[0] == "records":
        ident, role = "/".join(rel[1:]), Role.RECORD
    elif len(rel) > 2 and rel[:2] == ("proposals", "pending"):
        ident, role = "/".join(rel[2:]), Role.PENDING
    elif len(rel) > 3 and rel[:3] in (("proposals", "resolved", "applied"), ("proposals", "resolved", "rejected")):
        ident, role = "/".join(rel[3:]), Role.APPLIED if rel[2] == "applied" else Role.REJECTED
    else:
        return Placement(Role.OTHER, memzoi_dir)
    return Placement(role, memzoi_dir, ident[:-3] if ident.endswith(".md") else ident)


@settings(max_examples=400, deadline=None)
@given(st.lists(_SEGMENTS, min_size=1, max_size=6), st.sampled_from(["", "/", "./"]), st.booleans())
def test_place_matches_the_rule_on_any_path(segments, lead, as_path):
    text = lead + "/".join(segments)
    if not text:
        return
    for _ in range(2):  # the second call is answered from the folder cache
        assert place(Path(text) if as_path else text) == _reference_place(text), text


def test_file_facts_survive_the_trip_from_a_worker():
    import copy
    import pickle

    from memzoi.project.crossfile import FileFacts, Ref

    facts = FileFacts(
        kind="record",
        role="record",
        ident="a",
        status="active",
        when="2026-01-01",
        refs=(Ref("supersedes", "b", (1, 2)),),
        ident_span=(3, 4),
        body_span=(5, 9),
        legacy=True,
    )
    assert pickle.loads(pickle.dumps(facts)) == facts
    assert copy.copy(facts) == facts and copy.deepcopy(facts) == facts


def test_the_words_file_facts_repeat_are_one_string_each_after_the_trip():
    """What repeats from file to file (kind, role, status, the scope's kind and id) is one string in the process
    that unpickles the facts of every file (issue 29: the language server's peak RSS), not a copy per file."""
    import pickle

    from memzoi.project.crossfile import FileFacts

    def made(ident: str) -> FileFacts:
        return FileFacts("record", "record", ident, "active", "project", "proj-" + "x" * 30, when="2026-01-01")

    one, two = (pickle.loads(pickle.dumps(made(i), protocol=pickle.HIGHEST_PROTOCOL)) for i in ("a", "b"))
    assert (one, two) == (made("a"), made("b"))
    for field in ("kind", "role", "status", "scope_kind", "scope_id"):
        assert getattr(one, field) is getattr(two, field), field
    bare = pickle.loads(pickle.dumps(FileFacts("other", "other")))
    assert bare == FileFacts("other", "other") and bare.status is None and bare.scope_id is None


@pytest.mark.parametrize("role", list(__import__("memzoi.judge.workspace", fromlist=["Role"]).Role))
def test_a_first_stage_survives_the_trip_from_a_worker(role):
    import copy
    import pickle

    from memzoi.base.findings import finding
    from memzoi.project.verdict import Local

    for own in ([], [finding("unknown_key", "unknown key `x`", 4, 5, loc=["x"])]):
        first = Local(list(own), role, (1, 4), True, len(own))
        back = pickle.loads(pickle.dumps(first, protocol=pickle.HIGHEST_PROTOCOL))
        assert back == first and back.role is role
        assert copy.copy(first) == first and copy.deepcopy(first) == first


# -- the walk: hard links, spelling of the argument, odd arguments ------------------------------------------------

from memzoi.runs.check import UsageError  # noqa: E402


def _project(tmp_path: Path, n: int = 3) -> Path:
    records = tmp_path / ".memzoi" / "records"
    records.mkdir(parents=True)
    for i in range(n):
        (records / f"r{i}.md").write_text(_record(f"r{i}", f"Body number {i}."), encoding="utf-8")
    return tmp_path / ".memzoi"


def test_a_hard_link_is_a_second_record_not_a_duplicate_argument(tmp_path):
    md = _project(tmp_path)
    os.link(md / "records" / "r0.md", md / "records" / "copy.md")
    report = check_paths([str(md)])
    assert report.files_checked == 4
    codes = {(Path(l.path).name, l.finding.code) for l in report.findings}
    assert ("copy.md", "id_path_mismatch") in codes and ("copy.md", "duplicate_content") in codes


def test_placement_does_not_depend_on_how_the_folder_is_spelled(tmp_path, monkeypatch):
    md = _project(tmp_path)
    direct = check_paths([str(md)])

    def codes(report):
        return sorted((Path(l.path).name, l.finding.code, l.start) for l in report.findings)

    monkeypatch.chdir(md / "records")
    for spelling in (".", "../records", "./"):
        report = check_paths([spelling])
        assert report.files_checked == direct.files_checked == 3 and codes(report) == codes(direct), spelling
    link = tmp_path / "alias-of-memzoi"
    link.symlink_to(md, target_is_directory=True)
    report = check_paths([str(link)])
    assert report.files_checked == 3 and codes(report) == codes(direct)
    assert all(l.path.startswith(str(link)) for l in report.findings)  # shown as the user spelled it


def test_odd_arguments_are_usage_errors(tmp_path):
    with pytest.raises(UsageError, match="empty path"):
        check_paths([""])
    fifo = tmp_path / "pipe.md"
    os.mkfifo(fifo)
    with pytest.raises(UsageError, match="not a regular file"):
        check_paths([str(fifo)])


def test_config_given_relative_to_its_folder(tmp_path, monkeypatch):
    md = _project(tmp_path, 1)
    (md / "config.toml").write_text('[project]\nid = "x"\n', encoding="utf-8")
    monkeypatch.chdir(md)
    report = check_paths(["config.toml"])
    assert report.files_checked == 1 and not report.findings  # scanned for secrets, settings checked
    assert report.memzoi_dirs == {Path(os.path.abspath(md))}


def _children(pid: int) -> list[int]:
    out = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as fh:
                    fields = fh.read().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[1]) == pid:
                out.append(int(entry))
    return out


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="parent-death signal is Linux-only")
def test_workers_end_when_the_check_process_is_killed(tmp_path):
    import signal
    import time

    ws = generate(tmp_path / "ws", 3000, seed=9, git=False)
    proc = subprocess.Popen(
        [sys.executable, "-m", "memzoi.cli.main", "check", str(ws.root / ".memzoi")],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    workers: list[int] = []
    deadline = time.monotonic() + 30
    while len(workers) < 2 and proc.poll() is None and time.monotonic() < deadline:
        workers = _children(proc.pid)
        time.sleep(0.01)
    if proc.poll() is not None:
        pytest.skip("the check finished before its workers could be seen")
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    deadline = time.monotonic() + 10
    alive = workers
    while alive and time.monotonic() < deadline:
        alive = [w for w in workers if os.path.exists(f"/proc/{w}") and _state(w) != "Z"]
        time.sleep(0.05)
    assert workers and not alive, f"workers left running: {alive}"


def _state(pid: int) -> str:
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().rsplit(")", 1)[1].split()[0]
    except OSError:
        return "gone"


_HELPER_SCRIPT = r"""
import os, threading
os.environ["CHATTY_PARENT"] = str(os.getpid())  # the fork server and its workers inherit it
from memzoi.base.parallel import ChunkPool, can_fork
import chatty

stop = threading.Event()
t = threading.Thread(target=stop.wait)
t.start()
assert not can_fork()
pool = ChunkPool(chatty.square_loudly, workers=2, chunksize=3, start_at=5, helper=True)
for i in range(30):
    pool.add(i)
assert pool.parallel, "no workers from the fork server"
got = pool.results()
stop.set()
t.join()
print("RESULT", got == [(i * i, True) for i in range(30)])
"""

_CHATTY = """
import os, sys
_PARENT = int(os.environ["CHATTY_PARENT"])

def square_loudly(chunk):
    print("a stray write of a worker", flush=True)
    sys.stdout.write("and another\\n")
    return [(x * x, os.getpid() != _PARENT) for x in chunk]
"""


@pytest.mark.skipif(sys.platform != "linux", reason="the fork server is used on Linux")
def test_a_threaded_caller_gets_workers_from_a_fork_server_whose_output_is_stderr(tmp_path):
    """A threaded process (the language server) gets worker processes from a fork server, in order; whatever a
    worker writes to its standard output goes to standard error, never into the caller's output (the server's
    JSON-RPC channel)."""
    (tmp_path / "chatty.py").write_text(_CHATTY)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(tmp_path), *sys.path]))
    proc = subprocess.run(
        [sys.executable, "-c", _HELPER_SCRIPT], capture_output=True, text=True, cwd=tmp_path, env=env, timeout=120
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == "RESULT True\n"
    assert "a stray write of a worker" in proc.stderr and "and another" in proc.stderr


def test_workers_fork_with_the_analysis_already_imported():
    # Imported once before the fork, not once in each worker (issue 29, cheaper cold work). A fresh interpreter:
    # this test process may have imported the analysis already; the worker function lives in its __main__.
    code = (
        "import os, sys\n"
        "from memzoi.base.parallel import ChunkPool, can_fork\n"
        "def loaded(chunk):\n"
        "    return [(os.getpid(), 'memzoi.judge.analysis' in sys.modules and 'memzoi.safety' in sys.modules)\n"
        "            for _ in chunk]\n"
        "assert can_fork() and 'memzoi.judge.analysis' not in sys.modules\n"
        "pool = ChunkPool(loaded, workers=2, chunksize=2, start_at=4)\n"
        "for i in range(20):\n"
        "    pool.add(i)\n"
        "got = pool.results()\n"
        "assert pool.parallel and {pid for pid, _ in got} - {os.getpid()}, got\n"
        "print(all(ok for _, ok in got))\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.strip() == "True"


_COLLECTOR = """
import gc, os

def collecting(chunk):
    return [(os.getpid(), gc.isenabled()) for _ in chunk]
"""


@pytest.mark.parametrize("helper", [False, True])
def test_workers_run_with_the_collector_off_whoever_started_them(tmp_path, helper):
    """A worker, forked from its caller (``memzoi check``, ``rebuild``) or from the fork server of a threaded caller
    (the language server's scan, whose fork server collects as a started interpreter does), runs with the cyclic
    collector off: a chunk's work makes no reference cycles (issue 29: cold server scan)."""
    if helper and sys.platform != "linux":
        pytest.skip("the fork server is used on Linux")
    (tmp_path / "collector.py").write_text(_COLLECTOR)
    code = (
        "import gc, os, threading\n"
        "from memzoi.base.parallel import ChunkPool, can_fork\n"
        "import collector\n"
        "assert gc.isenabled()\n"
        f"helper = {helper}\n"
        "stop = threading.Event()\n"
        "if helper:\n"
        "    threading.Thread(target=stop.wait).start()\n"
        "assert can_fork() != helper\n"
        "pool = ChunkPool(collector.collecting, workers=2, chunksize=2, start_at=4, helper=helper)\n"
        "for i in range(20):\n"
        "    pool.add(i)\n"
        "got = pool.results()\n"
        "stop.set()\n"
        "assert pool.parallel and all(pid != os.getpid() for pid, _ in got), got\n"
        "print(sorted({on for _, on in got}), gc.isenabled())\n"
    )
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(tmp_path), *sys.path]))
    proc = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=tmp_path, env=env, timeout=300
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.strip() == "[False] True"  # off in every worker; the caller's own collector left as it was


def test_a_project_folder_is_made_absolute_as_abspath_makes_it(tmp_path, monkeypatch):
    from memzoi.stores.fileentry import project_dir

    monkeypatch.chdir(tmp_path)
    for spelled in [
        tmp_path / ".memzoi",
        str(tmp_path / "a" / ".." / ".memzoi"),
        "//x//y/.memzoi",
        ".memzoi",
        "a/../.memzoi",
    ]:
        assert project_dir(spelled) == os.path.abspath(spelled), spelled
    (tmp_path / "sub").mkdir()
    monkeypatch.chdir(tmp_path / "sub")  # a relative folder follows the working directory, never a kept answer
    assert project_dir(".memzoi") == os.path.abspath(".memzoi") == str(tmp_path / "sub" / ".memzoi")


_EARLY_SCRIPT = r"""
import sys, threading
from multiprocessing import forkserver
from memzoi.base.parallel import ChunkPool, can_fork, start_helper
import early

stop = threading.Event()
t = threading.Thread(target=stop.wait)
t.start()
assert not can_fork()
assert forkserver._forkserver._forkserver_pid is None
assert start_helper("early")
server = forkserver._forkserver._forkserver_pid
assert server is not None, "no fork server started"
pool = ChunkPool(early.where, workers=2, chunksize=3, start_at=5, helper=True)
for i in range(30):
    pool.add(i)
got = pool.results()
stop.set()
t.join()
print("PARENTS", {parent == server for parent, _ in got}, "PRELOADED", all(ok for _, ok in got), len(got))
"""

_EARLY = """
import os, sys

def where(chunk):
    return [(os.getppid(), "memzoi.judge.analysis" in sys.modules and "memzoi.safety.prepared" in sys.modules)
            for _ in chunk]
"""


@pytest.mark.skipif(sys.platform != "linux", reason="the fork server is used on Linux")
def test_a_fork_server_started_early_is_the_one_the_pool_then_uses(tmp_path):
    """:func:`memzoi.base.parallel.start_helper` (the language server's cold scan, before its first chunk): the fork
    server starts at once with the analysis preloaded, and a later :class:`ChunkPool` with ``helper`` takes its
    workers from that very server (their parent), not from a second one."""
    (tmp_path / "early.py").write_text(_EARLY)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(tmp_path), *sys.path]))
    proc = subprocess.run(
        [sys.executable, "-c", _EARLY_SCRIPT], capture_output=True, text=True, cwd=tmp_path, env=env, timeout=120
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout == "PARENTS {True} PRELOADED True 30\n"
