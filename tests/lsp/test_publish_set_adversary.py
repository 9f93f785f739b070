"""Warm starts of the stored publish set (issue 29) after one change between two push sessions, as users make
them: every diagnostic the second session publishes (its whole history) is compared with ``memzoi check
--no-cache``. A change that moves a cross-file finding (a copy over a record, a duplicate id) is judged, not
replayed; there the scan publishes a file before its cross-file findings are known (they follow when the scan is
done), so only what each file shows at the end is compared. A rule of the user's global excludes file
(``core.excludesFile``, by default ``$XDG_CONFIG_HOME/git/ignore``) was not an input of the set, and its warm start
replayed a set without the ``ignored_untracked`` the rule makes (:mod:`memzoi.project.gitexcludes`). Also: the
``disabled`` setting, two servers at once, a server killed as it stores its set, the records folder replaced by a
symlink. Each project holds a credential built at run time; no file of the runtime plane holds its bytes."""

from __future__ import annotations

import asyncio
import shutil
import signal
from collections.abc import Callable
from pathlib import Path

import pytest

from ..builders import edit
from .conftest import record_text, start_client, wait_until
from .test_publish_set import REPLAYED, _project, assert_never_stale, expected, session
from .test_verdict_parity import _cli, _git, _token


def _with_secret(tmp_path: Path) -> Path:
    """:func:`.test_publish_set._project` with a record holding a credential built at run time."""
    root = _project(tmp_path)
    leaky = root / ".memzoi/records/leaky.md"
    leaky.write_text(edit(record_text("leaky", "Leaky"), "applies to every package task.", f"deploy with {_token()}."))
    _git(root, "add", "-A")
    return root


def _no_secret_in_store(home: Path) -> None:
    """No file of the runtime plane (the store, its WAL) holds a byte of the credential (never printed)."""
    secret = _token().encode()
    assert not any(secret in p.read_bytes() for p in home.rglob("*") if p.is_file()), "the credential was stored"


def _untracked(root: Path) -> Path:
    local = root / ".memzoi/records/local-only.md"
    local.write_text(record_text("local-only", "Local only"))
    return local


def _global_excludes(root: Path) -> None:
    (root.parent / "xdg/git").mkdir(parents=True)
    (root.parent / "xdg/git/ignore").write_text("local-only.md\n")  # git's default core.excludesFile


def _repo_config_excludes(root: Path) -> None:
    ignore = root.parent / "repo-ignore"
    ignore.write_text("local-only.md\n")
    with (root / ".git/config").open("a") as f:
        f.write(f"[core]\n\texcludesFile = {ignore}\n")


def _cp_p(root: Path) -> None:
    records = root / ".memzoi/records"
    shutil.copy2(records / "bad-schema.md", records / "use-pnpm.md")


def _checkout(root: Path) -> None:
    _git(root, "checkout", "-q", "other")


def _stash(root: Path) -> None:
    _git(root, "stash", "-q")


def _delete_superseded(root: Path) -> None:
    (root / ".memzoi/records/use-pnpm.md").unlink()


def _duplicate(root: Path) -> None:
    (root / ".memzoi/records/twin.md").write_text(record_text("use-pnpm"))


def _symlink(root: Path) -> None:
    target = root.parent / "elsewhere.md"
    record = root / ".memzoi/records/use-pnpm.md"
    shutil.copy2(record, target)
    record.unlink()
    record.symlink_to(target)


def _rename_folder(root: Path) -> None:
    (root / ".memzoi/records/team").rename(root / ".memzoi/records/crew")


def _tombstone(root: Path) -> None:
    out = _cli(root, root.parent / "home", "tombstone", "use-node-22", "--reason", "obsolete")
    assert out.returncode == 0, out.stdout + out.stderr


#: change -> (the change, whether it moves a finding, whether it moves a cross-file finding)
CHANGES: dict[str, tuple[Callable[[Path], None], bool, bool]] = {
    "global_excludes": (_global_excludes, True, False),
    "repo_config_excludes": (_repo_config_excludes, True, False),
    "subfolder_gitignore": (lambda r: (r / ".memzoi/records/.gitignore").write_text("local-only.md\n"), True, False),
    "info_exclude": (lambda r: (r / ".git/info/exclude").write_text("local-only.md\n"), True, False),
    "cp_p": (_cp_p, True, True),
    "checkout": (_checkout, True, False),
    "stash": (_stash, True, False),
    "delete_superseded": (_delete_superseded, True, False),
    "duplicate_id": (_duplicate, True, True),
    "symlink": (_symlink, True, False),
    "rename_folder": (_rename_folder, True, False),
    "tombstone": (_tombstone, False, False),
}


