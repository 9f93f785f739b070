"""One wording of what a change did to each file (:attr:`memzoi.ledger.FileChange.change`), the same in the CLI's
change output, its history and the editor's answer: a file a recovery lists but leaves as it is (absent before and
after, or the same bytes) reads ``unchanged``, never ``modified``."""

from __future__ import annotations

from hypothesis import given, strategies as st

from memzoi import ledger as L
from memzoi.cli.main import main
from memzoi.ledger import ChangeResult, FileChange, Purged
from memzoi.lifecycle import apply_proposal
from memzoi.lifecycle.messages import change_message

from ..ledger.faults import CRASH_EXIT, run_child

STATES = st.one_of(st.none(), st.binary(max_size=4), st.binary(max_size=4).map(Purged.of))


@given(STATES, STATES)
def test_the_word_follows_the_two_states(before, after):
    word = FileChange("a.md", before, after).change
    if before == after:
        assert word == "unchanged"
    elif before is None:
        assert word == "created"
    elif after is None:
        assert word == "deleted"
    else:
        assert word == "modified"


def test_a_recovery_says_unchanged_for_the_files_it_leaves_as_they_are(repo, capsys):
    # An apply killed once the record is written: the resolved copy not yet, the packet still pending.
    apply = lambda: apply_proposal(repo, "mem_2026_07_06_auth_001", actor="x")  # noqa: E731
    code, _ = run_child(apply, crash_at="apply:file0:done")
    assert code == CRASH_EXIT
    [settled] = L.reconcile(repo)
    assert settled.status == "uncertain"
    record, resolved, packet = (f.path for f in L.history(repo)[0].files)
    capsys.readouterr()

    assert main(["reconcile", "--recover", settled.change_id, "restore-before", "--root", str(repo)]) == 0
    said = capsys.readouterr().out.splitlines()
    # The record goes; the resolved copy was absent before and after, the packet kept its bytes.
    assert said[1:] == [f"  deleted  {record}", f"  unchanged {resolved}", f"  unchanged {packet}"], said

    assert main(["history", "--limit", "1", "--root", str(repo)]) == 0
    listed = [line.split() for line in capsys.readouterr().out.splitlines() if line.startswith("    ")]
    assert [x for x in listed if x[0] != "reason:"] == [
        ["deleted", record],
        ["unchanged", resolved],
        ["unchanged", packet],
    ]

    # The editor's answer (memzoi_lsp's command result) words the files the same way.
    change = L.history(repo)[0]
    _message, detail = change_message(ChangeResult(change.id, change.status, change.files, change.operation))
    assert "modified" not in detail and "unchanged proposals/resolved/applied/" in detail, detail
