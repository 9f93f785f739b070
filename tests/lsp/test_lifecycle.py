"""Lifecycle code actions end to end on a temporary git workspace, for both client profiles: each action is
found with textDocument/codeAction, run through workspace/executeCommand, checked on the file system, and
undone through the Undo action the server then offers."""

from __future__ import annotations

from pathlib import Path

import pytest
from lsprotocol import types

from ..builders import edit
from .conftest import git_init, open_doc, proposal_text, refusal


def snapshot(root: Path) -> dict[str, bytes]:
    """Every file under ``.memzoi`` with its bytes."""
    base = root / ".memzoi"
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(base.rglob("*")) if p.is_file()}


async def actions_for(client, uri: str, only: list[str] | None = None) -> list[types.CodeAction]:
    res = await client.text_document_code_action_async(
        types.CodeActionParams(
            text_document=types.TextDocumentIdentifier(uri=uri),
            range=types.Range(start=types.Position(line=0, character=0), end=types.Position(line=0, character=0)),
            context=types.CodeActionContext(diagnostics=[], only=only),
        )
    )
    return [a for a in res or [] if isinstance(a, types.CodeAction)]


async def run(client, action: types.CodeAction, **extra):
    """Execute an action's command the way an editor does (clients add the prompted reason)."""
    args = [dict(action.command.arguments[0], **extra)]
    return await client.workspace_execute_command_async(
        types.ExecuteCommandParams(command=action.command.command, arguments=args)
    )


def find(actions, prefix: str) -> types.CodeAction:
    matches = [a for a in actions if a.title.startswith(prefix)]
    assert matches, [a.title for a in actions]
    return matches[0]


async def undo_via_action(client, path: Path, before: dict[str, bytes], root: Path) -> None:
    """Open ``path``, take its Undo action, run it, and check the tree is back to ``before``."""
    uri = open_doc(client, path)
    undo = find(await actions_for(client, uri, ["refactor.rewrite.memzoi.undo"]), "Undo ")
    # the label names the change it undoes: the full id (time-ordered ids share any short prefix)
    assert undo.title.endswith(f"({undo.command.arguments[0]['change_id']})"), undo.title
    result = await run(client, undo)
    assert result["status"] == "undone", result
    assert snapshot(root) == before


@pytest.fixture
def git_workspace(workspace: Path) -> Path:
    git_init(workspace)
    return workspace


async def test_apply_proposal_then_undo(git_workspace: Path, client):
    root = git_workspace
    before = snapshot(root)
    packet = root / ".memzoi" / "proposals" / "pending" / "mem-new.md"
    uri = open_doc(client, packet)
    actions = await actions_for(client, uri)
    kinds = {a.kind for a in actions}
    assert {
        "refactor.rewrite.memzoi.apply",
        "refactor.rewrite.memzoi.reject",
    } <= kinds and "refactor.rewrite.memzoi.routeLocal" not in kinds
    assert await actions_for(client, uri, ["quickfix"]) == []  # context.only honoured
    # VS Code's Source Action… asks for `source` only: the same actions, under source.memzoi.*
    assert {a.kind for a in await actions_for(client, uri, ["source"])} == {
        k.replace("refactor.rewrite", "source") for k in kinds
    }
    # tied to a Memzoi diagnostic of the request (Ctrl+. on a problem): quick fixes carrying that diagnostic
    diag = types.Diagnostic(
        range=types.Range(start=types.Position(line=0, character=0), end=types.Position(line=0, character=3)),
        message="m",
        source="memzoi",
        code="proposal_target_stale",
    )
    tied = await client.text_document_code_action_async(
        types.CodeActionParams(
            text_document=types.TextDocumentIdentifier(uri=uri),
            range=diag.range,
            context=types.CodeActionContext(diagnostics=[diag], only=["quickfix"]),
        )
    )
    assert {a.kind for a in tied} == {
        "quickfix.memzoi.review",
        "quickfix.memzoi.apply",
        "quickfix.memzoi.reject",
        "quickfix.memzoi.preview",
    }
    assert all(a.diagnostics and a.diagnostics[0].code == "proposal_target_stale" for a in tied)
    planned = await run(client, find(actions, "Preview: apply"))
    assert snapshot(root) == before  # a preview writes nothing
    assert planned["operation"] == "apply"
    result = await run(client, find(actions, "Apply proposal"))
    assert result["status"] == "applied", result
    assert {f["path"] for f in planned["files"]} == {f["path"] for f in result["files"]}
    assert all(f["uri"].startswith("file://") for f in planned["files"])
    paths = {f["path"]: (f["before"], f["after"]) for f in result["files"]}
    assert paths[".memzoi/proposals/pending/mem-new.md"] == ("present", "absent")
    assert paths[".memzoi/proposals/resolved/applied/mem-new.md"] == ("absent", "present")
    [record] = [p for p, (b, a) in paths.items() if p.startswith(".memzoi/records/") and b == "absent"]
    assert not packet.exists() and (root / record).is_file()
    assert "status: applied" in (root / ".memzoi/proposals/resolved/applied/mem-new.md").read_text()
    # the new record is indexed at once: workspace symbols find it without any watcher event
    res = await client.workspace_symbol_async(types.WorkspaceSymbolParams(query="Prefer server sessions"))
    assert any(s.location.uri.endswith(record) for s in res)
    await undo_via_action(client, root / record, before, root)


