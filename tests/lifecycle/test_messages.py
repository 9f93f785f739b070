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


def _undo(operation: str, files: list[FileChange]) -> str:
    """The message of undoing a change of ``operation`` whose files are ``(path, before, after)`` of the change."""
    undid = [FileChange(f.path, f.after, f.before) for f in files]
    return change_message(ChangeResult("chg_u", "undone", undid, operation))[0]


def test_undoing_a_supersede_names_the_new_record_and_the_record_it_brings_back():
    """newuser5 D6: the undo made the old record active again, yet the message named it as the undone subject."""
    old = builders.record("rust-msrv-is-1-96-1", title="Rust MSRV is 1.96.1+").encode()
    superseded = builders.record("rust-msrv-is-1-96-1", title="Rust MSRV is 1.96.1+", status="superseded").encode()
    new = builders.record("rust-msrv-is-1-97-0", title="Rust MSRV is 1.97.0").encode()
    packet = builders.packet("mcp-rust", title="Rust MSRV is 1.97.0").encode()
    message = _undo(
        "apply",
        [
            FileChange(".memzoi/records/rust-msrv-is-1-96-1.md", old, superseded),
            FileChange(".memzoi/records/rust-msrv-is-1-97-0.md", None, new),
            FileChange(".memzoi/proposals/resolved/applied/mcp-rust.md", None, packet),
            FileChange(".memzoi/proposals/pending/mcp-rust.md", packet, None),
        ],
    )
    assert message == 'Undid apply of "Rust MSRV is 1.97.0" (records/rust-msrv-is-1-96-1.md is active again)'


def test_every_undo_names_the_changes_own_subject():
    """newuser5 D6: create, tombstone, materialized update and reject undos name what the change was about."""
    rec = builders.record("r", title="Kept title").encode()
    gone = builders.record("r", title="Kept title", status="tombstoned").encode()
    newer = builders.record("r", title="Updated title").encode()
    packet = builders.packet("p", title="Packet title").encode()
    created = _undo(
        "apply",
        [
            FileChange(".memzoi/records/n.md", None, builders.record("n", title="New one").encode()),
            FileChange(".memzoi/proposals/pending/p.md", packet, None),
        ],
    )
    assert created == 'Undid apply of "New one" -> proposals/pending/p.md'
    assert (
        _undo("apply", [FileChange(".memzoi/records/r.md", rec, gone)]) == 'Undid apply of "Kept title" -> records/r.md'
    )
    updated = _undo("materialize", [FileChange(".memzoi/records/r.md", rec, newer)])
    assert updated == 'Undid materialize of "Updated title" -> records/r.md'
    rejected = _undo(
        "reject",
        [
            FileChange(".memzoi/proposals/pending/p.md", packet, None),
            FileChange(".memzoi/proposals/resolved/rejected/p.md", None, packet),
        ],
    )
    assert rejected == 'Undid reject of "Packet title" -> proposals/pending/p.md'
