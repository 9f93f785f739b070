"""A first change that fails on a full disk leaves no empty ledger file, and an empty one (left by an older version,
or by a crash before SQLite wrote its first page) is read as "no ledger yet" by doctor, history and the ledger's
readers: doctor does not blame another memzoi command (new user's D4)."""

from __future__ import annotations

import logging
import os
import sqlite3

from memzoi.base.runtime import LEDGER_DB, database_started, project_runtime_dir
from memzoi.ledger.store import cached_runtime_dir

from .conftest import TARGET_ID
from .test_runtime_failures import _Failing, sqlite_error


def _full_ledger(db, monkeypatch):
    """SQLite opens (and so creates) the ledger ``db``, then every statement fails as on a full disk."""
    real = sqlite3.connect

    def connect(path, *args, **kwargs):
        conn = real(path, *args, **kwargs)
        return _Failing(conn, lambda: sqlite_error("enospc")) if os.fspath(path) == str(db) else conn

    monkeypatch.setattr(sqlite3, "connect", connect)


def test_a_failed_first_change_leaves_no_empty_ledger(repo, cli, monkeypatch):
    assert cli("rebuild")[0] == 0
    db = project_runtime_dir(repo) / LEDGER_DB
    with monkeypatch.context() as m:
        _full_ledger(db, m)
        code, out = cli("tombstone", TARGET_ID, "--reason", "obsolete")
    assert code == 1 and out["error"]["code"] == "disk_full", out
    assert not db.exists() and not list(db.parent.glob(f"{LEDGER_DB}*"))
    assert cli("tombstone", TARGET_ID, "--reason", "obsolete")[0] == 0  # space freed: the first change is made
    assert database_started(db)


def test_an_empty_ledger_file_is_no_ledger_yet(repo, cli, monkeypatch):
    assert cli("rebuild")[0] == 0
    db = project_runtime_dir(repo) / LEDGER_DB
    db.touch(mode=0o600)
    assert not database_started(db)
    with monkeypatch.context() as m:  # the disk still full: reading needs no write
        _full_ledger(db, m)
        code, out = cli("history")
        assert code == 0 and "error" not in out, out
    code, report = cli("doctor")
    checks = {c["name"]: c for c in report["checks"]}
    assert checks["ledger"]["status"] == "skip" and "does not exist yet" in checks["ledger"]["message"]
    assert "ledger_changes" not in checks, checks.get("ledger_changes")
    assert not any("other memzoi command" in step for step in report["next_steps"]), report["next_steps"]
    assert db.stat().st_size == 0  # a reader wrote nothing in it


def test_database_started(tmp_path):
    db = tmp_path / "x.db"
    assert not database_started(db)
    db.write_bytes(b"")
    assert not database_started(db)
    (tmp_path / "x.db-wal").write_bytes(b"w")
    assert database_started(db)
    (tmp_path / "x.db-wal").unlink()
    db.write_bytes(b"SQLite format 3\0")
    assert database_started(db)
    assert not database_started(tmp_path)  # a folder is no database


def test_the_ledger_view_reads_an_empty_ledger_as_none(repo, monkeypatch, caplog):
    """check's and the server's ledger view: no facts and nothing logged (it logged "cannot read the ledger" on a
    full disk, where reading the empty file tried to create its tables)."""
    from memzoi.ledger.view import LedgerView

    db = cached_runtime_dir(repo) / LEDGER_DB
    db.touch(mode=0o600)
    _full_ledger(db, monkeypatch)
    with caplog.at_level(logging.WARNING):
        assert LedgerView(repo).for_file(repo / ".memzoi/records/x.md").last is None
    assert not [r for r in caplog.records if "ledger" in r.getMessage()], caplog.records
    assert db.stat().st_size == 0
