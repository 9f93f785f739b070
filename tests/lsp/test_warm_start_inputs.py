"""A warm start re-judges what changed while no server ran (issue 29, Show: freshness tests): the server starts
from the store its previous session left, and after each change below every file shows exactly what
``memzoi check --no-cache`` reports for it (waited for as a condition). The expectation is taken without the
verdict cache so that no ``memzoi check`` refreshes the store between two sessions: what the server shows is its
own warm start's work.

Between sessions, in turn: an edit keeping size and mtime, a rename over a file, an edit through a hard link,
``info/exclude`` plus ``git rm --cached``, ``git add -f``, a commit (which changes the explanation of a stale
attestation), a ledgered change (``memzoi proposals
apply``) and a hand edit the ledger then disagrees with. A ``[rules]`` change and ``.gitignore`` plus an untrack
are held in ``tests/lsp/test_input_freshness.py``; the tool, the configuration, corrupted payloads, the racy
window and retention in ``tests/test_warm_scan_freshness.py``."""

from __future__ import annotations

import asyncio
import os
from collections.abc import Callable
from pathlib import Path

from ..builders import edit
from ..test_admission import rec
from ..test_revision import attested
from .conftest import diagnostics, git_init, start_client
from .test_verdict_parity import _cli, _git, as_rows, check_findings


def _uncached(root: Path, home: Path) -> dict[str, list[tuple]]:
    return check_findings(root, home, "--no-cache")


def _codes(root: Path, home: Path, rel: str) -> list[str]:
    return [row[0] for row in _uncached(root, home).get(str((root / rel).resolve()), [])]


async def _session_as_check_says(root: Path, home: Path) -> None:
    """Start a server (pull diagnostics), wait until every file of ``.memzoi`` shows what ``memzoi check
    --no-cache`` reports for it, and stop it."""
    expected = _uncached(root, home)
    client = await start_client("neovim", root, home)
    try:
        for path in sorted(p for p in (root / ".memzoi").rglob("*") if p.is_file()):
            want = expected.get(str(path.resolve()), [])
            got = await diagnostics(client, path.as_uri(), until=lambda d, want=want: as_rows(d) == want, timeout=60)
            assert as_rows(got) == want, path
    finally:
        await asyncio.wait_for(client.shutdown_session(), 20)
        await client.stop()


def _keep_stat_write(path: Path, text: str, *, through: Path | None = None) -> None:
    """Write ``text`` (the same size) to ``path`` (or through the hard link ``through``) and put the mtime back."""
    st = path.stat()
    data = text.encode()
    assert len(data) == st.st_size
    target = through or path
    with open(target, "r+b") as fh:
        fh.write(data)
    os.utime(target, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert path.stat().st_size == st.st_size and path.stat().st_mtime_ns == st.st_mtime_ns


async def test_a_warm_start_follows_each_change_made_while_no_server_ran(workspace: Path, memzoi_home: Path):
    md = workspace / ".memzoi"
    reviewed = md / "records/reviewed.md"  # attested, committed, then edited: its explanation follows HEAD
    reviewed_text = attested(rec("reviewed"), "reviewed")
    reviewed.write_text(reviewed_text)
    git_init(workspace)
    reviewed.write_text(edit(reviewed_text, "Body text of reviewed", "Body text of edited"))
    node, pnpm = md / "records/use-node-22.md", md / "records/use-pnpm.md"
    link = workspace / "hard-link"
    os.link(md / "proposals/pending/mem-new.md", link)

    def same_stat_edit() -> None:
        _keep_stat_write(node, edit(node.read_text(), "type: decision", "type: decisiox"))
        assert "invalid_value" in _codes(workspace, memzoi_home, ".memzoi/records/use-node-22.md")

    def rename_over() -> None:
        st = pnpm.stat()
        tmp = workspace / "use-pnpm.tmp"
        tmp.write_text(edit(pnpm.read_text(), "type: decision", "type: decisiox"))
        os.utime(tmp, ns=(st.st_atime_ns, st.st_mtime_ns))
        os.replace(tmp, pnpm)
        assert "invalid_value" in _codes(workspace, memzoi_home, ".memzoi/records/use-pnpm.md")

    def hard_link_edit() -> None:
        packet = md / "proposals/pending/mem-new.md"
        _keep_stat_write(packet, edit(packet.read_text(), "action: create", "action: crxate"), through=link)

    def exclude_and_untrack() -> None:
        (workspace / ".git/info").mkdir(exist_ok=True)
        (workspace / ".git/info/exclude").write_text(".memzoi/records/use-pnpm.md\n")
        _git(workspace, "rm", "-q", "--cached", ".memzoi/records/use-pnpm.md")
        assert "ignored_untracked" in _codes(workspace, memzoi_home, ".memzoi/records/use-pnpm.md")

    def add() -> None:
        _git(workspace, "add", "-f", ".memzoi/records/use-pnpm.md")
        assert "ignored_untracked" not in _codes(workspace, memzoi_home, ".memzoi/records/use-pnpm.md")

    def commit() -> None:
        stale = ".memzoi/records/reviewed.md"
        before = _uncached(workspace, memzoi_home)[str((workspace / stale).resolve())]
        _git(workspace, "-c", "user.email=t@example.invalid", "-c", "user.name=t", "commit", "-q", "-am", "track")
        assert _uncached(workspace, memzoi_home)[str((workspace / stale).resolve())] != before  # HEAD explains

    def apply() -> None:
        packet = md / "proposals/pending/mem-new.md"
        packet.write_text(edit(packet.read_text(), "action: crxate", "action: create"))
        done = _cli(workspace, memzoi_home, "proposals", "apply", "mem-new", "--json")
        assert done.returncode == 0, done.stderr

    def hand_edit_of_a_ledgered_record() -> None:
        created = sorted(set((md / "records").rglob("*.md")) - {node, pnpm, reviewed})
        assert created
        created[0].write_text(created[0].read_text() + "\nEdited by hand.\n")
        assert "ledger_drift" in _codes(workspace, memzoi_home, str(created[0].relative_to(workspace)))

    changes: list[Callable[[], None]] = [
        same_stat_edit,
        rename_over,
        hard_link_edit,
        exclude_and_untrack,
        add,
        commit,
        apply,
        hand_edit_of_a_ledgered_record,
    ]
    await _session_as_check_says(workspace, memzoi_home)
    assert any(memzoi_home.rglob("memzoi-lsp-store.db"))  # the next sessions start warm
    for change in changes:
        change()
        await _session_as_check_says(workspace, memzoi_home)
