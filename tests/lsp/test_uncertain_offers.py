"""While a change is uncertain, the editor offers no new change of its files (SPEC §6): a process killed half-way
through a change of a record and a pending packet leaves it in flight, the server reconciles it as it starts, and
then Apply, Reject, Supersede and Tombstone of those files are disabled with the ledger's reason (or left out for a
client that cannot show a disabled action), the ledger refuses them if asked anyway, and the Recover actions stay."""

from __future__ import annotations

from pathlib import Path

import pytest
from lsprotocol import types

from memzoi import ledger as L

from .conftest import PROFILES, diagnostics, git_init, open_doc, refusal, start_client, stop_client, wait_until
from .test_features import hover, pos
from .test_lifecycle import actions_for, crash_mid_change, snapshot

PACKET = ".memzoi/proposals/pending/mem-new.md"
RECORD = ".memzoi/records/use-pnpm.md"
#: A change that edits the record and removes the packet; its process dies once the record is written.
CRASH = r"""
import os, sys
from pathlib import Path
from memzoi import ledger as L
root = Path(sys.argv[1])
record, packet = ".memzoi/records/use-pnpm.md", ".memzoi/proposals/pending/mem-new.md"
before = (root / record).read_bytes()
def hook(step):
    if step == "apply:file0:done":
        os._exit(77)
L.set_fault_hook(hook)
L.run_change(root, lambda r: L.ChangePlan("edit", [
    L.FileChange(record, before, before.replace(b"every package task.", b"every package task, via corepack.")),
    L.FileChange(packet, (root / packet).read_bytes(), None)]), actor="crashy")
"""
NEW_CHANGES = ("Apply proposal", "Reject proposal", "Supersede record", "Tombstone record") + tuple(
    f"Preview: {op}" for op in ("apply", "supersede", "tombstone")
)


@pytest.mark.parametrize("profile", list(PROFILES))
async def test_new_changes_of_an_uncertain_changes_files_are_disabled_with_its_reason(
    workspace: Path, memzoi_home: Path, monkeypatch, profile
):
    root = workspace
    git_init(root)
    monkeypatch.setenv("MEMZOI_HOME", str(memzoi_home))
    crash_mid_change(root, memzoi_home, CRASH)
    [change] = L.history(root)
    lsp = await start_client(profile, root, memzoi_home)
    try:
        await wait_until(lambda: L.history(root)[0].status == "uncertain")
        reason = f"uncertain_change: change {change.id} (edit)"
        supports = bool(lsp.capabilities.text_document.code_action.disabled_support)
        on_disk = snapshot(root)
        for rel in (PACKET, RECORD):
            uri = open_doc(lsp, root / rel)
            actions = await actions_for(lsp, uri)
            blocked = [a for a in actions if a.title.startswith(NEW_CHANGES)]
            if supports:
                expected = 3 if rel == PACKET else 4  # Apply, its preview, Reject | Supersede, Tombstone, previews
                assert len(blocked) == expected, [a.title for a in actions]
                for a in blocked:
                    assert a.disabled is not None and reason in a.disabled.reason, (a.title, a.disabled)
                    assert f"memzoi reconcile --recover {change.id}" in a.disabled.reason
            else:
                assert blocked == [], [a.title for a in blocked]
            recover = [a for a in actions if a.title.startswith(f"Recover {change.id}")]
            assert len(recover) == 3 and all(a.disabled is None for a in recover)
        lenses = await lsp.text_document_code_lens_async(
            types.CodeLensParams(text_document=types.TextDocumentIdentifier(uri=(root / PACKET).as_uri()))
        )
        titles = [lens.command.title for lens in lenses if lens.command is not None]
        assert "Reject…" not in titles and any(t.startswith("Cannot apply") and "uncertain_change" in t for t in titles)
        refused = await refusal(
            lsp.workspace_execute_command_async(
                types.ExecuteCommandParams(
                    command="memzoi.reject", arguments=[{"uri": (root / PACKET).as_uri(), "reason": "no"}]
                )
            )
        )
        assert refused["code"] == "uncertain_change" and change.id in refused["message"]
        assert snapshot(root) == on_disk  # nothing written
    finally:
        await stop_client(lsp)


async def test_the_hover_shows_a_change_a_dead_process_left_in_flight_as_its_diagnostics_do(
    workspace: Path, memzoi_home: Path, monkeypatch, client
):
    # The process dies after the server started, so no start-up reconciliation settles the change: the ledger still
    # says `applying`, and the hover's history line says what the diagnostics and actions say (uncertain).
    root = workspace
    monkeypatch.setenv("MEMZOI_HOME", str(memzoi_home))
    crash_mid_change(root, memzoi_home, CRASH)
    [change] = L.history(root)
    uri = open_doc(client, root / RECORD)
    found = await diagnostics(client, uri, lambda d: any(x.code == "ledger_uncertain" for x in d))
    assert any(change.id in str(d.message) for d in found)
    text = (root / RECORD).read_text(encoding="utf-8")
    value = await hover(client, uri, pos(text, "kind: memory", client.profile, 8))
    [line] = [x for x in value.split("ledger history", 1)[1].splitlines() if change.id in x]
    assert "edit uncertain by crashy" in line and "applying" not in line, line
    assert L.history(root)[0].status == "applying"  # read-only: nothing was reconciled for the hover
