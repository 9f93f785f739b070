"""Reading a damaged ledger: ``memzoi history``, the editor's reads (:func:`memzoi.ledger.file_history`,
:class:`memzoi.ledger.LedgerView`) and the MCP tools never show it as a ledger without history. ``history`` runs
SQLite's quick_check after its query, so damage off the query's path (an index such as ``change_status``, a table
it does not read) is an error too (exit 1, ``corrupt_database``, "run `memzoi doctor`"), printed after what could
be read; a query that meets the damage prints nothing as history and says so.

The damage is real (one page of a table overwritten on disk, as ``test_damaged_ledger`` does), and the ledger is
byte-identical after every read.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from memzoi.agent import tools
from memzoi.ledger import LedgerView, file_history

from ..test_store import _damage_table as damage_table
from .conftest import TARGET_ID
from .test_damaged_ledger import ledger, run  # noqa: F401 (fixture)

RECORD = f".memzoi/records/{TARGET_ID}.md"  # a file no change touched (the tombstone writes a packet)


def pending_file(repo: Path, capsys) -> str:
    [change] = json.loads(run(capsys, repo, "history", "--json")[1])["changes"]
    [f] = change["files"]
    return f["path"]


def assert_doctor_advice(message: str, ledger: Path) -> None:
    assert str(ledger) in message and "is damaged" in message, message
    assert "run `memzoi doctor`" in message and "keep a copy first" in message, message


def test_a_sound_ledger_reads_as_before(repo, ledger, capsys):
    code, out, err = run(capsys, repo, "history", "--json")
    report = json.loads(out)
    assert code == 0 and "error" not in report and len(report["changes"]) == 1, report
    code, out, err = run(capsys, repo, "history")
    assert code == 0 and "tombstone" in out and err == ""
    from memzoi.ledger import checked_history

    found = checked_history(repo)
    assert found.damage is None and found.read and found.problem() is None


@pytest.mark.parametrize("table", ["change_status", "local_record"])
def test_damage_off_the_querys_path_is_an_error_after_what_was_read(repo, ledger, capsys, table):
    """The query reads ``change`` and ``change_file`` whole and sound; the damage lies elsewhere, so only the check
    sees it (main printed the history and exited 0)."""
    [cid] = [c["change_id"] for c in json.loads(run(capsys, repo, "history", "--json")[1])["changes"]]
    damage_table(ledger, table)
    before = ledger.read_bytes()
    code, out, err = run(capsys, repo, "history", "--json")
    report = json.loads(out)
    assert code == 1, report
    assert [c["change_id"] for c in report["changes"]] == [cid]  # what could be read, honestly labelled
    assert report["error"]["code"] == "corrupt_database"
    assert_doctor_advice(report["error"]["message"], ledger)
    assert (
        "1 change(s) shown were read" in report["error"]["message"] and "may be missing" in report["error"]["message"]
    )
    code, out, err = run(capsys, repo, "history")
    assert code == 1 and cid in out and "Traceback" not in out + err
    [line] = err.strip().splitlines()  # one line, the quick_check's own line breaks folded
    assert line.startswith("memzoi: corrupt_database: ")
    assert_doctor_advice(line, ledger)
    assert ledger.read_bytes() == before


def test_a_damaged_change_table_reads_nothing_and_says_so(repo, ledger, capsys):
    path = pending_file(repo, capsys)
    damage_table(ledger, "change")
    before = ledger.read_bytes()
    for argv in (("history",), ("history", path)):
        code, out, err = run(capsys, repo, *argv, "--json")
        report = json.loads(out)
        assert code == 1 and "changes" not in report, report  # no empty list that reads as "no history"
        assert report["error"]["code"] == "corrupt_database" and "no change could be read" in report["error"]["message"]
        code, out, err = run(capsys, repo, *argv)
        assert code == 1 and "no changes recorded" not in out and out == "", out
        assert "no change could be read" in err and "memzoi doctor" in err
    assert ledger.read_bytes() == before


def test_a_file_no_change_touched_is_not_no_history_on_a_damaged_ledger(repo, ledger, capsys):
    """The path's query never reads ``change`` when no ``change_file`` row names the file: main printed "no changes
    recorded" and exited 0 on a ledger whose every change was unreadable."""
    damage_table(ledger, "change")
    code, out, err = run(capsys, repo, "history", RECORD)
    assert code == 1 and "no changes recorded" not in out, (out, err)
    assert "hold no change here" in err and "may be missing" in err
    assert_doctor_advice(err, ledger)


def test_the_editors_file_history_names_the_damage_instead_of_no_history(repo, ledger, capsys):
    path = pending_file(repo, capsys)
    assert [c.operation for c in file_history(repo, path).changes] == ["tombstone"]
    assert file_history(repo, path).damage is None
    damage_table(ledger, "change")
    found = file_history(repo, repo / path)
    assert not found.read and found.changes == [] and found.damage is not None
    assert found.damage.code == "corrupt_database"
    assert_doctor_advice(found.problem() or "", ledger)


def test_the_ledger_view_knows_its_ledger_is_damaged_not_empty(repo, ledger, capsys):
    view = LedgerView(repo)
    path = repo / pending_file(repo, capsys)
    assert view.for_file(path).last is not None and view.damage is None
    damage_table(ledger, "change")
    assert view.for_file(path).last is None  # the facts are unknown ...
    assert view.damage is not None and view.damage.code == "corrupt_database"  # ... and said to be
    assert view.settled().damage is view.damage
    assert_doctor_advice(view.damage.message, ledger)


def test_the_mcp_tools_name_a_damaged_ledger_as_an_error(repo, ledger, capsys):
    """``search_memory`` reads the ledger's local records: a damaged ledger is the tool's error, never no hits."""
    damage_table(ledger, "local_record")
    res = tools.call(tools.Session(repo, "test-agent", tools.RateLimit(20)), "search_memory", {"query": "auth"})
    assert res.is_error and res.data["error"]["code"] == "corrupt_database", res.data
    assert_doctor_advice(res.data["error"]["message"], ledger)


def test_a_secret_bearing_ledger_path_is_shown_redacted_by_history(tmp_path, monkeypatch, capsys):
    from .conftest import seed

    token = "ghp_" + "a1b2c3d4e5" * 3 + "f6g7h8"
    monkeypatch.setenv("MEMZOI_HOME", str(tmp_path / ".memzoi"))
    repo = seed(tmp_path / token)
    assert run(capsys, repo, "tombstone", TARGET_ID, "--reason", "obsolete", "--json")[0] == 0
    [db] = Path(os.environ["MEMZOI_HOME"]).rglob("memzoi-lsp-ledger.db")
    damage_table(db, "change_status")
    code, out, err = run(capsys, repo, "history")
    assert code == 1 and "<redacted-path:" in err and token not in err
