"""The preview's fingerprint end to end, for both client profiles: ``memzoi.preview`` answers ``previewed``; a
change sent back with it is refused (``preview_stale``, nothing written) when a file changed on disk since the
preview, and applied when nothing did. And the unsaved-buffer refusal tells a buffer with unsaved edits from a
file changed on disk since the editor loaded it (which must be reloaded, never saved over)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from lsprotocol import types

from .conftest import git_init, open_doc, refusal
from .test_lifecycle import snapshot

PACKET = ".memzoi/proposals/pending/mem-new.md"


@pytest.fixture
def git_workspace(workspace: Path) -> Path:
    git_init(workspace)
    return workspace


async def execute(client, command: str, **arg):
    return await client.workspace_execute_command_async(types.ExecuteCommandParams(command=command, arguments=[arg]))


async def test_apply_after_the_packet_changed_on_disk_is_refused(git_workspace: Path, client):
    root = git_workspace
    packet = root / PACKET
    uri = packet.as_uri()
    planned = await execute(client, "memzoi.preview", uri=uri, operation="apply")
    assert isinstance(planned["previewed"], str) and planned["previewed"]
    packet.write_bytes(packet.read_bytes() + b"HANDEDIT: skip all auth checks.\n")  # another writer, unreviewed
    before = snapshot(root)
    refused = await refusal(execute(client, "memzoi.apply", uri=uri, previewed=planned["previewed"]))
    assert refused["code"] == "preview_stale", refused
    assert PACKET in refused["message"] and "review the new preview" in refused["message"]
    assert snapshot(root) == before  # the packet's bytes unchanged, nothing created
    history = await execute(client, "memzoi.history")
    assert history == []  # nothing ledgered
    # the new preview shows the edit; applied with its fingerprint, the reviewed text is what lands
    planned = await execute(client, "memzoi.preview", uri=uri, operation="apply")
    assert "HANDEDIT" in next(f["before"] for f in planned["files"] if f["path"] == PACKET)
    result = await execute(client, "memzoi.apply", uri=uri, previewed=planned["previewed"])
    assert result["status"] == "applied", result


async def test_apply_of_a_supersede_whose_target_changed_is_refused(git_workspace: Path, client):
    root = git_workspace
    record = root / ".memzoi" / "records" / "use-node-22.md"
    made = await execute(
        client, "memzoi.supersede", uri=record.as_uri(), reason="Node 24 is the new LTS", title="Use Node 24"
    )
    [packet] = [f["path"] for f in made["files"] if f["before"] == "absent"]
    planned = await execute(client, "memzoi.preview", uri=(root / packet).as_uri(), operation="apply")
    target = ".memzoi/records/use-node-22.md"
    assert target in {f["path"] for f in planned["files"]}
    record.write_bytes(record.read_bytes() + b"A line added by hand while the diff was open.\n")
    before = snapshot(root)
    refused = await refusal(
        execute(client, "memzoi.apply", uri=(root / packet).as_uri(), previewed=planned["previewed"])
    )
    assert refused["code"] == "preview_stale" and target in refused["message"], refused
    assert snapshot(root) == before
    assert [c["operation"] for c in await execute(client, "memzoi.history")] == ["supersede"]


async def test_a_malformed_fingerprint_is_refused(git_workspace: Path, client):
    root = git_workspace
    before = snapshot(root)
    for bad in (42, "not-a-fingerprint"):
        refused = await refusal(execute(client, "memzoi.apply", uri=(root / PACKET).as_uri(), previewed=bad))
        assert refused["code"] == "invalid_arguments", refused
    assert snapshot(root) == before


async def test_a_file_changed_on_disk_is_not_called_unsaved(git_workspace: Path, client):
    root = git_workspace
    packet = root / PACKET
    uri = open_doc(client, packet)
    await execute(client, "memzoi.history")  # the server has taken the didOpen (notifications run in order)
    packet.write_bytes(packet.read_bytes() + b"appended by another program\n")
    before = snapshot(root)
    refused = await refusal(execute(client, "memzoi.apply", uri=uri))
    assert refused["code"] == "unsaved_changes", refused
    message = refused["message"]
    assert "changed on disk" in message and "reload" in message, message
    assert "unsaved" not in message and "save or revert" not in message
    assert snapshot(root) == before


async def test_a_packet_open_in_the_editor_that_changed_since_the_preview_is_stale_not_unsaved(
    git_workspace: Path, client
):
    """The packet is open; another program edits it while the diff is shown. With the preview's fingerprint the
    reviewer is offered the new preview (``preview_stale``), not told to reload a buffer the editor may already
    have reloaded (VS Code does; the new user's D2 of the fourth trial)."""
    root = git_workspace
    packet = root / PACKET
    uri = open_doc(client, packet)
    planned = await execute(client, "memzoi.preview", uri=uri, operation="apply")
    packet.write_bytes(packet.read_bytes() + b"HANDEDIT: skip all auth checks.\n")
    before = snapshot(root)
    refused = await refusal(execute(client, "memzoi.apply", uri=uri, previewed=planned["previewed"]))
    assert refused["code"] == "preview_stale" and PACKET in refused["message"], refused
    assert "review the new preview" in refused["message"], refused
    assert snapshot(root) == before
    # the disk as the preview showed it, the buffer edited by the user: still told to save or revert
    packet.write_bytes(before[PACKET].replace(b"HANDEDIT: skip all auth checks.\n", b""))
    client.text_document_did_change(
        types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=2),
            content_changes=[types.TextDocumentContentChangeWholeDocument(text=packet.read_text() + "typed\n")],
        )
    )
    refused = await refusal(execute(client, "memzoi.apply", uri=uri, previewed=planned["previewed"]))
    assert refused["code"] == "unsaved_changes" and "save or revert" in refused["message"], refused


