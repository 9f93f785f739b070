"""Lifecycle commands leave the project store's index current (trial 2, defect 3): after ``apply``,
``supersede``, ``tombstone`` and ``undo`` the index matches the files without ``memzoi rebuild``, as
``memzoi doctor``'s ``repo_index`` check compares them, and search finds what the change wrote."""

from __future__ import annotations

from memzoi.lifecycle.index_sync import indexed_paths, sync_index
from memzoi.stores.index import Index
from memzoi.stores.store import store_path

from .conftest import PENDING

RECORDS = ".memzoi/records"


def drift(repo) -> list[str]:
    """What ``memzoi doctor`` would call stale (empty when the index matches the files)."""
    with Index(repo) as index:
        d = index.drift()
    return d.missing_from_index + d.stale_in_index + d.changed_in_index + (["fts"] if d.fts_out_of_sync else [])


def doctor_index(cli) -> list[dict]:
    code, out = cli("doctor")
    return [c for c in out["checks"] if c["name"] == "repo_index"]


def test_lifecycle_commands_keep_the_index_current(repo, cli):
    assert cli("rebuild")[0] == 0
    assert drift(repo) == []
    record = "rust-msrv-is-1-96-1"
    code, sup = cli(
        "supersede",
        record,
        "--title",
        "Rust MSRV is 1.97+",
        "--body",
        "Support Rust 1.97 and newer.",
        "--reason",
        "bumped",
    )
    assert code == 0, sup
    assert drift(repo) == []
    code, applied = cli("proposals", "apply", f"supersede-{record}")
    assert code == 0, applied
    assert drift(repo) == []
    with Index(repo) as index:  # the index answers for the new record without a refresh
        assert [h.id for h in index.search("1.97", kinds=("record",))] == ["rust-msrv-is-1-97"]
    code, tomb = cli("tombstone", f"{RECORDS}/rust-msrv-is-1-97.md", "--reason", "no longer relevant")
    assert code == 0, tomb
    assert drift(repo) == []
    for cid in (tomb["change_id"], applied["change_id"], sup["change_id"]):
        assert cli("undo", cid)[0] == 0
        assert drift(repo) == []
    assert not (repo / PENDING / f"supersede-{record}.md").exists()
    checks = doctor_index(cli)
    assert checks and all(c["status"] == "ok" for c in checks), checks


def test_no_index_is_built_by_a_change(repo, cli):
    """A project whose index was never built keeps none: the first search builds it."""
    code, sup = cli(
        "supersede", "rust-msrv-is-1-96-1", "--title", "Rust MSRV is 1.97+", "--body", "Newer.", "--reason", "bumped"
    )
    assert code == 0, sup
    assert not store_path(repo).exists() or not Index(repo).exists
    assert sync_index(repo, [sup["files"][0]["path"]]) is False


def test_only_records_and_packets_are_indexed(tmp_path):
    assert indexed_paths(
        tmp_path,
        [
            ".memzoi/records/a.md",
            ".memzoi/proposals/pending/b.md",
            "AGENTS.memory.md",
            ".zuno/RULES.md",
            ".memzoi/records/index.md",
            ".memzoi/records/.x.md",
        ],
    ) == [".memzoi/records/a.md", ".memzoi/proposals/pending/b.md"]


def test_the_index_hook_is_installed_by_the_roots_not_on_import(tmp_path):
    """Importing the lifecycle installs nothing; the command line installs the hook for a command that makes
    changes (one that takes --actor), and not for a read."""
    import subprocess
    import sys

    script = (
        "import contextlib, io\n"
        "import memzoi.lifecycle\n"
        "from memzoi.ledger import writer\n"
        "from memzoi.cli.main import main\n"
        "print(writer._commit_hook is None)\n"
        "with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):\n"
        "    main(['history', '--json', '--root', '.'])\n"
        "print(writer._commit_hook is None)\n"
        "with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):\n"
        "    main(['reconcile', '--json', '--root', '.'])\n"
        "from memzoi.lifecycle.index_sync import sync_index\n"
        "print(writer._commit_hook is sync_index)\n"
    )
    (tmp_path / ".memzoi").mkdir()
    out = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=120, check=False, cwd=tmp_path
    )
    assert out.stdout.split() == ["True", "True", "True"], out.stderr[-2000:]
