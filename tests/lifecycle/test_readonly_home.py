"""Reads of the ledger and the index need no write access: on a read-only memzoi home (a read-only mount, folders
without write permission) ``memzoi history``, ``local list``, ``checkpoint list``, ``check`` (its ledger facts) and
``search`` (from a private index, :mod:`memzoi.stores.readindex`) answer, and write nothing there; a change still
refuses. ``real``: the home made read-only for real (``tests.readonly_home``); ``erofs``/``eacces``: emulated in
this process (SQLite's read-only open rule and failing writes, ``Fault``)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from memzoi.cli.main import main

from ..readonly_home import tree
from ..resident.test_readonly_home import broken
from .test_runtime_failures import TARGET


def _run(capsys, root: Path, *argv: str) -> tuple[int, str, str]:
    capsys.readouterr()
    code = main([*argv, "--root", str(root)])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.parametrize("how", ["real", "erofs", "eacces"])
def test_ledger_reads_answer_from_a_read_only_home(repo, how, monkeypatch, capsys):
    code, out, _ = _run(capsys, repo, "tombstone", TARGET, "--reason", "obsolete", "--json")
    assert code == 0, out
    change = json.loads(out)["change_id"]
    assert _run(capsys, repo, "local", "add", "--title", "Local note", "--body", "A private note.")[0] == 0
    home = Path(os.environ["MEMZOI_HOME"])
    before = tree(home)
    with broken(how, home, monkeypatch):
        code, out, err = _run(capsys, repo, "history", "--json")
        assert code == 0, (out, err)
        changes = json.loads(out)["changes"]
        assert [c["operation"] for c in changes] == ["local_add", "tombstone"] and changes[1]["change_id"] == change
        code, out, err = _run(capsys, repo, "local", "list", "--json")
        assert code == 0, (out, err)
        assert [r["title"] for r in json.loads(out)["records"]] == ["Local note"]
        code, out, err = _run(capsys, repo, "checkpoint", "list", "--json")
        assert code == 0 and json.loads(out) == {"version": 0, "checkpoints": []}, (out, err)
        code, out, err = _run(capsys, repo, "search", "auth", "--json", "--no-progress")  # a private index
        assert code == 0 and json.loads(out)["records"], (out, err)
        code, out, err = _run(capsys, repo, "check")
        assert "cannot read the ledger" not in err, err  # its facts are read, not dropped
        code, out, _ = _run(capsys, repo, "local", "add", "--title", "Another", "--body", "B.", "--json")
        assert code == 1 and json.loads(out)["error"]["code"] in ("read_only_file_system", "permission_denied"), out
        assert tree(home) == before  # the reads created, changed and removed nothing
