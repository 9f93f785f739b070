"""A damaged ledger in the editor: the provenance hover says the history is unavailable and points to ``memzoi
doctor`` (never "no recorded changes"), and the history view's ``memzoi.history`` is refused with
``corrupt_database``, also for damage off its query's path, never an empty or partial list shown as the history."""

from __future__ import annotations

from pathlib import Path

import pytest

from ..test_store import _damage_table as damage_table
from .conftest import git_init, open_doc, proposal_text, refusal
from .test_features import hover, pos
from .test_review_flow import execute


@pytest.fixture
def git_workspace(workspace: Path) -> Path:
    git_init(workspace)
    return workspace


async def _applied_record(client, root: Path) -> tuple[Path, Path]:
    """A record the server applied from a packet (one ledgered change), and the ledger that holds the change."""
    packet = root / ".memzoi" / "proposals" / "pending" / "mem-new.md"
    packet.write_text(proposal_text("mem-new", title="Cut 500 to 300"))
    result = await execute(client, "memzoi.apply", {"uri": open_doc(client, packet)})
    [record] = [f["path"] for f in result["files"] if "/records/" in f["path"] and f["after"] == "present"]
    [ledger] = (root.parent / "home").rglob("memzoi-lsp-ledger.db")
    return root / record, ledger


async def test_the_hover_says_a_damaged_ledgers_history_is_unavailable(git_workspace: Path, client):
    path, ledger = await _applied_record(client, git_workspace)
    text = path.read_text()
    uri = open_doc(client, path)
    assert (
        "[chg_" in (await hover(client, uri, pos(text, "kind: memory", client.profile, 8))).split("ledger history")[1]
    )
    damage_table(ledger, "change")
    value = await hover(client, uri, pos(text, "kind: memory", client.profile, 8))
    line = next(x for x in value.splitlines() if "ledger history" in x)
    assert line.startswith("- ledger history: unavailable: ") and "no recorded changes" not in value, value
    assert "is damaged" in line and "memzoi doctor" in line and "no change could be read" in line, line


@pytest.mark.parametrize("table", ["change", "change_status"])
async def test_the_history_view_is_refused_on_a_damaged_ledger(git_workspace: Path, client, table):
    _path, ledger = await _applied_record(client, git_workspace)
    assert len(await execute(client, "memzoi.history", {})) == 1
    damage_table(ledger, table)
    before = ledger.read_bytes()
    error = await refusal(execute(client, "memzoi.history", {}))
    assert error["code"] == "corrupt_database" and "memzoi doctor" in error["message"], error
    assert ledger.read_bytes() == before
