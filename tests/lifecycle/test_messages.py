"""One-line messages of changes and resident decisions (core, issue 28 §5): what happened and to what first, short
enough for one 120-column Neovim command line; the change id in the detail."""

from __future__ import annotations

from memzoi.ledger import ChangeResult
from memzoi.ledger.model import FileChange
from memzoi.lifecycle.messages import MAX_LINE, change_message, resident_message

from .. import builders


def test_apply_names_the_title_and_the_record_and_keeps_the_id_for_the_detail():
    record = builders.record("lint-before-pushing", title="Lint before pushing").encode()
    packet = builders.packet("mem-lint", title="Lint before pushing").encode()
    result = ChangeResult(
        "chg_0123",
        "applied",
        [
            FileChange(".memzoi/records/lint-before-pushing.md", None, record),
            FileChange(".memzoi/proposals/resolved/applied/mem-lint.md", None, packet),
            FileChange(".memzoi/proposals/pending/mem-lint.md", packet, None),
        ],
        "apply",
    )
    message, detail = change_message(result)
    assert message == 'Applied "Lint before pushing" -> records/lint-before-pushing.md'
    assert "chg_0123" in detail and "proposals/pending/mem-lint.md" in detail


def test_long_titles_fit_one_line_and_undo_says_what_it_undid():
    record = builders.record("r", title="word " * 60).encode()
    message, _ = change_message(
        ChangeResult("chg_1", "undone", [FileChange(".memzoi/records/r.md", None, record)], "apply")
    )
    assert message.startswith('Undid apply of "word word') and len(message) <= MAX_LINE and "\n" not in message


def test_a_secret_in_a_title_is_never_shown():
    secret = "AKIA" + "Z" * 16  # built at run time: an AWS access key id shape
    record = builders.record("r", title=f"Key {secret}").encode()
    message, detail = change_message(
        ChangeResult("chg_2", "applied", [FileChange(".memzoi/records/r.md", None, record)], "reattest")
    )
    assert secret not in message and secret not in detail and message.startswith("Re-attested")


def test_resident_decisions():
    message, detail = resident_message("add", "applied", "project", "Use spaces.", "mem_abc", 120, 2000)
    assert message == 'Approved add "Use spaces." in project memory (120/2,000 chars)' and "mem_abc" in detail
    assert resident_message("add", "rejected", "global", "x", "mem_d")[0] == 'Rejected add "x" in global memory'


def test_change_label_is_the_full_id_that_memzoi_undo_takes():
    """Trial 2, defect 8: ids are time-ordered, so a 12-character label is shared by every change of a session."""
    from memzoi.lifecycle.messages import change_label

    a, b = "chg_01a243ff0000aaaaaaaaaaaa", "chg_01a243ff0001bbbbbbbbbbbb"
    assert change_label(a) == a and change_label(b) == b and change_label(a) != change_label(b)
