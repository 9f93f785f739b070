"""The server re-judges what each input of a verdict touches, as ``memzoi check`` would (issue 29): after each change
below, every closed file's diagnostics become what ``memzoi check`` reports for it, waited for as a condition.
While the server runs: git's info/exclude and index (``git rm --cached``), a ``[rules]`` change, ``git add``, a
commit, an edit that keeps the file's size and modification time, and the project id. At a warm start (the store of a previous
session): the project's configuration and git's index changed while no server ran."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

from lsprotocol import types

from ..builders import edit
from .conftest import diagnostics, git_init, is_pull, proposal_text, start_client, wait_until
from .test_verdict_parity import _git, as_rows, check_findings


async def _as_check_says(client, root: Path, home: Path) -> None:
    """Wait until every file of ``root``'s ``.memzoi`` shows exactly what ``memzoi check`` reports for it."""
    expected = check_findings(root, home)
    for path in sorted(p for p in (root / ".memzoi").rglob("*") if p.is_file()):
        uri = path.as_uri()
        want = expected.get(str(path.resolve()), [])
        if want or is_pull(client):
            got = await diagnostics(client, uri, until=lambda d, want=want: as_rows(d) == want, timeout=30)
            assert as_rows(got) == want, path
        else:  # push: a clean file is one never published, or published empty
            await wait_until(lambda uri=uri: not client.diagnostics.get(uri), timeout=30)


def _codes(root: Path, home: Path, name: str) -> list[str]:
    return [row[0] for row in check_findings(root, home).get(str((root / ".memzoi/records" / name).resolve()), [])]


async def test_closed_files_follow_git_config_and_same_stat_edits(client, workspace: Path, memzoi_home: Path):
    git_init(workspace)
    records = workspace / ".memzoi" / "records"
    await _as_check_says(client, workspace, memzoi_home)
    # git's info/exclude and its index: the record is now untracked and ignored.
    (workspace / ".git" / "info").mkdir(exist_ok=True)
    (workspace / ".git" / "info" / "exclude").write_text(".memzoi/records/use-pnpm.md\n")
    _git(workspace, "rm", "-q", "--cached", ".memzoi/records/use-pnpm.md")
    assert "ignored_untracked" in _codes(workspace, memzoi_home, "use-pnpm.md")
    await _as_check_says(client, workspace, memzoi_home)
    # [rules]: disabling the code is refused (Memzoi refuses the file), then the setting is removed again.
    config = workspace / ".memzoi" / "config.toml"
    config.write_text('[rules]\ndisabled = ["ignored_untracked"]\n')
    assert "ignored_untracked" in _codes(workspace, memzoi_home, "use-pnpm.md")
    # no file event for it: the server's own look at its inputs publishes config.toml's invalid_config as well
    await _as_check_says(client, workspace, memzoi_home)
    config.write_text("")
    # git add (forced past info/exclude) and a commit: tracked again.
    _git(workspace, "add", "-f", ".memzoi/records/use-pnpm.md")
    assert "ignored_untracked" not in _codes(workspace, memzoi_home, "use-pnpm.md")
    await _as_check_says(client, workspace, memzoi_home)
    _git(workspace, "commit", "-q", "--allow-empty", "-m", "A commit: HEAD moves")
    await _as_check_says(client, workspace, memzoi_home)
    # An edit that keeps the size and the modification time (rsync -t, cp -p).
    path = records / "use-node-22.md"
    st = path.stat()
    path.write_text(edit(path.read_text(), "type: decision", "type: decisiox"))
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert path.stat().st_size == st.st_size and path.stat().st_mtime_ns == st.st_mtime_ns
    if client.registrations:  # the client watches files: it reports the change
        client.workspace_did_change_watched_files(
            types.DidChangeWatchedFilesParams(
                changes=[types.FileEvent(uri=path.as_uri(), type=types.FileChangeType.Changed)]
            )
        )
    assert "invalid_value" in _codes(workspace, memzoi_home, "use-node-22.md")
    await _as_check_says(client, workspace, memzoi_home)
    # The project id: a packet scoped to project `demo` is refused until the configuration names it.
    packet = workspace / ".memzoi" / "proposals" / "pending" / "mem-scoped.md"
    packet.write_text(
        edit(proposal_text("mem-scoped"), "scope:\n  kind: repo\n", "scope:\n  kind: project\n  id: demo\n")
    )
    if client.registrations:
        client.workspace_did_change_watched_files(
            types.DidChangeWatchedFilesParams(
                changes=[types.FileEvent(uri=packet.as_uri(), type=types.FileChangeType.Created)]
            )
        )
    await _as_check_says(client, workspace, memzoi_home)
    for project_id in ("demo", "other"):
        config.write_text(f'[project]\nid = "{project_id}"\n')
        refused = check_findings(workspace, memzoi_home).get(str(packet.resolve()), [])
        assert any(r[0] == "scope_project_mismatch" for r in refused) == (project_id == "other")
        await _as_check_says(client, workspace, memzoi_home)


async def test_a_warm_start_follows_what_changed_while_no_server_ran(workspace: Path, memzoi_home: Path):
    git_init(workspace)
    for round_ in range(2):
        client = await start_client("neovim", workspace, memzoi_home)
        try:
            await _as_check_says(client, workspace, memzoi_home)
        finally:
            await asyncio.wait_for(client.shutdown_session(), 10)
            await client.stop()
        if round_ == 0:  # between the sessions: a [rules] severity, and a record untracked and ignored
            (workspace / ".memzoi" / "config.toml").write_text('[rules]\nseverity = { ignored_untracked = "hint" }\n')
            (workspace / ".gitignore").write_text(".memzoi/records/use-pnpm.md\n")
            _git(workspace, "rm", "-q", "--cached", ".memzoi/records/use-pnpm.md")
            assert "ignored_untracked" in _codes(workspace, memzoi_home, "use-pnpm.md")
