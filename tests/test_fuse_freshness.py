"""On a real FUSE mount whose ctime follows the mtime (``bindfs --ctime-from-mtime``, as sshfs, rclone and FAT
media behave), an edit that keeps size and mtime is seen by the cached ``memzoi check`` (its stored report is not
replayed) and by the index: the
file-system probe reads the mount's type from ``/proc/self/mountinfo`` and the content hash decides (issue 29).
Needs bindfs and ``/dev/fuse`` (``scripts/install_editor_prereqs.sh``); skipped where the mount cannot be made."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from memzoi.base import freshness
from memzoi.stores.index import Index

from .test_freshness import planted, reported
from .test_verdict_cache import counts  # noqa: F401 - fixture

pytestmark = pytest.mark.editor_packages


def plant_keeping_the_stat(path: Path) -> None:
    """Plant a credential in ``path`` with the size and mtime put back, and assert that on this mount the stat
    (size, mtime and ctime) shows nothing of it."""
    before = os.stat(path)
    path.write_bytes(planted(path))
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
    after = os.stat(path)
    assert (after.st_size, after.st_mtime_ns, after.st_ctime_ns) == (
        before.st_size,
        before.st_mtime_ns,
        before.st_ctime_ns,
    )  # the stat shows nothing


def _stored_reports() -> int:
    """Reports the project store keeps for replay (:mod:`memzoi.stores.replay`)."""
    import sqlite3

    from memzoi.base.runtime import STORE_DB

    [db] = sorted(Path(os.environ["MEMZOI_HOME"]).rglob(STORE_DB))
    with sqlite3.connect(db) as conn:
        return conn.execute("SELECT count(*) FROM reports").fetchone()[0]


@pytest.fixture
def mounted(tmp_path):
    """``tmp_path/src`` (a project) mounted at ``tmp_path/mnt`` with ``--ctime-from-mtime``."""
    if shutil.which("bindfs") is None or not os.path.exists("/dev/fuse"):
        pytest.skip("bindfs or /dev/fuse is missing (scripts/install_editor_prereqs.sh installs bindfs)")
    src, mnt = tmp_path / "src", tmp_path / "mnt"
    records = src / ".memzoi/records"
    records.mkdir(parents=True)
    from .builders import edit
    from .test_admission import rec

    for rid in ("alpha", "beta"):
        (records / f"{rid}.md").write_text(edit(rec(rid), f"Body text of {rid}", f"Body text of {rid} {'x' * 40}"))
    mnt.mkdir()
    done = subprocess.run(["bindfs", "--ctime-from-mtime", str(src), str(mnt)], capture_output=True, text=True)
    if done.returncode != 0:
        pytest.skip(f"bindfs could not mount here: {done.stderr.strip()}")
    try:
        yield mnt
    finally:
        subprocess.run(["fusermount", "-u", str(mnt)], capture_output=True)


def test_an_edit_keeping_size_and_mtime_on_a_ctime_from_mtime_mount(mounted, capsys, counts, monkeypatch):
    monkeypatch.setattr(freshness, "RACY_NS", -1)  # only the file system's rule decides
    monkeypatch.setattr(freshness, "SAMPLE_SHARE", 0)
    path = mounted / ".memzoi/records/beta.md"
    st = freshness.lstat(path)
    assert freshness.lacks_ctime(freshness.fs_type(st.dev))
    reported(capsys, mounted / ".memzoi")
    reported(capsys, mounted / ".memzoi")  # replayed: the stored report stands for the run from here on
    assert _stored_reports() == 1
    with Index(mounted) as ix:
        ix.rebuild()
    plant_keeping_the_stat(path)
    counts.reset()
    assert "credential_token" in reported(capsys, mounted / ".memzoi")
    with Index(mounted) as ix:
        assert ix.refresh().files == 1


def test_every_surface_sees_the_edit_on_a_ctime_from_mtime_mount(mounted, capsys, monkeypatch):
    """The same edit on the mount, seen by ``check FILE``, the server's warm start (its read of the store), ``memzoi
    search`` and the agent's recall (``search_memory``, ``get_memory``): the record now carries a credential, which the index redacts from the text it serves."""
    from memzoi.agent import recall

    from .index_setup import cli_records
    from .test_freshness import token
    from .test_index_inputs import agent_hits
    from .test_warm_scan_freshness import missed

    monkeypatch.setattr(freshness, "RACY_NS", -1)
    monkeypatch.setattr(freshness, "SAMPLE_SHARE", 0)
    path = mounted / ".memzoi/records/beta.md"
    assert freshness.lacks_ctime(freshness.fs_type(freshness.lstat(path).dev))
    reported(capsys, path)
    reported(capsys, mounted / ".memzoi")  # the store filled as a check leaves it
    assert missed(mounted) == set()
    assert "[redacted]" not in cli_records(capsys, mounted, "beta")["beta"]["body"]
    assert "[redacted]" not in recall.get_memory(mounted, "beta")["body"]
    assert "beta" in agent_hits(mounted, "beta")
    plant_keeping_the_stat(path)
    assert "credential_token" in reported(capsys, path)
    assert missed(mounted) == {"beta.md"}
    # the index judged the new text: a record refused for a secret is withheld (title and body), never its token
    hit = cli_records(capsys, mounted, "beta")["beta"]
    assert hit["title"] == "[withheld: credential_token]" and hit["body"] is None and token() not in str(hit)
    assert token() not in str(agent_hits(mounted, "beta"))
    got = recall.get_memory(mounted, "beta")
    assert got["withheld"] and "credential_token" in got["reasons"] and token() not in str(got)