async def test_reject_requires_reason_then_moves_packet(git_workspace: Path, client):
    root = git_workspace
    before = snapshot(root)
    packet = root / ".memzoi" / "proposals" / "pending" / "mem-new.md"
    uri = open_doc(client, packet)
    reject = find(await actions_for(client, uri, ["source"]), "Reject proposal")
    refused = await refusal(run(client, reject))
    assert refused["code"] == "reason_required" and snapshot(root) == before
    result = await run(client, reject, reason="duplicate of an existing record")
    assert result["status"] == "applied", result
    rejected = root / ".memzoi" / "proposals" / "resolved" / "rejected" / "mem-new.md"
    assert rejected.is_file() and not packet.exists()
    assert "duplicate of an existing record" in rejected.read_text()
    await undo_via_action(client, rejected, before, root)


async def test_supersede_creates_packet_shown_and_indexed(git_workspace: Path, client):
    root = git_workspace
    before = snapshot(root)
    record = root / ".memzoi" / "records" / "use-node-22.md"
    uri = open_doc(client, record)
    actions = await actions_for(client, uri)
    assert {"refactor.rewrite.memzoi.supersede", "refactor.rewrite.memzoi.tombstone"} <= {a.kind for a in actions}
    # Keeping the record's title (what an empty title prompt gives) makes a replacement with the target's own
    # record id, which Memzoi can never apply: refused when proposed, nothing written (trial 2).
    kept = await refusal(run(client, find(actions, "Supersede record"), reason="Node 24 is the new LTS"))
    assert kept["code"] == "record_exists" and snapshot(root) == before
    result = await run(client, find(actions, "Supersede record"), reason="Node 24 is the new LTS", title="Use Node 24")
    assert result["status"] == "applied", result
    [created] = [f["path"] for f in result["files"] if f["before"] == "absent"]
    assert created.startswith(".memzoi/proposals/pending/")
    text = (root / created).read_text()
    assert "action: supersede" in text and "use-node-22" in text
    assert [d.uri for d in client.shown_documents] == [(root / created).as_uri()]
    assert record.read_bytes() == before[".memzoi/records/use-node-22.md"]  # a proposal, not an edit
    await undo_via_action(client, root / created, before, root)


async def test_preview_supersede_and_tombstone_ask_what_the_change_would(git_workspace: Path, client):
    root = git_workspace
    before = snapshot(root)
    uri = open_doc(client, root / ".memzoi" / "records" / "use-node-22.md")
    actions = await actions_for(client, uri)
    sup, tomb = find(actions, "Preview: supersede record…"), find(actions, "Preview: tombstone record…")
    assert (await refusal(run(client, sup)))["code"] == "reason_required"  # clients prompt for it first
    planned = await run(client, sup, reason="Node 24 is the new LTS", title="Use Node 24")
    [packet] = planned["files"]
    assert (
        packet["before"] is None and "\n# Use Node 24\n" in packet["after"] and "action: supersede" in packet["after"]
    )
    planned = await run(client, tomb, reason="obsolete")
    assert "action: tombstone" in planned["files"][0]["after"]
    assert snapshot(root) == before  # previews write nothing


