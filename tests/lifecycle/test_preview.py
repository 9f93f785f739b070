"""Preview of lifecycle changes: the planned files, from the same plan functions, with nothing written."""

from __future__ import annotations

from pathlib import Path

import pytest

from memzoi.ledger import Refusal, history
from memzoi.lifecycle import apply_proposal
from memzoi.lifecycle.preview import preview

from .conftest import PENDING, TARGET_ID


@pytest.fixture
def lifecycle_project(repo: Path) -> tuple[Path, Path]:
    """The seeded repository and a pending packet that can be applied."""
    return repo, repo / PENDING / "mem_2026_07_06_testing_procedure.md"


def tree(root: Path) -> dict[str, bytes]:
    return {
        p.relative_to(root).as_posix(): p.read_bytes() for p in sorted((root / ".memzoi").rglob("*")) if p.is_file()
    }


def test_apply_preview_equals_the_change_and_writes_nothing(lifecycle_project):
    root, packet = lifecycle_project
    before = tree(root)
    planned = preview(root, "apply", packet, actor="alice")
    assert tree(root) == before and history(root) == []
    assert planned["operation"] == "apply"
    by_path = {f["path"]: f for f in planned["files"]}
    pending = packet.relative_to(root).as_posix()
    # the target, named for the confirmation: its path and its title as the packet's frontmatter gives it
    import re

    title = re.search(r'^title: "?(.*?)"?$', packet.read_text(), re.M).group(1)
    assert planned["target"] == {"path": pending, "title": title}
    assert by_path[pending]["before"] == packet.read_text() and by_path[pending]["after"] is None
    result = apply_proposal(root, packet, actor="alice")
    assert {f.path for f in result.files} == set(by_path)
    for f in result.files:
        if f.after is not None and "/records/" in f.path:
            # the record's text is what the preview showed
            assert (root / f.path).read_text() == by_path[f.path]["after"]


def test_preview_refuses_as_the_change_would(lifecycle_project):
    root, packet = lifecycle_project
    with pytest.raises(Refusal) as err:
        preview(root, "tombstone", TARGET_ID, actor="a", reason="")
    assert err.value.code == "reason_required"
    planned = preview(root, "tombstone", TARGET_ID, actor="a", reason="obsolete")
    [created] = planned["files"]
    assert created["before"] is None and "obsolete" in created["after"] and not (root / created["path"]).exists()
    with pytest.raises(Refusal) as err:
        preview(root, "reject", packet, actor="a", reason="x")
    assert err.value.code == "invalid_arguments"


def test_change_texts_of_a_ledgered_change(lifecycle_project):
    from memzoi.lifecycle.preview import change_texts

    root, packet = lifecycle_project
    text = packet.read_text()
    result = apply_proposal(root, packet, actor="alice")
    shown = change_texts(root, result.change_id)
    assert shown["operation"] == "apply" and shown["status"] == "applied"
    pending = {f["path"]: f for f in shown["files"]}[packet.relative_to(root).as_posix()]
    assert pending["before"] == text and pending["after"] is None
    with pytest.raises(Refusal) as err:
        change_texts(root, "chg_nope")
    assert err.value.code == "change_not_found"


def test_reattest_preview_shows_the_hand_edit_since_the_attested_revision(repo: Path, monkeypatch):
    from memzoi.lifecycle import reattest as reattest_module
    from memzoi.lifecycle.reattest import reattest

    # The decision time is now: one clock for the preview and the change, so their texts can be compared whole.
    monkeypatch.setattr(reattest_module, "decision_now", lambda: "2026-12-05T00:00:00Z")

    from .test_crash_operations import materialize

    materialize(repo)  # attested through the ledger
    rec = repo / ".memzoi" / "records" / "prefer-small-modules.md"
    attested = rec.read_text()
    assert "500 lines" in attested
    rec.write_text(attested.replace("500 lines", "450 lines"))
    before = tree(repo)
    planned = preview(repo, "reattest", rec, actor="alice")
    assert tree(repo) == before and planned["operation"] == "reattest"
    (f,) = planned["files"]
    assert f["before"] == attested  # the attested revision, not the hand-edited file
    assert "450 lines" in f["after"] and "500 lines" not in f["after"] and "materialization:" in f["after"]
    result = reattest(repo, str(rec), actor="alice")
    assert rec.read_text() == f["after"] and result.status == "applied"


def test_change_texts_of_a_change_whose_bytes_the_ledger_did_not_keep(tmp_path, monkeypatch):
    # Rejecting a packet that holds a credential keeps only a digest of its bytes (ledger.Purged); the history's
    # Open Diff of that change was an AttributeError.
    import random
    import string
    import subprocess

    from memzoi.base.runtime import git_env
    from memzoi.lifecycle import reject_proposal
    from memzoi.lifecycle.preview import PURGED_TEXT, change_texts

    from .. import builders

    monkeypatch.setenv("MEMZOI_HOME", str(tmp_path / "home"))
    root = tmp_path / "repo"
    subprocess.run(["git", "init", "-q", "--template=", str(root)], check=True, env=git_env())
    # built at run time, never printed
    token = "ghp_" + "".join(random.Random(7).choice(string.ascii_letters + string.digits) for _ in range(36))
    packet = builders.write(root, builders.packet_path("hand"), builders.packet("hand", body=f"CI uses {token}."))
    result = reject_proposal(root, packet, reason="holds a token", actor="me")
    shown = change_texts(root, result.change_id)
    pending = {f["path"]: f for f in shown["files"]}[packet.relative_to(root).as_posix()]
    assert pending["before"] == PURGED_TEXT and pending["after"] is None
    leaked = token in repr(shown)
    assert not leaked, "the rejected packet's token is shown"
