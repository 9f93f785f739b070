"""Reading resident memory needs no write access: on a read-only memzoi home (a read-only mount, folders without
write permission) the command line lists, shows and states the candidates, and writes nothing there; a decision
still refuses with ``read_only_file_system``. ``real``: the home made read-only for real (``tests.readonly_home``);
``erofs``/``eacces``: emulated in this process (SQLite's read-only open rule and failing writes,
``tests.lifecycle.test_runtime_failures.Fault``)."""

from __future__ import annotations

import json
import os
import sqlite3
from contextlib import ExitStack, contextmanager
from pathlib import Path

import pytest

from memzoi.base import dbread
from memzoi.base.runtime_errors import RuntimeStateError
from memzoi.cli.main import main
from memzoi.resident import candidates as db, service
from memzoi.resident.views import candidates_for

from ..lifecycle.test_runtime_failures import Fault
from ..readonly_home import read_only, tree


def _propose(project: Path) -> str:
    return service.propose(
        project, scope="project", action="add", content="Run ruff first.", reason="r", confidence=0.5, actor="ada"
    ).candidate.id


@contextmanager
def broken(how: str, home: Path, monkeypatch):
    """The home read-only, for real or emulated."""
    if how == "real":
        with read_only(home):
            yield
    else:
        with monkeypatch.context() as m:
            Fault(how, home, m)
            yield


def _cli(capsys, *argv: str) -> tuple[int, str]:
    capsys.readouterr()
    code = main(list(argv))
    return code, capsys.readouterr().out


@pytest.mark.parametrize("how", ["real", "erofs", "eacces"])
def test_the_cli_lists_candidates_from_a_read_only_home(project, how, monkeypatch, capsys):
    cid = _propose(project)
    home = Path(os.environ["MEMZOI_HOME"])
    before = tree(home)
    root = ["--root", str(project)]
    with broken(how, home, monkeypatch):
        code, out = _cli(capsys, "resident", "list", *root, "--json")
        assert code == 0, out
        assert [c["id"] for c in json.loads(out)["candidates"]] == [cid]
        code, out = _cli(capsys, "resident", "state", *root, "--json")
        assert code == 0, out
        assert [c["id"] for c in json.loads(out)["memory_candidates"]] == [cid]
        assert _cli(capsys, "resident", "show", *root, "--json")[0] == 0
        assert _cli(capsys, "resident", "jobs", *root, "--json") == (0, '{\n  "jobs": []\n}\n')
        code, out = _cli(capsys, "resident", "approve", cid, *root, "--json")  # a writer keeps its refusal
        assert code == 1 and json.loads(out)["error"]["code"] in ("read_only_file_system", "permission_denied"), out
        assert tree(home) == before  # the reads created, changed and removed nothing
    assert [c.status for c in candidates_for(project)] == ["pending"]


def test_a_read_creates_nothing_beside_a_database_no_writer_has_open(project):
    cid = _propose(project)
    home = Path(os.environ["MEMZOI_HOME"])
    before = tree(home)
    assert [c.id for c in candidates_for(project)] == [cid]
    assert db.signature() is not None
    assert tree(home) == before  # no -wal, no -shm, no migration


def test_a_read_sees_the_commits_still_in_the_write_ahead_log(project):
    """A writer that keeps the database open keeps its commits in the ``-wal``: the read takes SQLite's locks
    (``mode=ro``) and sees them, never the older database file alone (what ``immutable`` would give)."""
    cid = _propose(project)
    writer = sqlite3.connect(db.db_path(), isolation_level=None)
    try:
        writer.execute("PRAGMA wal_autocheckpoint=0")
        writer.execute("UPDATE memory_candidate SET reason = 'in the log' WHERE id = ?", (cid,))
        assert Path(f"{db.db_path()}-wal").stat().st_size > 0
        assert [c.reason for c in candidates_for(project)] == ["in the log"]
    finally:
        writer.close()


def test_a_database_that_changes_while_it_is_read_is_read_again(project):
    cid = _propose(project)
    seen: list[str] = []

    def reading(conn: sqlite3.Connection) -> str:
        reason = conn.execute("SELECT reason FROM memory_candidate WHERE id = ?", (cid,)).fetchone()[0]
        if not seen:  # another process commits during the first read
            with sqlite3.connect(db.db_path(), isolation_level=None) as other:
                other.execute("UPDATE memory_candidate SET reason = 'newer' WHERE id = ?", (cid,))
            other.close()
        seen.append(reason)
        return str(reason)

    assert dbread.read_database(db.db_path(), reading, "resident") == "newer"
    assert seen == ["r", "newer"]


def test_a_log_that_cannot_be_read_is_refused_never_answered_from_the_file(project, monkeypatch):
    """A ``-wal`` whose index (``-shm``) cannot be made in a read-only folder: SQLite cannot open it ``mode=ro``,
    and reading the file alone would be stale, so the read is refused with the file named."""
    cid = _propose(project)
    writer = sqlite3.connect(db.db_path(), isolation_level=None)
    with ExitStack() as stack:
        stack.callback(writer.close)
        writer.execute("PRAGMA wal_autocheckpoint=0")
        writer.execute("UPDATE memory_candidate SET reason = 'in the log' WHERE id = ?", (cid,))
        Fault("erofs", Path(os.environ["MEMZOI_HOME"]), monkeypatch)
        exists = os.path.exists  # the emulated folder never got the -shm: mode=ro cannot open the log
        monkeypatch.setattr(os.path, "exists", lambda p: not str(p).endswith("-shm") and exists(p))
        with pytest.raises(RuntimeStateError) as err:
            candidates_for(project)
    assert err.value.code == "read_only_file_system", err.value.message
    assert str(db.db_path()) in err.value.message and "write-ahead log" in err.value.message