async def test_tombstone_creates_packet_then_undo(git_workspace: Path, client):
    root = git_workspace
    before = snapshot(root)
    record = root / ".memzoi" / "records" / "use-pnpm.md"
    uri = open_doc(client, record)
    result = await run(client, find(await actions_for(client, uri), "Tombstone record"), reason="obsolete")
    assert result["status"] == "applied", result
    [created] = [f["path"] for f in result["files"] if f["before"] == "absent"]
    assert "action: tombstone" in (root / created).read_text()
    assert client.shown_documents[-1].uri == (root / created).as_uri()
    await undo_via_action(client, root / created, before, root)


async def test_route_to_local_memory_when_gate_blocks(git_workspace: Path, client):
    root = git_workspace
    packet = root / ".memzoi" / "proposals" / "pending" / "mem-local.md"
    packet.write_text(edit(proposal_text("mem-local"), "sensitivity: repo-safe", "sensitivity: local-only"))
    before = snapshot(root)
    uri = open_doc(client, packet)
    actions = await actions_for(client, uri)
    route = find(actions, "Route to local memory")
    apply = [a for a in actions if a.kind == "refactor.rewrite.memzoi.apply"]
    assert all(
        a.disabled and "sensitivity_not_repo_safe" in a.disabled.reason for a in apply
    )  # disabled with the reason, or absent
    result = await run(client, route)
    assert result["status"] == "applied", result
    assert not packet.exists()
    history = await client.workspace_execute_command_async(
        types.ExecuteCommandParams(command="memzoi.history", arguments=[{}])
    )
    assert history[0]["operation"] and history[0]["source"] == "editor"
    undo = await client.workspace_execute_command_async(
        types.ExecuteCommandParams(command="memzoi.undo", arguments=[{"change_id": result["change_id"]}])
    )
    assert undo["status"] == "undone" and snapshot(root) == before


async def test_lifecycle_refuses_unsaved_document(git_workspace: Path, client):
    root = git_workspace
    before = snapshot(root)
    packet = root / ".memzoi" / "proposals" / "pending" / "mem-new.md"
    uri = open_doc(client, packet, edit(packet.read_text(), "Validate sessions", "Validate all sessions"))
    apply = [a for a in await actions_for(client, uri) if a.kind == "refactor.rewrite.memzoi.apply"]
    assert all(a.disabled and "save" in a.disabled.reason for a in apply)
    result = await refusal(
        client.workspace_execute_command_async(
            types.ExecuteCommandParams(command="memzoi.apply", arguments=[{"uri": uri}])
        )
    )
    assert result["code"] == "unsaved_changes"
    assert snapshot(root) == before


async def test_code_lenses_on_pending_and_superseded(git_workspace: Path, client):
    root = git_workspace
    puri = open_doc(client, root / ".memzoi" / "proposals" / "pending" / "mem-new.md")
    lenses = await client.text_document_code_lens_async(
        types.CodeLensParams(text_document=types.TextDocumentIdentifier(uri=puri))
    )
    assert [(l.command.title, l.command.command) for l in lenses] == [
        ("Apply", "memzoi.apply"),
        ("Reject…", "memzoi.reject"),
    ]
    ruri = open_doc(client, root / ".memzoi" / "records" / "use-pnpm.md")
    lenses = await client.text_document_code_lens_async(
        types.CodeLensParams(text_document=types.TextDocumentIdentifier(uri=ruri))
    )
    assert [l.command.title for l in lenses] == ["Superseded by use-node-22"]


async def test_workspace_commands_search_rebuild_doctor_check(git_workspace: Path, client):
    def cmd(name, *args):
        return client.workspace_execute_command_async(types.ExecuteCommandParams(command=name, arguments=list(args)))

    hits = await cmd("memzoi.search", "pnpm")
    assert [h["id"] for h in hits] == ["use-pnpm"] and hits[0]["uri"].endswith("/.memzoi/records/use-pnpm.md")
    rebuilt = await cmd("memzoi.rebuild", {})
    assert (rebuilt["records"], rebuilt["proposals"]) == (2, 1)
    report = await cmd("memzoi.doctor", {})
    assert {c["name"]: c["status"] for c in report["checks"]}.get("repo_index") == "ok", report
    checked = await cmd("memzoi.checkWorkspace", {})
    assert checked["files_checked"] == 3 and checked["counts"]["error"] == 0
    # A record written behind the server's back is found through the index once the watcher reports it.
    extra = git_workspace / ".memzoi" / "records" / "use-corepack.md"
    from .conftest import record_text

    extra.write_text(record_text("use-corepack", "Use corepack shims"))
    if client.registrations:
        client.workspace_did_change_watched_files(
            types.DidChangeWatchedFilesParams(
                changes=[types.FileEvent(uri=extra.as_uri(), type=types.FileChangeType.Created)]
            )
        )
    found = await wait_until_async(lambda: cmd("memzoi.search", "corepack"))
    assert [h["id"] for h in found] == ["use-corepack"]


