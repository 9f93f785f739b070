"""What the editors show of checkpoints and memory health (:mod:`memzoi.lifecycle.checkpoint_review`): the inbox
with each checkpoint's actions, a preview that writes nothing and refuses exactly what the apply would (the
continue-at-the-boundary refusal included), the apply bound to the previewed version, and the Memory health
groups naming their records' files."""

from __future__ import annotations

import subprocess
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from memzoi.agent.maintenance import memory_health
from memzoi.base.runtime import git_env
from memzoi.ledger import Refusal
from memzoi.lifecycle.checkpoint_review import apply_transition, checkpoint_inbox, preview_transition
from memzoi.lifecycle.checkpoint_transitions import close_checkpoint
from memzoi.lifecycle.checkpoints import add_checkpoint, get_checkpoint

from . import builders

T0 = datetime(2026, 7, 1, 9, 0, tzinfo=UTC)


@pytest.fixture
def root(tmp_path: Path) -> Path:
    r = tmp_path / "repo"
    (r / ".memzoi" / "records").mkdir(parents=True)
    subprocess.run(["git", "init", "-q", "--template=", str(r)], check=True, env=git_env())
    return r


def _add(root: Path, task: str) -> str:
    return add_checkpoint(root, task=task, body=f"Notes on {task}.", actor="tester", now=T0)["checkpoint"]["id"]


def test_inbox_lists_open_first_with_the_actions_each_accepts(root):
    closed, open_ = _add(root, "done task"), _add(root, "open task")
    close_checkpoint(root, closed, now=T0)
    now = checkpoint_inbox(root, T0 + timedelta(hours=1))
    assert [(c["id"], c["actions"]) for c in now["checkpoints"]] == [(open_, ["continue", "close"]), (closed, [])]
    assert all(c["provenance"] == "runtime" for c in now["checkpoints"])
    late = checkpoint_inbox(root, T0 + timedelta(hours=24))  # the lease boundary itself: too late to continue
    assert late["checkpoints"][0]["actions"] == ["close"]


def test_preview_writes_nothing_and_apply_uses_its_version(root):
    cid = _add(root, "auth")
    before = get_checkpoint(root, cid)
    at = T0 + timedelta(hours=2)
    pre = preview_transition(root, cid, "continue", at)
    assert get_checkpoint(root, cid) == before  # rolled back
    assert pre["expected_version"] == 1 and pre["after"]["version"] == 2 and pre["changed"] is True
    assert pre["after"]["retention"]["last_continued_at"] == "2026-07-01T11:00:00Z"
    done = apply_transition(root, cid, "continue", pre["expected_version"], at)
    assert done["checkpoint"]["version"] == 2
    with pytest.raises(Refusal) as err:  # the checkpoint changed since that preview
        apply_transition(root, cid, "close", pre["expected_version"], at)
    assert err.value.code == "version_conflict"


def test_preview_refuses_at_the_boundary_and_after_close(root):
    cid = _add(root, "auth")
    with pytest.raises(Refusal) as err:
        preview_transition(root, cid, "continue", T0 + timedelta(hours=24))
    assert err.value.code == "checkpoint_expired"
    assert preview_transition(root, cid, "close", T0 + timedelta(hours=24))["changed"] is True
    close_checkpoint(root, cid, now=T0)
    with pytest.raises(Refusal) as err:
        preview_transition(root, cid, "continue", T0)
    assert err.value.code == "checkpoint_closed"
    again = preview_transition(root, cid, "close", T0)
    assert again["changed"] is False and "already closed" in again["summary"]
    with pytest.raises(Refusal):
        preview_transition(root, cid, "reopen", T0)
    with pytest.raises(Refusal) as err:
        preview_transition(root, "ckpt-000000000000", "close", T0)
    assert err.value.code == "checkpoint_not_found"


def test_memory_health_groups_name_their_files(root):
    for rid in ("dup-a", "dup-b"):
        builders.write(
            root,
            builders.record_path(rid),
            builders.record(
                rid, title="Use pnpm", body="Install with pnpm.", description=None, timestamp="2026-06-01T00:00:00Z"
            ),
        )
    builders.write(
        root,
        builders.record_path("soon"),
        builders.record(
            "soon",
            type="episode",
            lane="episodic",
            title="Outage",
            body="The deploy failed.",
            description=None,
            timestamp="2026-06-05T00:00:00Z",
            retention={"occurred_at": "2026-06-05T00:00:00Z"},
        ),
    )
    health = memory_health(root, T0)
    assert [d["record_ids"] for d in health["duplicates"]] == [["dup-a", "dup-b"]]
    assert health["duplicates"][0]["records"] == {
        "dup-a": ".memzoi/records/dup-a.md",
        "dup-b": ".memzoi/records/dup-b.md",
    }
    assert [e["record_ids"] for e in health["expiring"]] == [["soon"]]
    assert health["expiring"][0]["boundary"] == "2026-07-05T00:00:00Z"
    assert health["contradictions"] == [] and health["expired"] == []
