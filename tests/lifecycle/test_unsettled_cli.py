"""A ``proposals apply`` killed half-way, through the command line (SPEC §6, promise 3: one verdict): ``check`` fails
on the half-applied change without writing the ledger, ``doctor`` names it and what to run, and while it is
uncertain a ``reject`` of the same packet is refused (``uncertain_change``) and ``proposals list`` says why."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from memzoi import ledger as L
from memzoi.lifecycle import apply_proposal

from ..ledger.faults import CRASH_EXIT, run_child, tree
from .conftest import PENDING

PACKET = "mem_2026_07_06_auth_001"
REJECTED = ".memzoi/proposals/resolved/rejected"


def memzoi(repo: Path, *argv: str) -> subprocess.CompletedProcess[str]:
    """``memzoi ARGV --root REPO`` in a child process (``MEMZOI_HOME`` from the test's environment)."""
    return subprocess.run(
        [sys.executable, "-m", "memzoi", *argv, "--root", str(repo)],
        capture_output=True,
        text=True,
        check=False,
        stdin=subprocess.DEVNULL,
    )


def _crash_apply(repo: Path) -> L.ChangeRecord:
    """``proposals apply`` dies once the record is written (the resolved copy and the packet's removal are not)."""
    code, steps = run_child(lambda: apply_proposal(repo, PACKET, actor="x"), crash_at="apply:file0:done")
    assert code == CRASH_EXIT, steps
    [change] = L.history(repo)
    assert change.status == "applying"
    return change


def test_check_and_doctor_report_a_change_a_dead_process_left_applying(repo):
    crashed = _crash_apply(repo)
    on_disk = tree(repo)
    out = memzoi(repo, "check", "--format", "json")
    assert out.returncode == 1, out.stdout + out.stderr
    found = [f for f in json.loads(out.stdout)["findings"] if f["code"] == "ledger_uncertain"]
    assert {Path(f["path"]).parent.relative_to(repo).as_posix() for f in found} == {".memzoi/records", PENDING}
    assert all(crashed.id in f["message"] and "memzoi reconcile" in f["message"] for f in found)
    doctor = memzoi(repo, "doctor")
    assert doctor.returncode == 1, doctor.stdout
    [line] = [x for x in doctor.stdout.splitlines() if "ledger_changes" in x]
    assert line.split()[0] == "warning" and crashed.id in line and "left applying" in line
    assert "run `memzoi reconcile`, then settle change" in doctor.stdout
    # both read only: the change is still in flight and no file moved
    assert L.history(repo)[0].status == "applying" and tree(repo) == on_disk


def test_a_reject_of_a_packet_an_uncertain_apply_touches_is_refused(repo):
    crashed = _crash_apply(repo)
    assert memzoi(repo, "reconcile").returncode == 1
    on_disk = tree(repo)
    out = memzoi(repo, "proposals", "reject", PACKET, "--reason", "no")
    assert out.returncode == 1 and out.stderr.startswith("memzoi: uncertain_change: "), out.stderr
    assert f"memzoi reconcile --recover {crashed.id} restore-before|complete-after|accept" in out.stderr
    assert tree(repo) == on_disk and not (repo / REJECTED / f"{PACKET}.md").exists()
    listed = memzoi(repo, "proposals", "list")
    [row] = [x for x in listed.stdout.splitlines() if x.startswith(PACKET)]
    assert "[blocked: " in row and "uncertain_change" in row
    assert f"    uncertain_change: change {crashed.id}" in listed.stdout, listed.stdout.splitlines()[1]
    doctor = memzoi(repo, "doctor")
    assert doctor.returncode == 1 and f"memzoi reconcile --recover {crashed.id}" in doctor.stdout
    # settled, the reject goes through and leaves no record of a rejected proposal
    assert memzoi(repo, "reconcile", "--recover", crashed.id, "restore-before").returncode == 0
    assert memzoi(repo, "proposals", "reject", PACKET, "--reason", "no").returncode == 0
    assert (repo / REJECTED / f"{PACKET}.md").exists()
    assert memzoi(repo, "doctor").stdout.count("ledger_changes") == 1