async def wait_until_async(fn, timeout: float = 10.0):
    import asyncio
    import time

    deadline = time.monotonic() + timeout
    while True:
        value = await fn()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError("condition not met")
        await asyncio.sleep(0.05)


async def test_materialize_plan_decide_apply_then_reattest_and_undo(git_workspace: Path, client):
    from memzoi.lifecycle.materialize_candidate import build_candidate

    from .conftest import diagnostics, record_text

    root = git_workspace
    drafts = root / "drafts"
    drafts.mkdir()
    draft = record_text("lint-before-commit", "Lint before commit")
    candidate = build_candidate(root, draft)
    import json

    cand = drafts / "lint.json"
    cand.write_text(json.dumps(candidate, indent=2) + "\n")
    before = snapshot(root)

    async def step(path: Path, title: str):
        uri = open_doc(client, path)
        [action] = [
            a
            for a in await actions_for(client, uri, ["refactor.rewrite.memzoi.materialize"])
            if a.title.startswith(title)
        ]
        return await run(client, action)

    planned = await step(cand, "Plan materialization")
    assert (drafts / "lint.plan.json").is_file() and planned["plan_id"].startswith("blake3:")
    decided = await step(drafts / "lint.plan.json", "Decide")
    assert (drafts / "lint.decision.json").is_file() and decided["decision_id"].startswith("blake3:")
    result = await step(drafts / "lint.decision.json", "Materialize")
    assert result["status"] == "applied", result
    record = root / ".memzoi" / "records" / "lint-before-commit.md"
    text = record.read_text()
    assert "materialization:" in text and "revision_hash" in text
    assert client.shown_documents[-1].uri == record.as_uri()
    # A hand edit makes the attestation stale; Re-attest accepts it as one ledgered change.
    record.write_text(edit(text, "applies to every package task.", "applies to every commit."))
    uri = open_doc(client, record)
    await diagnostics(client, uri, lambda d: any(x.code == "stale_attestation" for x in d))
    reattest = find(await actions_for(client, uri, ["refactor.rewrite.memzoi.reattest"]), "Re-attest")
    res = await run(client, reattest, reason="wording fix reviewed")
    assert res["status"] == "applied", res
    client.text_document_did_close(
        types.DidCloseTextDocumentParams(text_document=types.TextDocumentIdentifier(uri=uri))
    )
    uri = open_doc(client, record, version=3)
    await diagnostics(client, uri, lambda d: not any(x.code == "stale_attestation" for x in d))
    undo = await client.workspace_execute_command_async(
        types.ExecuteCommandParams(command="memzoi.undo", arguments=[{"change_id": res["change_id"]}])
    )
    assert undo["status"] == "undone"
    assert "applies to every commit." in record.read_text()  # back to the hand-edited (stale) state
    undo = await refusal(
        client.workspace_execute_command_async(
            types.ExecuteCommandParams(command="memzoi.undo", arguments=[{"change_id": result["change_id"]}])
        )
    )
    assert undo["code"], undo  # refused: the record was edited after materialize
    client.text_document_did_close(
        types.DidCloseTextDocumentParams(text_document=types.TextDocumentIdentifier(uri=uri))
    )
    record.write_text(text)
    undo = await client.workspace_execute_command_async(
        types.ExecuteCommandParams(command="memzoi.undo", arguments=[{"change_id": result["change_id"]}])
    )
    assert undo.get("status") == "undone" and not record.exists(), undo
    after = snapshot(root)
    assert after == before


CRASH = r"""
import os, sys
from pathlib import Path
from memzoi import ledger as L
root = Path(sys.argv[1])
rel_a, rel_b = ".memzoi/records/use-pnpm.md", ".memzoi/records/use-bun.md"
before_a = (root / rel_a).read_bytes()
after_a = before_a.replace(b"applies to every package task.", b"applies to every package task, via corepack.")
after_b = (root / ".memzoi/records/use-node-22.md").read_bytes().replace(b"use-node-22", b"use-bun").replace(
    b"Use Node 22", b"Use bun")
def hook(step):
    if step == "apply:file0:done":
        os._exit(77)  # the process dies after the first of two files was written
L.set_fault_hook(hook)
L.run_change(root, lambda r: L.ChangePlan("edit", [L.FileChange(rel_a, before_a, after_a),
                                                    L.FileChange(rel_b, None, after_b)]), actor="crashy")
"""


