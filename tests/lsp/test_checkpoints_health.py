"""Checkpoints and Memory health over LSP (the real server over stdio, every client profile): the inbox lists a
checkpoint an agent left with its actions, a continue is previewed (nothing written) and then applied with the
previewed version, a close is terminal, a stale preview's apply is refused, and the Memory health view names
duplicate records with URIs the editor opens."""

from __future__ import annotations

from lsprotocol import types

from memzoi.lifecycle.checkpoints import add_checkpoint, get_checkpoint

from .. import builders
from .conftest import refusal


async def _run(client, command: str, arg: dict):
    return await client.workspace_execute_command_async(types.ExecuteCommandParams(command=command, arguments=[arg]))


async def test_checkpoint_inbox_preview_then_apply(workspace, memzoi_home, client, monkeypatch):
    monkeypatch.setenv("MEMZOI_HOME", str(memzoi_home))  # the server's runtime plane
    cid = add_checkpoint(workspace, task="Auth middleware", body="Stopped at token refresh.", actor="agent")[
        "checkpoint"
    ]["id"]
    listed = await _run(client, "memzoi.checkpoints.list", {})
    (project,) = listed["projects"]
    (row,) = project["checkpoints"]
    assert row["id"] == cid and row["actions"] == ["continue", "close"] and row["provenance"] == "runtime"

    before = get_checkpoint(workspace, cid)
    pre = await _run(client, "memzoi.checkpoints.preview", {"checkpoint_id": cid, "operation": "continue"})
    assert pre["before"]["version"] == 1 and pre["after"]["version"] == 2 and pre["expected_version"] == 1
    assert get_checkpoint(workspace, cid) == before  # a preview writes nothing
    done = await _run(
        client,
        "memzoi.checkpoints.apply",
        {"checkpoint_id": cid, "operation": "continue", "expected_version": pre["expected_version"]},
    )
    assert done["checkpoint"]["version"] == 2
    stale = await refusal(
        _run(client, "memzoi.checkpoints.apply", {"checkpoint_id": cid, "operation": "close", "expected_version": 1})
    )
    assert stale["code"] == "version_conflict"
    close = await _run(client, "memzoi.checkpoints.preview", {"checkpoint_id": cid, "operation": "close"})
    await _run(
        client,
        "memzoi.checkpoints.apply",
        {"checkpoint_id": cid, "operation": "close", "expected_version": close["expected_version"]},
    )
    (row,) = (await _run(client, "memzoi.checkpoints.list", {}))["projects"][0]["checkpoints"]
    assert row["status"] == "closed" and row["actions"] == []
    refused = await refusal(_run(client, "memzoi.checkpoints.preview", {"checkpoint_id": cid, "operation": "continue"}))
    assert refused["code"] == "checkpoint_closed"
    missing = await refusal(_run(client, "memzoi.checkpoints.apply", {"checkpoint_id": cid, "operation": "close"}))
    assert missing["code"] == "invalid_arguments"


async def test_memory_health_names_duplicates_with_uris(workspace, client):
    for rid in ("dup-a", "dup-b"):
        builders.write(
            workspace,
            builders.record_path(rid),
            builders.record(
                rid,
                title="Use pnpm everywhere",
                body="Install with pnpm.",
                description=None,
                timestamp="2026-01-02T00:00:00Z",
            ),
        )
    health = await _run(client, "memzoi.memoryHealth", {})
    (project,) = health["projects"]
    dup = [d for d in project["duplicates"] if "dup-a" in d["record_ids"]]
    assert [d["record_ids"] for d in dup] == [["dup-a", "dup-b"]]
    assert dup[0]["uris"]["dup-a"] == (workspace / ".memzoi" / "records" / "dup-a.md").resolve().as_uri()
    assert project["summary"]["exact_duplicates"] >= 1 and project["plan_id"].startswith("blake3:")


async def test_a_session_end_checkpoint_shows_up_in_the_editor(workspace, memzoi_home, client, monkeypatch):
    """The checkpoint half of the end-to-end: what an agent's session-end routes to `session` is listed by the
    running server (with continue and close), beside the pending packet of its `repo` candidate."""
    from memzoi.lifecycle.session_end import session_end

    from ..lifecycle.test_session_end import SEED

    monkeypatch.setenv("MEMZOI_HOME", str(memzoi_home))
    text = (
        SEED
        + """  - destination: session
    type: episode
    lane: session
    title: Where the auth work stopped
    body: Token refresh is next.
"""
    )
    routed = session_end(workspace, text=text, actor="agent")
    by_dest = {c["destination"]: c for c in routed["candidates"]}
    cid = by_dest["session"]["checkpoint_id"]
    (row,) = (await _run(client, "memzoi.checkpoints.list", {}))["projects"][0]["checkpoints"]
    assert row["id"] == cid and row["task"] == "Implement auth middleware" and row["actions"] == ["continue", "close"]
    listed = await _run(client, "memzoi.proposals.list", {})
    assert by_dest["repo"]["proposal_id"] in {p["id"] for p in listed["proposals"]}