@pytest.mark.parametrize("change", sorted(CHANGES))
async def test_a_change_between_sessions_is_never_replayed_stale(
    tmp_path: Path, memzoi_home: Path, change: str, monkeypatch: pytest.MonkeyPatch
):
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))  # the server's and the CLI's global git files
    root = _with_secret(tmp_path)
    records = root / ".memzoi/records"
    (records / "use-node-22.md").write_text(record_text("use-node-22", "Use Node 22", extra="supersedes: use-pnpm\n"))
    (records / "team").mkdir()
    (records / "team/in-team.md").write_text(record_text("in-team", "In team"))
    _git(root, "add", "-A")
    _git(root, "commit", "-q", "-m", "more")
    _git(root, "checkout", "-q", "-b", "other")
    (records / "use-pnpm.md").write_text(record_text("use-pnpm", extra="reviewer: x\n"))
    (records / "bad-schema.md").unlink()
    _git(root, "commit", "-q", "-am", "other")
    _git(root, "checkout", "-q", "main")
    if change == "stash":
        (records / "use-pnpm.md").write_text(record_text("use-pnpm", extra="reviewer: x\n"))
    _untracked(root)
    await session(root, memzoi_home)
    before = expected(root, memzoi_home)
    fn, moves, crossfile = CHANGES[change]
    fn(root)
    want = expected(root, memzoi_home)
    assert (want != before) == moves  # a change that moves a finding: a stale replay would show
    history, scanned = await session(root, memzoi_home)
    _no_secret_in_store(memzoi_home)
    if not crossfile:
        assert_never_stale(history, want, root)
        return
    assert REPLAYED not in scanned, scanned
    assert_never_stale({uri: published[-1:] for uri, published in history.items()}, want, root)


async def test_a_disabled_setting_is_never_replayed(tmp_path: Path, memzoi_home: Path):
    root = _with_secret(tmp_path)
    await session(root, memzoi_home)
    want = {u: [r for r in rows if r[0] != "prompt_injection"] for u, rows in expected(root, memzoi_home).items()}
    assert want != expected(root, memzoi_home)  # the setting moves a finding: a stale replay would show
    history, scanned = await session(root, memzoi_home, init_options={"disabled": ["prompt_injection"]})
    assert REPLAYED not in scanned, scanned
    assert_never_stale(history, want, root)


async def test_two_servers_at_once_then_a_change(tmp_path: Path, memzoi_home: Path):
    root = _with_secret(tmp_path)
    want = expected(root, memzoi_home)
    for history, _ in await asyncio.gather(session(root, memzoi_home), session(root, memzoi_home)):
        assert_never_stale(history, want, root)
    # Two servers at once may both leave no whole set, and a set stored while the files' stamps are still racy (a
    # loaded machine runs these sessions within the racy window of the files' writes) is not replayed: each session
    # then stores one, and a session a few later replays it. Every session's diagnostics must be current meanwhile.
    for _ in range(4):
        history, scanned = await session(root, memzoi_home)
        assert_never_stale(history, want, root)
        if REPLAYED in scanned:
            break
    assert REPLAYED in scanned, scanned
    (root / ".memzoi/records/bad-schema.md").unlink()
    want = expected(root, memzoi_home)
    history, scanned = await session(root, memzoi_home)
    assert REPLAYED not in scanned, scanned
    assert_never_stale(history, want, root)
    _no_secret_in_store(memzoi_home)


async def test_a_server_killed_as_it_stores_its_set_leaves_nothing_stale(tmp_path: Path, memzoi_home: Path):
    """SIGKILL right after the scan's message, as the set is stored; then a file is fixed while no server runs."""
    root = _with_secret(tmp_path)
    client = await start_client("vscode", root, memzoi_home, wait_scanned=False)
    await wait_until(lambda: any(m.message.startswith("memzoi-lsp: scanned") for m in client.log_messages), 30)
    client._server.send_signal(signal.SIGKILL)  # type: ignore[attr-defined]  # pytest-lsp's server process
    try:
        await client.stop()
    except Exception:  # noqa: BLE001 - the server is gone: stopping it may fail, nothing else matters here
        pass
    (root / ".memzoi/records/bad-schema.md").write_text(record_text("bad-schema", "Bad"))
    want = expected(root, memzoi_home)
    for _ in range(2):  # judged, then replayed from the set the first one stored
        history, _ = await session(root, memzoi_home)
        assert_never_stale(history, want, root)
    _no_secret_in_store(memzoi_home)


@pytest.mark.parametrize("where", ["outside", "inside"])
async def test_a_records_folder_replaced_by_a_symlink(tmp_path: Path, memzoi_home: Path, where: str):
    root = _with_secret(tmp_path)
    await session(root, memzoi_home)
    records = root / ".memzoi/records"
    real = tmp_path / "real-records" if where == "outside" else root / ".memzoi/real-records"
    records.rename(real)
    records.symlink_to(real, target_is_directory=True)
    want = expected(root, memzoi_home)
    history, scanned = await session(root, memzoi_home)
    assert REPLAYED not in scanned, scanned
    assert_never_stale(history, want, root)
