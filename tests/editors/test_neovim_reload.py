"""editors/nvim after a change on disk, in a real headless Neovim with no server (the ``memzoi/changed`` handler
given the contract's params): an unmodified buffer of a file the change created is re-read (``:checktime`` skips
a file that did not exist when its buffer was opened), a modified one is kept and the user told, writing a packet
that a change moved away warns first, and a refusal's one line gives its cause before the path."""

from __future__ import annotations

import pytest

from .editor_runs import nvim_without_server

pytestmark = pytest.mark.timeout(120)


@pytest.fixture(scope="module")
def report(tmp_path_factory: pytest.TempPathFactory) -> dict:
    tmp = tmp_path_factory.mktemp("nvimreload")
    root = tmp / "repo"
    (root / ".memzoi" / "records").mkdir(parents=True)
    return nvim_without_server("nvim_reload.lua", tmp, [str(root)])


def test_a_buffer_whose_file_the_change_created_shows_it(report: dict) -> None:
    """D4: the first approved entry of a resident file that did not exist when its buffer was opened."""
    c = report["created"]
    assert c["shown"] == ["- Always run pytest -q before committing."], c
    assert c["hidden"] == ["- Answer in English."] and c["hidden_loaded"], c
    assert c["modified"] is False and c["write_ok"] is True, c  # no E13: the buffer knows its file now
    assert c["dos"] == ["- one", "- two"], c  # a buffer compared line by line (not plain UTF-8 Unix text)
    assert report["rewritten"] == ["- Always run pytest -q before committing.", "- Keep modules short."]


def test_a_modified_buffer_is_kept_and_the_user_told(report: dict) -> None:
    m = report["modified"]
    assert m["kept"] == 1 and m["text"] == ["typed by the user"], m
    (note,) = m["notes"]
    assert note["msg"] == "Memzoi: your edits kept; file changed on disk: .zuno/RULES.md", note
    assert note["level"] == 3, note  # WARN


def test_writing_a_packet_the_cli_applied_warns(report: dict) -> None:
    """D12: the unsaved buffer of a pending packet that was applied meanwhile."""
    r = report["resurrect"]
    assert r["warning"] == (
        "packet already applied: this write re-creates it in pending/, which memzoi check refuses "
        "(duplicate_identity; see resolved/applied/mem_2026_07_06_auth_001.md)"
    )
    (note,) = r["notes"]  # once, after the write
    assert note["msg"].startswith("Memzoi: packet already applied: this write re-creates it") and note["level"] == 3


def test_writing_a_file_a_change_removed_warns(report: dict) -> None:
    r = report["removed"]
    assert r["cleared"] and r["gone"] == "reject", r
    assert r["warning"] == "a Memzoi reject removed this file: writing re-creates it", r
    assert report["plain_warning"] is None  # a new file nothing moved writes silently


def test_a_refusal_gives_its_cause_before_the_path(report: dict) -> None:
    """D11: the path (or a candidate's id) alone filled the 80-column line and the reason was cut off."""
    long = ".memzoi/proposals/pending/mem_2026_07_06_auth_001_protected_routes_must_validate.md"
    assert report["refusal"] == (
        f"apply is blocked by record_exists (the record exists); fix what is named or reject it ({long})"
    )
    assert report["refusal_line"].startswith("Memzoi: apply refused: apply is blocked by record_exists")
    assert report["refusal_plain"] == "no such change chg_x"  # no path: as the server says it, no code added
    assert report["refusal_candidate"] == (
        "candidate mem_e1f8b611… is applied; only a pending or failed candidate can be approved"
    )
