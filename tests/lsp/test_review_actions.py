"""Review first, previews and resident memory's review flow (issue 28 contract §2–§4), under both client profiles:
"Review proposal…"/"Review candidate…" come first (preferred) with client-side commands the server does not
advertise; ``memzoi.preview`` of ``reattest`` and of a resident approve; cap usage; ``memzoi/inboxChanged`` for
proposals and candidates made elsewhere."""

from __future__ import annotations

from pathlib import Path

import pytest
from lsprotocol import types

from memzoi.resident import service

from .. import builders
from .conftest import git_init, open_doc, proposal_text, refusal, wait_until
from .test_lifecycle import actions_for
from .test_resident import _rules, resident_client  # noqa: F401 (fixture)
from .test_review_flow import execute, field, notes


@pytest.fixture
def git_workspace(workspace: Path) -> Path:
    git_init(workspace)
    return workspace


async def test_review_proposal_comes_first_and_is_not_advertised(git_workspace: Path, client):
    packet = git_workspace / ".memzoi" / "proposals" / "pending" / "mem-new.md"
    uri = open_doc(client, packet)
    actions = await actions_for(client, uri)
    first = actions[0]
    assert first.title == "Review proposal…" and first.is_preferred
    assert first.command.command == "memzoi.review" and list(first.command.arguments) == [{"uri": uri}]
    assert [a.title for a in actions[1:3]] == ["Apply proposal", "Preview: apply proposal"]
    assert not any(a.is_preferred for a in actions[1:])
    advertised = client.init_result.capabilities.execute_command_provider.commands
    assert "memzoi.review" not in advertised and "memzoi.reviewCandidate" not in advertised
    assert "memzoi.residentStatus" in advertised


async def test_reattest_preview_shows_the_hand_edit(workspace: Path, client):
    record = workspace / ".memzoi" / "records" / "attested.md"
    attested = builders.record("attested", title="Attested", body="Keep modules under 500 lines.", attested=True)
    record.write_text(attested)
    git_init(workspace)
    edited = builders.edit(attested, "500 lines", "450 lines")
    record.write_text(edited)
    uri = open_doc(client, record)
    actions = await actions_for(client, uri)
    titles = [a.title for a in actions]
    assert "Re-attest (accept this edit)" in titles and "Preview: re-attest (the hand edit)" in titles
    planned = await execute(client, "memzoi.preview", {"uri": uri, "operation": "reattest"})
    (f,) = planned["files"]
    assert f["before"] == attested and "450 lines" in f["after"] and f["uri"] == record.as_uri()
    assert record.read_text() == edited  # nothing written


async def test_resident_review_preview_status_and_changed(resident_client):  # noqa: F811
    client = resident_client
    path = _rules(client)
    path.write_text("Use tabs in Makefiles.", encoding="utf-8")
    cand = service.propose(
        client.root, scope="project", action="add", content="Run make lint.", reason="r", confidence=1, actor="ada"
    ).candidate
    uri = open_doc(client, path)
    actions = await actions_for(client, uri)
    first = actions[0]
    assert first.title.startswith(f"Review candidate {cand.id[:12]}") and first.is_preferred
    assert first.command.command == "memzoi.reviewCandidate"
    assert list(first.command.arguments) == [{"uri": uri, "candidateId": cand.id}]
    args = {"uri": uri, "operation": "approve", "candidateId": cand.id}
    planned = await execute(client, "memzoi.preview", args)
    (f,) = planned["files"]
    assert f["before"] == "Use tabs in Makefiles." and f["after"] == "Use tabs in Makefiles.\n§\nRun make lint."
    assert f["uri"] == path.as_uri() and path.read_text(encoding="utf-8") == "Use tabs in Makefiles."

    status = await execute(client, "memzoi.residentStatus", {"uri": uri})
    mine = next(s for s in status["files"] if s["uri"] == path.as_uri())
    assert (mine["used"], mine["cap"], mine["entries"]) == (22, 120, 1)
    hover = await client.text_document_hover_async(
        types.HoverParams(
            text_document=types.TextDocumentIdentifier(uri=uri), position=types.Position(line=0, character=2)
        )
    )
    assert "22/120 chars" in hover.contents.value

    client.memzoi_notes.clear()
    result = await execute(client, "memzoi.resident.approve", {"uri": uri, "candidateId": cand.id})  # preview's args
    assert result["status"] == "applied" and result["message"].startswith('Approved add "Run make lint."')
    assert cand.id not in result["message"] and cand.id in result["detail"]
    note = (await wait_until(lambda: notes(client, "memzoi/changed")))[-1]
    assert field(note, "operation") == "resident_approve"
    assert [(field(t, "uri"), field(t, "deleted")) for t in field(note, "touched")] == [(path.as_uri(), False)]
    await wait_until(lambda: notes(client, "memzoi/inboxChanged"))
    # rejecting needs a reason, by the same rule as a proposal
    other = service.propose(
        client.root, scope="project", action="add", content="x", reason="r", confidence=1, actor="ada"
    ).candidate
    from .conftest import refusal

    data = await refusal(execute(client, "memzoi.resident.reject", {"uri": uri, "candidate_id": other.id}))
    assert data["code"] == "invalid_candidate" and "needs a reason" in data["message"]