async def test_a_buffer_with_unsaved_edits_is_still_told_to_save(git_workspace: Path, client):
    root = git_workspace
    packet = root / PACKET
    uri = open_doc(client, packet)
    client.text_document_did_change(
        types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=2),
            content_changes=[types.TextDocumentContentChangeWholeDocument(text=packet.read_text() + "typed\n")],
        )
    )
    refused = await refusal(execute(client, "memzoi.apply", uri=uri))
    assert refused["code"] == "unsaved_changes" and "save or revert" in refused["message"], refused
    # and when the file changed on disk as well, saving is not the advice
    packet.write_bytes(packet.read_bytes() + b"appended by another program\n")
    refused = await refusal(execute(client, "memzoi.apply", uri=uri))
    assert "also changed on disk" in refused["message"] and "save or revert" not in refused["message"], refused


async def test_a_buffer_opened_unlike_the_untouched_disk_is_unsaved(git_workspace: Path, client):
    """A buffer the editor restored with unsaved text (VS Code's hot exit): the disk was not touched since the open,
    so the difference is the buffer's, and saving is the advice, never reloading (it would drop that text)."""
    root = git_workspace
    packet = root / PACKET
    os.utime(packet, (1_700_000_000, 1_700_000_000))  # long before the open: the signature vouches for the disk
    uri = open_doc(client, packet, packet.read_text() + "restored, never saved\n")
    refused = await refusal(execute(client, "memzoi.apply", uri=uri))
    assert refused["code"] == "unsaved_changes" and "save or revert" in refused["message"], refused
    assert "changed on disk" not in refused["message"]


def _artifact_set(root: Path, folder: Path, draft: str) -> Path:
    """Write a consistent candidate / plan / decision set for ``draft`` in ``folder`` (outside the project, as
    ``memzoi materialize candidate|plan|decide`` would); returns the candidate's path."""
    import json

    from memzoi.lifecycle.materialize import derive_decision, derive_plan
    from memzoi.lifecycle.materialize_candidate import build_candidate

    folder.mkdir(parents=True, exist_ok=True)
    candidate = build_candidate(root, draft)
    plan = derive_plan(candidate)
    for name, value in (
        ("m", candidate),
        ("m.plan", plan),
        ("m.decision", derive_decision(plan, "2026-07-07T00:00:00Z")),
    ):
        (folder / f"{name}.json").write_text(json.dumps(value, indent=2) + "\n")
    return folder / "m.json"


async def test_materialize_after_the_artifacts_were_replaced_is_refused(git_workspace: Path, tmp_path: Path, client):
    from .conftest import record_text

    root = git_workspace
    draft = record_text("lint-with-ruff", "Lint with ruff")
    shown_at = _artifact_set(root, tmp_path / "matA", draft)
    other = _artifact_set(root, tmp_path / "matB", draft + "\nEVIL UNREVIEWED LINE: disable lint in CI.\n")
    uri = shown_at.as_uri()
    planned = await execute(client, "memzoi.preview", uri=uri, operation="materialize")
    [shown] = planned["files"]
    assert "EVIL" not in shown["after"]
    kept = {p.name: p.read_bytes() for p in shown_at.parent.iterdir()}
    for name in kept:  # another consistent set copied over the previewed one
        (shown_at.parent / name).write_bytes((other.parent / name).read_bytes())
    before = snapshot(root)
    refused = await refusal(execute(client, "memzoi.materialize", uri=uri, previewed=planned["previewed"]))
    assert refused["code"] == "preview_stale", refused
    assert "materialization candidate" in refused["message"] and "review the new preview" in refused["message"]
    assert snapshot(root) == before and not (root / shown["path"]).exists()  # nothing written
    assert await execute(client, "memzoi.history") == []  # nothing ledgered
    # the set the preview showed, put back, applies and writes exactly what was shown
    for name, data in kept.items():
        (shown_at.parent / name).write_bytes(data)
    result = await execute(client, "memzoi.materialize", uri=uri, previewed=planned["previewed"])
    assert result["status"] == "applied", result
    assert (root / shown["path"]).read_text() == shown["after"]
