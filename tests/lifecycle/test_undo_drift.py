"""The undo refusal names its true cause: a later ledgered change of the file (undo that one first), or an edit
made outside Memzoi (defect report: apply, then supersede and apply, then undo the first change blamed a hand
edit nobody made)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from memzoi.base.runtime import git_env
from memzoi.cli.main import main
from memzoi.ledger import Refusal, get_change
from memzoi.lifecycle import apply_proposal, propose_supersede, undo

from .. import builders
from ..ledger.faults import tree

RID = "prefer-composition"


@pytest.fixture
def root(tmp_path, monkeypatch) -> Path:
    """A git repository whose pending packet ``mem-new`` is applied: the record ``RID`` it created exists."""
    monkeypatch.setenv("MEMZOI_HOME", str(tmp_path / "home"))
    repo = tmp_path / "repo"
    subprocess.run(["git", "init", "-q", "--template=", str(repo)], check=True, env=git_env())
    builders.write(
        repo,
        builders.packet_path("mem-new"),
        builders.packet("mem-new", title="Prefer composition", body="Prefer composition to inheritance."),
    )
    return repo


def test_undo_after_a_later_supersede_names_that_change(root, capsys):
    first = apply_proposal(root, "mem-new", actor="r").change_id
    packet = propose_supersede(
        root, RID, title="Prefer small interfaces", body="Prefer small interfaces.", reason="narrower", actor="r"
    ).files[0]
    later = apply_proposal(root, Path(packet.path).name[:-3], actor="r").change_id
    before = tree(root)
    with pytest.raises(Refusal) as refused:
        undo(root, first, actor="r")
    applied = get_change(root, later)
    assert applied is not None
    record = builders.record_path(RID)
    assert refused.value.code == "undo_drift"
    assert refused.value.message == (
        f"{record}: changed by {later} (apply, {applied.applied_at}) after change {first} was applied; "
        "undo that change first"
    )
    assert "by hand" not in refused.value.message and tree(root) == before
    # The CLI says the same, and following its advice works: undo the later change, then the first.
    capsys.readouterr()
    assert main(["undo", first, "--root", str(root)]) == 1
    assert f"changed by {later} (apply, " in capsys.readouterr().err
    assert undo(root, later, actor="r").status == "undone"
    assert undo(root, first, actor="r").status == "undone"


def test_undo_after_a_hand_edit_still_says_hand_edit(root):
    first = apply_proposal(root, "mem-new", actor="r").change_id
    path = root / builders.record_path(RID)
    path.write_text(builders.edit(path.read_text(), "to inheritance", "over inheritance"))
    with pytest.raises(Refusal) as refused:
        undo(root, first, actor="r")
    assert refused.value.code == "undo_drift"
    assert "edited after change" in refused.value.message and "make the change by hand" in refused.value.message
    assert "changed by" not in refused.value.message


def test_a_hand_edit_after_a_later_change_is_still_a_hand_edit(root):
    """The file matches no change's after bytes: neither the later change nor the first wrote what it holds."""
    first = apply_proposal(root, "mem-new", actor="r").change_id
    packet = propose_supersede(
        root, RID, title="Prefer small interfaces", body="Prefer small interfaces.", reason="narrower", actor="r"
    ).files[0]
    apply_proposal(root, Path(packet.path).name[:-3], actor="r")
    path = root / builders.record_path(RID)
    path.write_bytes(path.read_bytes() + b"\nA note added by hand.\n")
    with pytest.raises(Refusal) as refused:
        undo(root, first, actor="r")
    assert "make the change by hand" in refused.value.message and "changed by" not in refused.value.message