async def test_inbox_changed_for_candidates_and_packets_made_elsewhere(resident_client):  # noqa: F811
    client = resident_client
    client.memzoi_notes.clear()
    # a candidate proposed by another process (here: this test process, through the core, as the CLI does)
    service.propose(
        client.root, scope="project", action="add", content="From the CLI.", reason="r", confidence=1, actor="cli"
    )
    await wait_until(lambda: notes(client, "memzoi/inboxChanged"), timeout=15)
    client.memzoi_notes.clear()
    pending = client.root / ".memzoi" / "proposals" / "pending"
    pending.mkdir(parents=True, exist_ok=True)
    if client.profile != "vscode":  # the server's own watcher sees the new folder (it stands for its files)
        await wait_until(lambda: notes(client, "memzoi/inboxChanged"), timeout=15)
    client.memzoi_notes.clear()
    (pending / "mem-agent.md").write_text(proposal_text("mem-agent"))
    if client.profile == "vscode":  # the client watches files for the server: it reports the new packet
        client.workspace_did_change_watched_files(
            types.DidChangeWatchedFilesParams(
                changes=[types.FileEvent(uri=(pending / "mem-agent.md").as_uri(), type=types.FileChangeType.Created)]
            )
        )
    await wait_until(lambda: notes(client, "memzoi/inboxChanged"), timeout=15)


async def test_hovers_show_no_escape_characters(git_workspace: Path, client):
    """issue 28: Neovim showed `https\\://…`, `500 -\\> 300` and `\\[chg_…\\]` in hovers."""
    from .test_features import hover, pos

    packet = git_workspace / ".memzoi" / "proposals" / "pending" / "mem-new.md"
    packet.write_text(proposal_text("mem-new", title="Cut 500 -> 300 [chg_abc]"))
    uri = open_doc(client, packet)
    result = await execute(client, "memzoi.apply", {"uri": uri})
    [record] = [f["path"] for f in result["files"] if "/records/" in f["path"] and f["after"] == "present"]
    path = git_workspace / record
    text = path.read_text()
    rec_uri = open_doc(client, path)
    value = await hover(client, rec_uri, pos(text, "kind: memory", client.profile, 8))
    assert "500 -> 300" in value and "[chg_abc]" in value and "ledger history" in value
    assert "[chg_" in value.split("ledger history", 1)[1]  # the history line names its change
    for noise in ("\\:", "-\\>", "\\[", "\\]"):
        assert noise not in value, (noise, value)


def _stale(text: str, body: str) -> str:
    return builders.edit(text, "Deploy from main.", body)


@pytest.mark.parametrize("case", ["credential", "symlink"])
async def test_reattest_is_disabled_where_the_command_refuses_it(workspace: Path, tmp_path: Path, client, case):
    """Defect: Re-attest and its preview were offered enabled on a record holding a credential and on a symlinked
    record, and running them was refused. Now they are disabled with the refusal's code (or absent for a client
    that cannot show a disabled action)."""
    token = "ghp_" + "".join(chr(ord("a") + (i * 5) % 26) for i in range(36))  # built here, never printed
    attested = builders.record("deploy", title="Deploy notes", body="Deploy from main.", attested=True)
    record = workspace / ".memzoi" / "records" / "deploy.md"
    if case == "credential":
        record.write_text(_stale(attested, f"Deploy with {token} from main."))
        code = "credential_token"
    else:
        outside = tmp_path / "outside.md"
        outside.write_text(_stale(attested, "Deploy from a tag."))
        record.symlink_to(outside)
        code = "unsafe_path"
    git_init(workspace)
    uri = open_doc(client, record)
    actions = await actions_for(client, uri)
    reattests = [a for a in actions if a.title.startswith(("Re-attest", "Preview: re-attest"))]
    supports = bool(client.capabilities.text_document.code_action.disabled_support)
    assert len(reattests) == (2 if supports else 0), [a.title for a in actions]
    for a in reattests:
        assert a.disabled is not None and a.disabled.reason.startswith(code + ": "), a.disabled
        assert token not in a.disabled.reason
    before = record.read_bytes()
    refused = await refusal(
        client.workspace_execute_command_async(
            types.ExecuteCommandParams(command="memzoi.reattest", arguments=[{"uri": uri, "reason": "ok"}])
        )
    )
    assert refused["code"] == code and token not in refused["message"]
    assert record.read_bytes() == before  # nothing written


async def test_undo_refusal_names_the_later_change(git_workspace: Path, memzoi_home: Path, client, monkeypatch):
    """The server's undo refuses as the CLI does: a file a later ledgered change wrote names that change."""
    from memzoi.lifecycle import apply_proposal, propose_supersede

    monkeypatch.setenv("MEMZOI_HOME", str(memzoi_home))  # the server's ledger
    root = git_workspace
    first = apply_proposal(root, "mem-new", actor="r").change_id
    packet = propose_supersede(
        root, "prefer-server-sessions", title="Sessions live on the server", body="Keep them.", reason="x", actor="r"
    ).files[0]
    later = apply_proposal(root, Path(packet.path).name[:-3], actor="r").change_id
    refused = await refusal(
        client.workspace_execute_command_async(
            types.ExecuteCommandParams(command="memzoi.undo", arguments=[{"change_id": first}])
        )
    )
    assert refused["code"] == "undo_drift" and f"changed by {later} (apply, " in refused["message"], refused
    assert refused["message"].endswith("undo that change first")
