"""The editor on a fresh checkout at the path of a deleted one: no ``ledger_drift`` from the deleted checkout's
ledger, which the server sets aside (whole) as it starts, the way ``memzoi check`` and the MCP tools read it."""

from __future__ import annotations

import shutil
from pathlib import Path

from memzoi import ledger as L
from memzoi.base.checkout import set_aside_ledgers
from memzoi.lifecycle import apply_proposal

from .conftest import diagnostics, git_init, start_client, stop_client, wait_until

PACKET = ".memzoi/proposals/pending/mem-new.md"


async def test_a_reclone_shows_no_ledger_drift_and_the_old_ledger_is_set_aside(
    workspace: Path, memzoi_home: Path, monkeypatch
):
    root = workspace
    monkeypatch.setenv("MEMZOI_HOME", str(memzoi_home))
    git_init(root)
    files = {p.relative_to(root): p.read_bytes() for p in root.rglob("*") if p.is_file() and ".git" not in p.parts}
    old = apply_proposal(root, "mem-new", actor="ada").change_id
    record = next(
        p for p in (root / ".memzoi" / "records").iterdir() if p.name not in {"use-pnpm.md", "use-node-22.md"}
    )
    files[record.relative_to(root)] = record.read_bytes()
    # The repository is deleted and cloned again at its path, from a commit that has both the packet and the record.
    shutil.rmtree(root)
    for rel, data in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_bytes(data)
    git_init(root)
    lsp = await start_client("vscode", root, memzoi_home)
    try:
        found = await diagnostics(lsp, (root / PACKET).as_uri(), lambda d: any(x.code == "record_exists" for x in d))
        assert not [d for d in found if str(d.code).startswith("ledger_")], found
        [aside] = await wait_until(lambda: set_aside_ledgers(root))  # the start-up reconciliation is a writer
        assert L.history(root) == []
        found = await diagnostics(lsp, record.as_uri())
        assert not [d for d in found if str(d.code).startswith("ledger_")], found
    finally:
        await stop_client(lsp)
    assert aside.path.is_file() and old not in {c.id for c in L.history(root)}
