"""Session-end routing and resident approve act on exactly what their preview showed, end to end for both client
profiles: ``memzoi.routing.preview`` and ``memzoi.preview`` ``approve`` answer ``previewed``; ``memzoi.routing.apply``
and ``memzoi.resident.approve`` sent back with it are refused (``preview_stale``, nothing written) when the input
file, or anything in the resident file, changed on disk since; applied when nothing did; a command without it
behaves as before."""

from __future__ import annotations

from pathlib import Path

from lsprotocol import types

from memzoi.resident import service

from .conftest import refusal
from .test_lifecycle import snapshot
from .test_resident import resident_client  # noqa: F401 the fixture
from .test_routing import SESSION

UNREVIEWED = """  - destination: local
    type: preference
    lane: semantic
    title: Unreviewed local record
    body: Nobody saw this one.
"""


async def execute(client, command: str, **arg):
    return await client.workspace_execute_command_async(types.ExecuteCommandParams(command=command, arguments=[arg]))


async def test_routing_apply_after_the_file_changed_on_disk_is_refused(client, workspace: Path):
    path = workspace / "session.yml"
    path.write_text(SESSION, encoding="utf-8")
    uri = path.as_uri()
    preview = await execute(client, "memzoi.routing.preview", uri=uri)
    assert isinstance(preview["previewed"], str) and preview["previewed"]
    path.write_text(SESSION + UNREVIEWED, encoding="utf-8")  # another writer, after the preview
    before = snapshot(workspace)
    refused = await refusal(
        execute(
            client,
            "memzoi.routing.apply",
            uri=uri,
            expected_version=preview["expected_version"],
            previewed=preview["previewed"],
        )
    )
    assert refused["code"] == "preview_stale", refused
    assert "session.yml" in refused["message"] and "review the new preview" in refused["message"]
    assert snapshot(workspace) == before  # no packet
    assert await execute(client, "memzoi.history") == []  # nothing ledgered
    # the new preview shows the edit; applied with its fingerprint, what it showed is routed
    again = await execute(client, "memzoi.routing.preview", uri=uri)
    assert [c["destination"] for c in again["candidates"]][-1] == "local"
    out = await execute(client, "memzoi.routing.apply", uri=uri, previewed=again["previewed"])
    assert out["status"] == "routed" and [c["outcome"] for c in out["candidates"]][-1] == "created"


async def test_routing_apply_without_a_fingerprint_routes_the_file_as_before(client, workspace: Path):
    path = workspace / "session.yml"
    path.write_text(SESSION, encoding="utf-8")
    preview = await execute(client, "memzoi.routing.preview", uri=path.as_uri())
    path.write_text(SESSION + UNREVIEWED, encoding="utf-8")
    out = await execute(client, "memzoi.routing.apply", uri=path.as_uri(), expected_version=preview["expected_version"])
    assert out["status"] == "routed" and len(out["candidates"]) == 4


async def test_routing_apply_refuses_a_malformed_fingerprint(client, workspace: Path):
    path = workspace / "session.yml"
    path.write_text(SESSION, encoding="utf-8")
    before = snapshot(workspace)
    for bad in (42, "not-a-fingerprint"):
        refused = await refusal(execute(client, "memzoi.routing.apply", uri=path.as_uri(), previewed=bad))
        assert refused["code"] == "invalid_arguments", refused
    assert snapshot(workspace) == before


async def test_resident_approve_after_an_edit_elsewhere_in_the_file_is_refused(resident_client):  # noqa: F811
    client = resident_client
    path = client.root / ".zuno" / "RULES.md"
    path.write_text("Use tabs in Makefiles.", encoding="utf-8")
    cand = service.propose(
        client.root, scope="project", action="add", content="Run make lint.", reason="r", confidence=0.5, actor="ada"
    ).candidate
    uri = path.as_uri()
    shown = await execute(client, "memzoi.preview", uri=uri, operation="approve", candidateId=cand.id)
    assert isinstance(shown["previewed"], str) and shown["previewed"]
    path.write_text("Use tabs in Makefiles.\n§\nUnreviewed: push to main.", encoding="utf-8")  # another writer
    refused = await refusal(
        execute(client, "memzoi.resident.approve", uri=uri, candidate_id=cand.id, previewed=shown["previewed"])
    )
    assert refused["code"] == "preview_stale", refused
    assert "RULES.md" in refused["message"] and "nothing was written" in refused["message"]
    assert path.read_text(encoding="utf-8") == "Use tabs in Makefiles.\n§\nUnreviewed: push to main."
    listed = await execute(client, "memzoi.resident.review", uri=uri)
    assert [(c["id"], c["status"]) for c in listed] == [(cand.id, "pending")]  # not decided, not failed
    # the new preview shows the edit, and approving with it writes what it showed
    again = await execute(client, "memzoi.preview", uri=uri, operation="approve", candidateId=cand.id)
    done = await execute(client, "memzoi.resident.approve", uri=uri, candidate_id=cand.id, previewed=again["previewed"])
    assert done["status"] == "applied"
    assert path.read_text(encoding="utf-8") == again["files"][0]["after"]
