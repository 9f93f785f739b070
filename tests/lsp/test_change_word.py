"""Each file of a ``memzoi.preview``, ``memzoi.changeFiles`` and ``memzoi.history`` answer carries ``change``, the
word of :attr:`memzoi.ledger.FileChange.change` the CLI prints (``created``, ``deleted``, ``modified``,
``unchanged``), beside every field it had, under both client profiles: a file absent before and after reads
``unchanged``, so no editor words it ``created``."""

from __future__ import annotations

from pathlib import Path

from memzoi.resident import service

from .test_lifecycle import crash_mid_change
from .test_resident import _rules, resident_client  # noqa: F401 (fixture)
from .test_review_flow import execute

RECORD, CREATED = ".memzoi/records/use-pnpm.md", ".memzoi/records/use-bun.md"


async def test_preview_files_carry_the_word(workspace: Path, client):
    packet = workspace / ".memzoi" / "proposals" / "pending" / "mem-new.md"
    planned = await execute(client, "memzoi.preview", {"uri": packet.as_uri(), "operation": "apply"})
    words = {f["path"]: f["change"] for f in planned["files"]}
    assert words[".memzoi/proposals/pending/mem-new.md"] == "deleted", planned["files"]
    assert sorted(words.values()) == ["created", "created", "deleted"], words
    for f in planned["files"]:  # every field it had is kept
        assert {"path", "uri", "before", "after"} <= set(f)
        assert f["change"] == ("created" if f["before"] is None else "deleted" if f["after"] is None else "modified")


async def test_history_and_change_files_word_an_absent_file_unchanged(workspace: Path, memzoi_home: Path, client):
    # An edit of RECORD that also creates CREATED dies after RECORD is written; restoring the before leaves CREATED
    # absent before and after.
    crash_mid_change(workspace, memzoi_home)
    [settled] = await execute(client, "memzoi.reconcile", {})
    recovered = await execute(client, "memzoi.recover", {"change_id": settled["change_id"], "mode": "restore-before"})
    assert recovered["status"] == "applied", recovered

    changes = await execute(client, "memzoi.history", {})
    files = changes[0]["files"]
    assert [(f["path"], f["before"], f["after"], f["change"]) for f in files] == [
        (RECORD, "present", "present", "modified"),
        (CREATED, "absent", "absent", "unchanged"),
    ]
    crashed = next(c for c in changes if c["change_id"] == settled["change_id"])
    assert [f["change"] for f in crashed["files"]] == ["modified", "created"]

    texts = await execute(client, "memzoi.changeFiles", {"change_id": changes[0]["change_id"]})
    assert [(f["path"], f["before"] is None, f["after"] is None, f["change"]) for f in texts["files"]] == [
        (RECORD, False, False, "modified"),
        (CREATED, True, True, "unchanged"),
    ]
    assert all(f["uri"].startswith("file://") for f in texts["files"])


async def test_resident_preview_files_carry_the_word(resident_client):  # noqa: F811
    client = resident_client
    path = _rules(client)
    cand = service.propose(
        client.root, scope="project", action="add", content="Run make lint.", reason="r", confidence=1, actor="ada"
    ).candidate
    args = {"uri": path.as_uri(), "operation": "approve", "candidateId": cand.id}
    (f,) = (await execute(client, "memzoi.preview", args))["files"]
    assert (f["before"], f["change"]) == (None, "created"), f
    path.write_text("Use tabs in Makefiles.", encoding="utf-8")
    (f,) = (await execute(client, "memzoi.preview", args))["files"]
    assert (f["before"], f["change"]) == ("Use tabs in Makefiles.", "modified"), f


async def test_apply_and_undo_answers_carry_the_word(workspace: Path, client):
    # The change commands' own answers word each file as preview and history do, keeping `before`/`after`.
    packet = workspace / ".memzoi" / "proposals" / "pending" / "mem-new.md"
    applied = await execute(client, "memzoi.apply", {"uri": packet.as_uri()})
    assert applied["status"] == "applied", applied
    words = {f["path"]: (f["before"], f["after"], f["change"]) for f in applied["files"]}
    assert words[".memzoi/proposals/pending/mem-new.md"] == ("present", "absent", "deleted"), words
    assert sorted(w[2] for w in words.values()) == ["created", "created", "deleted"], words
    undone = await execute(client, "memzoi.undo", {"change_id": applied["change_id"]})
    assert undone["status"] == "undone", undone
    back = {"created": "deleted", "deleted": "created"}  # an undo writes each file back
    assert {f["path"]: f["change"] for f in undone["files"]} == {p: back[w[2]] for p, w in words.items()}, undone
