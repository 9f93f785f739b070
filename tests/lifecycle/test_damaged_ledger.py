"""A damaged ledger or resident candidate database: ``memzoi doctor`` names it as an error (``ledger``,
``resident_candidates``) with what to do and leaves the file as it is, and a write refuses before any file changes,
pointing to ``memzoi doctor``. Neither database is derived data: nothing replaces or deletes it.

The damage is real: a ledger written through the commands, then one page of a table overwritten with noise on disk
(what a WAL deleted under a writer leaves, see ``tests/test_store.py``).
"""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
from pathlib import Path

import pytest

from memzoi.cli.main import main
from memzoi.runs import doctor

from ..test_store import _damage_table as damage_table
from .conftest import TARGET_ID

PROPOSAL = "mem_2026_07_06_auth_001"


def run(capsys, repo: Path, *argv: str) -> tuple[int, str, str]:
    capsys.readouterr()
    code = main([*argv, "--root", str(repo)])
    out, err = capsys.readouterr()
    return code, out, err


def tree(root: Path) -> dict[str, str]:
    """Every file under ``root`` with the digest of its bytes."""
    return {
        p.relative_to(root).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in root.rglob("*")
        if p.is_file() and ".git" not in p.relative_to(root).parts
    }


@pytest.fixture
def ledger(repo, capsys) -> Path:
    """The ledger of ``repo`` after one change (a tombstone), written through the command line."""
    code, out, _ = run(capsys, repo, "tombstone", TARGET_ID, "--reason", "obsolete", "--json")
    assert code == 0, out
    [db] = Path(os.environ["MEMZOI_HOME"]).rglob("memzoi-lsp-ledger.db")
    return db


def check(report: dict, name: str) -> dict:
    [found] = [c for c in report["checks"] if c["name"] == name]
    return found


def test_a_sound_ledger_passes_and_is_no_finding(repo, ledger, capsys):
    code, out, err = run(capsys, repo, "doctor", "--json")
    report = json.loads(out)
    assert check(report, "ledger")["status"] == "ok", report
    assert "passed SQLite's integrity check" in check(report, "ledger")["message"]
    assert report["status"] != "error" and not any(c["status"] == "error" for c in report["checks"])
    assert "Traceback" not in err


def test_checking_a_sound_ledger_no_process_has_open_changes_nothing_beside_it(repo, ledger, capsys):
    """No ``-wal``/``-shm`` is made, so the ledger's stamp (an input of ``check``'s replay and of the server's
    stored publish set) stays as it was."""
    folder = ledger.parent

    def state() -> dict[str, tuple[int, int]]:
        return {p.name: (p.stat().st_size, p.stat().st_mtime_ns) for p in folder.iterdir() if p.is_file()}

    before = state()
    assert not (folder / (ledger.name + "-wal")).exists(), before
    code, out, _ = run(capsys, repo, "doctor", "--json")
    assert check(json.loads(out), "ledger")["status"] == "ok"
    assert state() == before


@pytest.mark.parametrize("table", ["change", "change_file", "local_record"])
def test_doctor_names_a_damaged_ledger_as_an_error_and_leaves_it_byte_identical(repo, ledger, capsys, table):
    damage_table(ledger, table)
    before = ledger.read_bytes()
    code, out, err = run(capsys, repo, "doctor", "--json")
    assert code == 1 and "Traceback" not in err, err
    report = json.loads(out)
    assert report["status"] == "error"
    found = check(report, "ledger")
    assert found["status"] == "error" and str(ledger) in found["message"] and "is damaged" in found["message"]
    assert "will not replace or delete it" in found["message"]
    [step] = [s for s in report["next_steps"] if ".recover" in s]
    assert "keep a copy" in step and f"sqlite3 {ledger}.copy .recover" in step and "never replaces" in step
    assert ledger.read_bytes() == before  # never repaired, replaced or deleted
    code, out, err = run(capsys, repo, "doctor")  # as text: the same finding, one line each, no traceback
    assert code == 1 and "Traceback" not in out + err
    assert any(line.startswith("  error   ledger: ") for line in out.splitlines()), out
    assert ledger.read_bytes() == before


def test_a_file_that_is_no_database_at_all_is_named_too(repo, ledger, capsys):
    for companion in (ledger.with_name(ledger.name + "-wal"), ledger.with_name(ledger.name + "-shm")):
        companion.unlink(missing_ok=True)
    ledger.write_bytes(b"this is not an SQLite database\n" * 200)
    code, out, _ = run(capsys, repo, "doctor", "--json")
    assert code == 1 and check(json.loads(out), "ledger")["status"] == "error"
    assert ledger.read_bytes() == b"this is not an SQLite database\n" * 200


