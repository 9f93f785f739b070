"""A ledger this user cannot look at (a memzoi home of another user, mode 0700: ``stat`` says EACCES) is not a bug
in every file: ``memzoi check`` judges each file as without ledger facts and says once that the ledger cannot be
read (it said ``internal_error (PermissionError)`` for every file)."""

from __future__ import annotations

import json
import logging
from pathlib import Path

from memzoi.base.runtime import LEDGER_DB
from memzoi.cli.main import main
from memzoi.ledger.store import cached_runtime_dir
from memzoi.ledger.view import LedgerView

from ..builders import record, record_path, write


def _unreadable_ledger(monkeypatch, root: Path) -> Path:
    db = cached_runtime_dir(root) / LEDGER_DB
    db.write_bytes(b"")
    real = Path.is_file

    def is_file(self: Path) -> bool:
        if self.name == LEDGER_DB:
            raise PermissionError(13, "Permission denied", str(self))
        return real(self)

    monkeypatch.setattr(Path, "is_file", is_file)
    return db


def test_check_judges_every_file_and_says_once_it_cannot_read_the_ledger(tmp_path, monkeypatch, capsys, caplog):
    monkeypatch.setenv("MEMZOI_HOME", str(tmp_path / "home"))
    root = tmp_path / "repo"
    for rid in ("one", "two"):
        write(root, record_path(rid), record(rid, title=f"Record {rid}"))
    main(["check", str(root), "--no-cache", "--format", "json"])
    clean = json.loads(capsys.readouterr().out)["findings"]
    _unreadable_ledger(monkeypatch, root)
    with caplog.at_level(logging.WARNING):
        main(["check", str(root), "--no-cache", "--format", "json"])
    found = json.loads(capsys.readouterr().out)["findings"]
    assert not [f for f in found if f["code"] == "internal_error"], found
    assert found == clean
    said = [r.getMessage() for r in caplog.records if "cannot read the ledger" in r.getMessage()]
    assert len(said) == 1 and "Permission denied" in said[0], said


def test_the_view_has_no_facts_and_says_it_once(tmp_path, monkeypatch, caplog):
    monkeypatch.setenv("MEMZOI_HOME", str(tmp_path / "home"))
    root = tmp_path / "repo"
    path = write(root, record_path("one"), record("one"))
    _unreadable_ledger(monkeypatch, root)
    view = LedgerView(root)
    with caplog.at_level(logging.WARNING):
        for _ in range(3):
            assert view.for_file(path).last is None
    assert sum("cannot read the ledger" in r.getMessage() for r in caplog.records) == 1
