"""editors/nvim words a change's files as the CLI does (the server's ``change`` of each file: ``memzoi.history``
and ``memzoi.preview`` answers), in a real headless Neovim with no server: the history list says
``b.md (unchanged)`` for a file absent before and after, never ``absent->absent``, and the review diff's header
says ``(unchanged)`` where it said ``(created)``."""

from __future__ import annotations

import pytest

from .editor_runs import nvim_without_server

pytestmark = pytest.mark.timeout(120)


@pytest.fixture(scope="module")
def report(tmp_path_factory: pytest.TempPathFactory) -> dict:
    return nvim_without_server("nvim_words.lua", tmp_path_factory.mktemp("nvimwords"), [])


def test_the_history_list_words_each_file_by_the_server(report: dict) -> None:
    recover, older = report["history"]
    assert ".memzoi/records/a.md (modified), .memzoi/records/b.md (unchanged) [chg_rec]" in recover, recover
    assert "absent->absent" not in recover
    assert "c.md (absent->present) [chg_old]" in older, older  # an older server's states, as before


def test_the_review_headers_word_each_file_by_the_server(report: dict) -> None:
    assert report["headers"] == [
        "=== gone.md (unchanged) ===",
        "=== new.md (created) ===",
        "=== old.md (deleted) ===",
        "=== edit.md ===",
    ]
    assert report["same"] is True
