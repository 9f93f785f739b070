"""Which file editors/nvim's commands are about, in a real headless Neovim with a stand-in client (no server):
``:Memzoi resident`` works from any buffer, sending the buffer's URI only for a resident file; ``:Memzoi history``
from a Memzoi file says whose history it lists and ``all`` lists every change; a runtime refusal's line shows its
cause (newuser5 D2, D5, D9)."""

from __future__ import annotations

import errno

import pytest

from memzoi.base.runtime_errors import runtime_error

from .editor_runs import nvim_without_server

pytestmark = pytest.mark.timeout(120)


@pytest.fixture(scope="module")
def report(tmp_path_factory: pytest.TempPathFactory) -> dict:
    tmp = tmp_path_factory.mktemp("nvimscope")
    root = tmp / "repo"
    (root / ".memzoi" / "records").mkdir(parents=True)
    home = tmp / ("memzoi-home-of-a-long-folder-name" * 2) / "projects" / "repo-36f26a435c1cb774"
    refusal = runtime_error(OSError(errno.ENOSPC, "No space left on device"), home / "memzoi-lsp-ledger.db", "ledger")
    report = nvim_without_server(
        "nvim_scope.lua", tmp, [str(root)], MEMZOI_RUNTIME_REFUSAL=refusal.message, ZUNO_CONFIG_DIR=str(tmp / "zuno")
    )
    return {**report, "root": root}


def test_resident_works_from_any_buffer_and_sends_only_a_resident_files_uri(report: dict) -> None:
    """D2: from a packet or a record the URI made the server refuse ("not a resident memory file")."""
    for case in ("resident_packet", "resident_record"):
        r = report[case]
        assert r["command"] == "memzoi.resident.list" and r["uri"] is None, r
        assert r["title"] == "Memzoi resident memory", r
    r = report["resident_rules"]
    assert r["uri"] == (report["root"] / ".zuno" / "RULES.md").as_uri(), r


def test_history_of_a_file_says_whose_it_is_and_all_lists_every_change(report: dict) -> None:
    """D5: from a record the list held that file's changes under "1 change(s) in the history"."""
    r = report["history_record"]
    assert r["uri"] == (report["root"] / ".memzoi" / "records" / "use-node-22.md").as_uri(), r
    assert r["note"].startswith("Memzoi: history of records/use-node-22.md: 1 change(s); :Memzoi hi"), r
    assert r["title"] == "Memzoi history of records/use-node-22.md", r
    a = report["history_all"]
    assert a["uri"] is None and a["title"] == "Memzoi history", a
    assert a["note"] == "Memzoi: 1 change(s) in the history; :Memzoi undo ID", a
    assert report["complete_history"] == ["all"]


def test_a_runtime_refusal_shows_its_cause_on_one_line(report: dict) -> None:
    """D9: the line was cut inside the runtime path, before "is full" was seen."""
    line = report["runtime_line"]
    assert line.startswith("Memzoi: Apply preview refused: disk full: the ledger database"), line