def crash_mid_change(root: Path, home: Path, script: str = CRASH) -> None:
    """Run ``script`` (:data:`CRASH` by default) in a process of its own, which dies with status 77 in the middle of
    a change: the change stays ``applying``, its first file written."""
    import os
    import subprocess
    import sys

    proc = subprocess.run(
        [sys.executable, "-c", script, str(root)],
        env={**os.environ, "MEMZOI_HOME": str(home)},
        capture_output=True,
        stdin=subprocess.DEVNULL,
    )
    assert proc.returncode == 77, proc.stderr


async def test_recover_uncertain_change_from_ledger_diagnostic(git_workspace: Path, memzoi_home: Path, client):
    from .conftest import diagnostics

    root = git_workspace
    before = snapshot(root)
    crash_mid_change(root, memzoi_home)
    settled = await client.workspace_execute_command_async(
        types.ExecuteCommandParams(command="memzoi.reconcile", arguments=[{}])
    )
    assert [s["status"] for s in settled] == ["uncertain"]
    record = root / ".memzoi" / "records" / "use-pnpm.md"
    uri = open_doc(client, record)
    diags = await diagnostics(client, uri, lambda d: any(x.code == "ledger_uncertain" for x in d))
    [d] = [x for x in diags if x.code == "ledger_uncertain"]
    assert d.severity == types.DiagnosticSeverity.Warning and settled[0]["change_id"][:12] in d.message
    actions = await actions_for(client, uri, ["refactor.rewrite.memzoi.recover"])
    assert len(actions) == 3
    result = await run(client, find(actions, f"Recover {settled[0]['change_id']}: restore"))
    assert result["status"] == "applied", result
    assert snapshot(root) == before
    client.text_document_did_close(
        types.DidCloseTextDocumentParams(text_document=types.TextDocumentIdentifier(uri=uri))
    )
    uri = open_doc(client, record, version=2)
    await diagnostics(client, uri, lambda d: not any(x.code == "ledger_uncertain" for x in d))


async def test_check_workspace_picks_up_files_no_watcher_reported(git_workspace: Path, client):
    from .conftest import record_text

    stray = git_workspace / ".memzoi" / "records" / "stray.md"
    stray.write_text(edit(record_text("stray", "Stray"), "lane: semantic", "lane: lost"))
    result = await client.workspace_execute_command_async(
        types.ExecuteCommandParams(command="memzoi.checkWorkspace", arguments=[])
    )
    assert result["files_checked"] == 4 and result["counts"]["error"] == 1
    res = await client.workspace_symbol_async(types.WorkspaceSymbolParams(query="Stray"))
    assert [s.container_name for s in res] == ["stray"]  # rescanned and indexed by the command itself


async def test_files_gone_from_disk_leave_the_problems_even_when_open(git_workspace: Path, client):
    from .conftest import diagnostics

    root = git_workspace
    packet = root / ".memzoi" / "proposals" / "pending" / "mem-new.md"
    puri = open_doc(client, packet)
    result = await run(client, find(await actions_for(client, puri), "Apply proposal"))
    [record] = [
        f["path"] for f in result["files"] if f["path"].startswith(".memzoi/records/") and f["before"] == "absent"
    ]
    ruri = open_doc(client, root / record)  # the editor keeps both tabs open
    # the applied record and the resolved packet share their content: the record says so while both exist
    await diagnostics(client, ruri, lambda d: any(x.code == "duplicate_content" for x in d) or not d)
    undone = await client.workspace_execute_command_async(
        types.ExecuteCommandParams(command="memzoi.undo", arguments=[{"change_id": result["change_id"]}])
    )
    assert undone["status"] == "undone"
    assert {(f["path"], f["before"], f["after"]) for f in undone["files"]} >= {(record, "present", "absent")}
    # the record's file is gone: no problems for it, and the restored packet is not its duplicate
    await diagnostics(client, ruri, lambda d: d == [])
    restored = await diagnostics(client, puri, lambda d: True)
    assert not any(x.code == "duplicate_content" for x in restored), restored