def test_a_damaged_resident_candidate_database_is_an_error_too(repo, ledger, capsys):
    assert run(capsys, repo, "resident", "list", "--json")[0] == 0
    db = Path(os.environ["MEMZOI_HOME"]) / "memzoi-lsp-resident.db"
    table = "memory_candidate"
    damage_table(db, table)
    before = db.read_bytes()
    code, out, _ = run(capsys, repo, "doctor", "--json")
    report = json.loads(out)
    assert code == 1 and report["status"] == "error"
    found = check(report, "resident_candidates")
    assert found["status"] == "error" and str(db) in found["message"]
    assert check(report, "ledger")["status"] == "ok"
    assert db.read_bytes() == before


def test_no_ledger_yet_is_skipped(repo, capsys):
    code, out, _ = run(capsys, repo, "doctor", "--json")
    report = json.loads(out)
    assert check(report, "ledger")["status"] == "skip"
    assert not list(Path(os.environ["MEMZOI_HOME"]).rglob("memzoi-lsp-ledger.db*"))  # nothing was made


def test_the_check_waits_for_no_writer_and_keeps_none_waiting(repo, ledger, capsys):
    """A server's write transaction open meanwhile: doctor checks (WAL readers do not wait for writers), and the
    writer then commits (doctor's read lock is gone when it returns)."""
    writer = sqlite3.connect(ledger, isolation_level=None, timeout=0)
    try:
        writer.execute("BEGIN IMMEDIATE")
        writer.execute("UPDATE change SET reason = reason")
        code, out, _ = run(capsys, repo, "doctor", "--json")
        assert check(json.loads(out), "ledger")["status"] == "ok"
        writer.execute("COMMIT")  # timeout 0: fails at once if doctor still held a lock
        writer.execute("BEGIN EXCLUSIVE")
        writer.execute("COMMIT")
    finally:
        writer.close()


def test_a_ledger_that_cannot_be_checked_now_is_a_warning_not_an_error(repo, ledger, capsys, monkeypatch):
    def busy(db, **_kw):
        raise sqlite3.OperationalError("database is locked")

    monkeypatch.setattr(doctor, "damage", busy)
    code, out, _ = run(capsys, repo, "doctor", "--json")
    found = check(json.loads(out), "ledger")
    assert code == 1 and found["status"] == "warning" and "database_busy" in found["message"], found


@pytest.mark.parametrize("argv", [("proposals", "apply", PROPOSAL), ("undo", "{cid}")])
@pytest.mark.parametrize("as_json", [True, False])
def test_a_write_to_a_damaged_ledger_refuses_before_any_file_changes(repo, ledger, capsys, argv, as_json):
    [cid] = [c["change_id"] for c in json.loads(run(capsys, repo, "history", "--json")[1])["changes"]]
    damage_table(ledger, "change")
    files, db = tree(repo), ledger.read_bytes()
    code, out, err = run(capsys, repo, *(a.format(cid=cid) for a in argv), *(["--json"] if as_json else []))
    assert code == 1 and "Traceback" not in out + err and "internal" not in out + err, (out, err)
    if as_json:
        error = json.loads(out)["error"]
    else:
        line = err.strip().splitlines()[-1]
        assert line.startswith("memzoi: corrupt_database: "), err
        error = {"code": "corrupt_database", "message": line}
    assert error["code"] == "corrupt_database" and str(ledger) in error["message"]
    assert "run `memzoi doctor`" in error["message"] and "never replaces or deletes it" in error["message"]
    assert tree(repo) == files and ledger.read_bytes() == db


def test_damage_is_sqlites_own_verdict(tmp_path):
    from memzoi.base.runtime_errors import damage

    db = tmp_path / "x.db"
    with sqlite3.connect(db) as conn:
        conn.execute("CREATE TABLE t (x)")
        conn.executemany("INSERT INTO t VALUES (?)", [(str(i) * 100,) for i in range(200)])
    conn.close()
    assert damage(db) is None
    damage_table(db, "t")
    assert damage(db)
    db.write_bytes(b"garbage" * 1000)
    assert damage(db) == "file is not a database"


def test_a_secret_bearing_ledger_path_is_shown_redacted(tmp_path, monkeypatch, capsys):
    """The runtime directory's name carries the project folder's name: where that bears a credential, the finding
    shows ``<redacted-path:…>`` (:func:`memzoi.judge.pathsafety.shown_path`), never the value."""
    from .conftest import seed

    token = "ghp_" + "a1b2c3d4e5" * 3 + "f6g7h8"
    monkeypatch.setenv("MEMZOI_HOME", str(tmp_path / ".memzoi"))
    repo = seed(tmp_path / token)
    code, out, _ = run(capsys, repo, "tombstone", TARGET_ID, "--reason", "obsolete", "--json")
    assert code == 0, out
    [db] = (tmp_path / ".memzoi").rglob("memzoi-lsp-ledger.db")
    assert token in str(db)
    damage_table(db, "change")
    code, out, err = run(capsys, repo, "doctor", "--json")
    found = check(json.loads(out), "ledger")
    assert code == 1 and found["status"] == "error" and "<redacted-path:" in found["message"]
    step = next(s for s in json.loads(out)["next_steps"] if ".recover" in s)
    assert token not in found["message"] + step and "<redacted-path:" in step
