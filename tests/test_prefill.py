"""A likely cold project's first files analysed ahead of its scan (:mod:`memzoi.runs.prefill`) and taken by the
scan's analysis (:func:`memzoi.runs.scanverdicts.analyse`) only where they are what its workers would have made:
same files, same configuration, same git visibility; whatever the pre-filling lost is made again, and the scan's
results are the same, in the same order, with or without it."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from memzoi.base import parallel
from memzoi.project.gitfacts import GitFacts
from memzoi.project.projectfiles import listed
from memzoi.project.verdict import ProjectContext
from memzoi.runs import coldstart, prefill, scanverdicts
from memzoi.stores.fileentry import FileEntry, entry_chunk
from memzoi.stores.verdictcache import context_stamp

from . import builders
from .test_check_parallel import _state


def _project(root: Path, n: int) -> Path:
    """A project of ``n`` records, every fourth one with a finding (an unknown lane), and two packets."""
    for i in range(n):
        text = builders.record(f"rec-{i:03d}", title=f"Record {i}", body=f"Record {i} applies to package task {i}.")
        builders.write(
            root,
            builders.record_path(f"rec-{i:03d}"),
            text.replace("lane: semantic", "lane: nope") if i % 4 == 0 else text,
        )
    for i in range(2):
        builders.write(root, builders.packet_path(f"prop-{i}"), builders.packet(f"prop-{i}"))
    return root / ".memzoi"


def _same(a: FileEntry | None, b: FileEntry | None) -> bool:
    """Two entries of the same bytes made at different instants: the same stage, store payload and search rows
    (less when each was read)."""
    if a is None or b is None:
        return a is b
    if (a.entry is None) != (b.entry is None) or (a.row is None) != (b.row is None):
        return False
    if a.entry is not None and b.entry is not None and (a.entry[0], a.entry[3]) != (b.entry[0], b.entry[3]):
        return False
    if a.row is not None and b.row is not None:
        volatile = {"checked_ns", "checksum"}
        if {k: v for k, v in a.row["file"].items() if k not in volatile} != {
            k: v for k, v in b.row["file"].items() if k not in volatile
        } or (a.row.get("record"), a.row.get("proposal")) != (b.row.get("record"), b.row.get("proposal")):
            return False
    fields = ("path", "memzoi_dir", "first", "facts", "starts", "length", "stamp", "revision", "boundary")
    return all(getattr(a.verdict, f) == getattr(b.verdict, f) for f in fields)


class _Conn:
    """A stand-in for the pre-filling's end of its pipe: the claim is seen after ``claim_after`` looks (``None``:
    never, then the pipe closes), or, with ``during``, ``during(look)`` runs at each look first."""

    def __init__(self, claim_after: int | None, during: Any = None) -> None:
        self.looks = 0
        self.claim_after = claim_after
        self.during = during
        self.sent: list[Any] = []

    def poll(self, timeout: float | None = None) -> bool:
        if timeout is not None:  # the wait for the claim once every file is made
            return True
        self.looks += 1
        if self.during is not None:
            self.during(self.looks)
        return self.claim_after is not None and self.looks > self.claim_after

    def recv(self) -> str:
        if self.claim_after is None:
            raise EOFError
        return "claim"

    def send(self, obj: Any) -> None:
        self.sent.append(obj)


def _served(conn: _Conn) -> tuple[str, dict[str, str], list[tuple[str, FileEntry | None]]]:
    stamp, made = conn.sent[0]
    assert conn.sent[-1] == []  # the last message: no more entries
    assert all(0 < len(step) <= prefill.STEP for step in conn.sent[1:-1])
    return stamp, made, [item for step in conn.sent[1:-1] for item in step]


def test_the_first_files_are_made_in_the_listing_order_as_the_scan_s_workers_make_them(tmp_path):
    md = _project(tmp_path, 40)
    conn = _Conn(claim_after=2)  # two steps made, then the claim
    prefill.serve(str(tmp_path), str(md), conn)
    stamp, made, entries = _served(conn)
    paths = sorted(listed(str(md)))[: 2 * prefill.STEP]
    assert list(made) == paths == [path for path, _ in entries]
    git = GitFacts(tmp_path)
    git.ask(paths)
    assert made == {p: git.visibility(p).value for p in paths}
    assert stamp == context_stamp(ProjectContext.of(md).config)
    jobs = list(made.items())
    workers = entry_chunk(jobs, now=None, root=str(tmp_path))
    assert all(_same(got, theirs) for (_, got), theirs in zip(entries, workers, strict=True))
    assert any(got is not None and got.verdict.first.own for _, got in entries)  # findings are made too


def test_at_most_the_limit_is_made_and_a_claim_before_the_first_step_takes_nothing(tmp_path, monkeypatch):
    md = _project(tmp_path, 40)
    monkeypatch.setattr(prefill, "LIMIT", 20)
    conn = _Conn(claim_after=10**6)
    prefill.serve(str(tmp_path), str(md), conn)
    assert len(_served(conn)[1]) == 20
    conn = _Conn(claim_after=0)
    prefill.serve(str(tmp_path), str(md), conn)
    assert _served(conn)[1:] == ({}, [])


def test_nothing_is_sent_when_the_configuration_changed_meanwhile_or_the_caller_went(tmp_path):
    md = _project(tmp_path, 40)

    def change(look: int) -> None:
        if look == 2:
            (md / "config.toml").write_text('[project]\nid = "another"\n', encoding="utf-8")

    conn = _Conn(claim_after=3, during=change)
    prefill.serve(str(tmp_path), str(md), conn)
    assert _served(conn)[1:] == ({}, [])
    gone = _Conn(claim_after=None)
    prefill.serve(str(tmp_path), str(md), gone)  # returns quietly
    assert gone.sent == []


def _claim(
    tmp_path: Path, md: Path, paths: list[str], *, visibility: dict[str, str] | None = None, stamp: str | None = None
) -> tuple[dict[str, FileEntry | None], Any]:
    """A claim as :func:`prefill.claim` gives it of ``paths``, each entry a marked copy (so a test tells a taken
    entry from one made again), with the visibility the scan will ask unless ``visibility`` overrides it."""
    git = GitFacts(tmp_path)
    git.ask(paths)
    made = {p: git.visibility(p).value for p in paths} | (visibility or {})
    entries = dict(zip(paths, entry_chunk(list(made.items()), now=None, root=str(tmp_path)), strict=True))
    _CLAIMED.clear()  # (ids of an earlier test's entries may be reused)
    _CLAIMED.update(id(e) for e in entries.values())  # (the test holds them: no id is reused meanwhile)
    return entries, (stamp or context_stamp(ProjectContext.of(md).config), made)


_CLAIMED: set[int] = set()


def _analysed(tmp_path: Path, md: Path, monkeypatch: Any, claim: Any) -> list[FileEntry | None]:
    monkeypatch.setattr(prefill, "claim", lambda root: claim if os.fspath(root) == str(tmp_path) else None)
    paths = sorted(listed(str(md)))
    ctx = ProjectContext.of(md, git=GitFacts(tmp_path))
    return list(scanverdicts.analyse(paths, ctx, index_root=tmp_path, workers=1))


def _tracked(entries: dict[str, FileEntry | None], closed: list[bool]) -> Iterator[tuple[str, FileEntry | None]]:
    """``entries`` as a claim's iterator gives them; ``closed`` is appended ``True`` when it is ended (closed or
    done)."""
    try:
        yield from entries.items()
    finally:
        closed.append(True)


def _taken(got: FileEntry | None) -> bool:
    """Whether ``got`` is an entry of a claim (:func:`_claim`), not one made by the scan."""
    return got is not None and id(got) in _CLAIMED


@pytest.mark.parametrize("order", ["listing", "reversed"])
def test_the_scan_takes_what_was_made_ahead_and_makes_the_rest_in_order(tmp_path, monkeypatch, order):
    md = _project(tmp_path, 30)
    paths = sorted(listed(str(md)))
    entries, (stamp, made) = _claim(tmp_path, md, paths[:12])
    items = list(entries.items())
    received = iter(items if order == "listing" else items[::-1])
    got = _analysed(tmp_path, md, monkeypatch, (stamp, made, received))
    alone = _analysed(tmp_path, md, monkeypatch, None)
    assert [g.verdict.path if g else None for g in got] == paths
    assert [_taken(g) for g in got] == [p in made for p in paths]
    assert all(_same(a, b) for a, b in zip(got, alone, strict=True))


def test_files_made_with_another_visibility_or_configuration_or_lost_are_made_again(tmp_path, monkeypatch):
    md = _project(tmp_path, 30)
    paths = sorted(listed(str(md)))
    alone = _analysed(tmp_path, md, monkeypatch, None)
    # another git visibility for the third file: made again; the sixth lost on the way: made here
    entries, (stamp, made) = _claim(tmp_path, md, paths[:8], visibility={paths[2]: "ignored_untracked"})
    received = iter([(p, e) for p, e in entries.items() if p != paths[5]])
    got = _analysed(tmp_path, md, monkeypatch, (stamp, made, received))
    assert [_taken(g) for g in got[:8]] == [i not in (2, 5) for i in range(8)]
    assert all(_same(a, b) for a, b in zip(got, alone, strict=True))
    # another configuration: nothing taken, and what was received is let go
    closed: list[bool] = []
    received_other = _tracked(entries, closed)
    next(received_other)  # begun, so that closing it runs its end
    got = _analysed(tmp_path, md, monkeypatch, ("another stamp", made, received_other))
    assert not any(_taken(g) for g in got) and closed == [True]
    assert all(_same(a, b) for a, b in zip(got, alone, strict=True))


def test_a_scan_that_stops_early_lets_the_entries_go(tmp_path, monkeypatch):
    md = _project(tmp_path, 30)
    paths = sorted(listed(str(md)))
    entries, (stamp, made) = _claim(tmp_path, md, paths[:10])
    closed: list[bool] = []
    monkeypatch.setattr(prefill, "claim", lambda root: (stamp, made, _tracked(entries, closed)))
    ctx = ProjectContext.of(md, git=GitFacts(tmp_path))
    results = scanverdicts.analyse(paths, ctx, index_root=tmp_path, workers=1)
    assert _taken(next(results))
    results.close()  # type: ignore[attr-defined]
    assert closed == [True]


def test_a_scan_that_is_not_cold_ends_the_pre_filling(tmp_path, monkeypatch):
    ended: list[str] = []
    monkeypatch.setattr(prefill, "cancel", ended.append)

    class Warm:
        def holds_none(self) -> bool:
            return False

    assert scanverdicts.cold_start([], Warm(), tmp_path) is False  # type: ignore[arg-type]
    assert ended == [os.fspath(tmp_path)]


_REAL = """
import os, sys, time
from memzoi.base import parallel
from memzoi.runs import coldstart, prefill
root, md = sys.argv[1], sys.argv[2]
assert parallel.start_helper(coldstart.WORKER_MODULE)
assert prefill.start(root, md) and root in prefill._running and not prefill.start(root, md)
stamp, made, entries = prefill.claim(root)
got = list(entries)
assert [p for p, _ in got] == list(made) and root not in prefill._running
print(len(got), "made", flush=True)
assert prefill.start(root, md)
prefill._running[root].ready.wait()
process = prefill._running[root].process
prefill.cancel(root)
process.join(60)
print("ended", process.exitcode is not None, flush=True)
assert prefill.start(root, md)
prefill._running[root].ready.wait()
print("pid", prefill._running[root].process.pid, flush=True)
"""


@pytest.mark.skipif(not parallel.can_use_helper(), reason="no fork server on this platform")
def test_a_real_pre_filling_from_the_fork_server_is_claimed_or_cancelled_and_ends(tmp_path):
    md = _project(tmp_path, 40)
    env = {**os.environ, "MEMZOI_HOME": str(tmp_path / "home"), "PYTHONPATH": str(Path(prefill.__file__).parents[2])}
    out = subprocess.run(
        [sys.executable, "-c", _REAL, str(tmp_path), str(md)], env=env, capture_output=True, text=True, timeout=120
    )
    assert out.returncode == 0, out.stderr
    lines = out.stdout.split("\n")
    assert lines[0].endswith(" made") and int(lines[0].split()[0]) >= 0  # as many as were made before the claim
    assert lines[1] == "ended True"  # a cancelled pre-filling ends
    pid = int(lines[2].split()[1])
    # one left running when its caller exits ends too (a daemon of the fork server's, which ends with the caller)
    deadline = time.monotonic() + 30
    while _state(pid) not in ("gone", "Z") and time.monotonic() < deadline:
        time.sleep(0.02)  # polling for a condition, with a deadline
    assert _state(pid) in ("gone", "Z")


def test_prefork_starts_a_pre_filling_for_each_likely_cold_project(tmp_path, monkeypatch):
    monkeypatch.setattr(parallel, "fork_helper", lambda module: True)
    started: list[tuple[str, str]] = []
    monkeypatch.setattr(prefill, "start", lambda root, md: started.append((os.fspath(root), os.fspath(md))) or True)
    few, many, more = tmp_path / "few", tmp_path / "many", tmp_path / "more"
    for root, n in ((few, 3), (many, coldstart.PARALLEL_THRESHOLD), (more, coldstart.PARALLEL_THRESHOLD)):
        _project(root, n)
    assert coldstart.prefork([few, many, more])
    assert started == [(os.fspath(many), os.path.join(many, ".memzoi"))]  # one: the first likely cold project
    monkeypatch.setattr(parallel, "fork_helper", lambda module: False)
    started.clear()
    assert not coldstart.prefork([many]) and started == []  # no fork server: nothing to start it from
