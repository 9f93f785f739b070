"""Two processes applying and undoing real proposals at the same time: the lifecycle lock serializes every
change, so no change interleaves with another and the repository ends exactly as it started."""

from __future__ import annotations

import os

from memzoi import ledger as L
from memzoi.lifecycle import apply_proposal, reject_proposal

from ..ledger.faults import run_child, tree


def test_two_processes_apply_and_undo_without_interleaving(repo, tmp_path):
    start = tree(repo)
    log = tmp_path / "steps.log"
    work = {
        "a": lambda: apply_proposal(repo, "mem_2026_07_06_testing_procedure", actor="a"),
        "b": lambda: reject_proposal(repo, "mem_2026_07_06_auth_001", reason="not now", actor="b"),
    }

    def worker(tag: str) -> None:
        for _ in range(4):
            res = work[tag]()
            L.undo_change(repo, res.change_id, actor=tag)

    pids = []
    for tag in work:
        pid = os.fork()
        if pid == 0:
            code, _ = run_child(lambda tag=tag: worker(tag), log=log)
            os._exit(code)
        pids.append(pid)
    for pid in pids:
        _, status = os.waitpid(pid, 0)
        assert os.waitstatus_to_exitcode(status) == 0
    owner, sections = None, 0
    for line in log.read_text().splitlines():
        pid, step = line.split()
        if step == "locked":
            assert owner is None, "two changes inside the lock at once"
            owner, sections = pid, sections + 1
        else:
            assert pid == owner, f"step {step} of process {pid} ran while {owner} held the lock"
            if step == "unlocking":
                owner = None
    assert sections == 16
    changes = L.history(repo)
    assert len(changes) == 8 and {c.status for c in changes} == {"undone"}
    assert tree(repo) == start
