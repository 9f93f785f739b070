"""What changed between the language server's first scan and its watches (:mod:`memzoi.runs.scandrift`): every
file whose state on disk is not the one the scan judged it by, and only those."""

from __future__ import annotations

import os
import time
from pathlib import Path

from hypothesis import HealthCheck, given, settings, strategies as st

from memzoi.base import freshness
from memzoi.base.freshness import RACY_NS
from memzoi.runs import scandrift
from memzoi.runs.projectstate import ProjectState
from memzoi.runs.scandrift import defers_watches, drifted, held_stamps
from memzoi.stores.firststage import lstamp

from .builders import record

NAMES = [f"rec-{i}.md" for i in range(6)]


def _later() -> int:
    """A scan's start well after the files were written (their stamps not racy against it)."""
    return time.time_ns() + 10 * RACY_NS


def _workspace(root: Path, names: list[str]) -> Path:
    records = root / ".memzoi" / "records"
    records.mkdir(parents=True, exist_ok=True)
    for name in names:
        (records / name).write_text(record(name.removesuffix(".md")), encoding="utf-8")
    return records


class _Stage:
    """What :func:`held_stamps` reads of a compact verdict: its path and stamp."""

    def __init__(self, path: str) -> None:
        self.path = path
        self.stamp = lstamp(path)


def _scanned(root: Path, *, without_verdict: frozenset[str] = frozenset()) -> ProjectState:
    """A project state as the scan leaves it: every listed file adopted, each with a verdict holding its stamp."""
    state = ProjectState(root)
    state.adopt(state.listing())
    for path in sorted(state.tracked.files):
        if os.path.basename(path) not in without_verdict:
            state.verdicts[path] = _Stage(path)
    return state


def test_nothing_changed_means_nothing_drifted(tmp_path: Path):
    _workspace(tmp_path, NAMES)
    state = _scanned(tmp_path)
    assert drifted(str(state.memzoi_dir), held_stamps(state), _later()) == []


def test_an_edit_a_new_file_a_removal_a_rename_over_and_a_file_without_a_verdict_drift(tmp_path: Path):
    records = _workspace(tmp_path, NAMES)
    state = _scanned(tmp_path, without_verdict=frozenset({"rec-5.md"}))
    (records / "rec-0.md").write_text(record("rec-0", title="Edited after the read"), encoding="utf-8")
    (records / "new.md").write_text(record("new"), encoding="utf-8")
    (records / "rec-1.md").unlink()
    (records / "other.md").write_text(record("rec-2"), encoding="utf-8")
    os.replace(records / "other.md", records / "rec-2.md")  # same name, another inode
    got = drifted(str(state.memzoi_dir), held_stamps(state), _later())
    assert sorted(os.path.basename(p) for p in got) == ["new.md", "rec-0.md", "rec-1.md", "rec-2.md", "rec-5.md"]


def test_an_unreadable_project_folder_counts_every_file_as_gone(tmp_path: Path):
    _workspace(tmp_path, NAMES)
    state = _scanned(tmp_path)
    held = held_stamps(state)
    assert sorted(drifted(str(tmp_path / "absent"), held, _later())) == sorted(held)


_ACTIONS = st.lists(
    st.tuples(st.sampled_from(["edit", "remove", "add", "keep"]), st.sampled_from(NAMES + ["extra.md"])), max_size=8
)


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(actions=_ACTIONS)
def test_exactly_the_files_whose_state_differs_drift(tmp_path_factory, actions: list[tuple[str, str]]):
    root = tmp_path_factory.mktemp("ws")
    records = _workspace(root, NAMES)
    state = _scanned(root)
    before = {p: lstamp(p) for p in state.tracked.files}
    for action, name in actions:
        path = records / name
        if action == "edit":
            path.write_text(record(name.removesuffix(".md"), title=f"Edit {len(actions)} {name}" * 3), encoding="utf-8")
        elif action == "remove" and path.exists():
            path.unlink()
        elif action == "add" and not path.exists():
            path.write_text(record(name.removesuffix(".md")), encoding="utf-8")
    now = {str(p): lstamp(str(p)) for p in records.iterdir()}
    expected = {p for p in before.keys() | now.keys() if before.get(p) != now.get(p) or p not in before}
    assert set(drifted(str(state.memzoi_dir), held_stamps(state), _later())) == expected


def test_a_racy_stamp_drifts_though_it_is_unchanged(tmp_path: Path):
    # git's racy rule: a file changed within the timestamp granularity before the scan began may be written again
    # in the same tick with the same size after the worker read it, leaving the stamp whole
    records = _workspace(tmp_path, NAMES)
    state = _scanned(tmp_path)
    written = max(max(lstamp(str(p))[1], lstamp(str(p))[3]) for p in records.iterdir())  # type: ignore[index]
    assert set(drifted(str(state.memzoi_dir), held_stamps(state), written)) == {str(p) for p in records.iterdir()}
    window = max(freshness.racy_window(lstamp(str(p))) for p in records.iterdir())  # type: ignore[arg-type]
    assert drifted(str(state.memzoi_dir), held_stamps(state), written + window + 1) == []


def test_the_racy_window_is_the_file_systems_granularity():
    fine, whole = 1_700_000_000_123_456_789, 1_700_000_000_000_000_000
    assert freshness.racy_window((10, fine, 1, fine)) == freshness.FINE_RACY_NS  # times kept below the second
    assert freshness.racy_window((10, whole, 1, whole)) == RACY_NS  # whole seconds (FAT, ext3)
    assert freshness.racy_window((10, fine, 1, whole)) == RACY_NS  # unsure: the wider window


def test_a_stamp_on_a_file_system_without_a_kept_ctime_drifts(tmp_path: Path, monkeypatch):
    # where the ctime follows the mtime (sshfs, FAT, SMB…), a same-size edit with the mtime put back keeps the stamp
    _workspace(tmp_path, NAMES)
    state = _scanned(tmp_path)
    monkeypatch.setattr(freshness, "fs_type", lambda dev: "fuse.sshfs")
    assert len(drifted(str(state.memzoi_dir), held_stamps(state), _later())) == len(NAMES)


def test_the_watches_wait_for_the_scan_only_where_stamps_vouch(tmp_path: Path, monkeypatch):
    _workspace(tmp_path, NAMES)
    memzoi_dir = str(tmp_path / ".memzoi")
    monkeypatch.setattr(scandrift, "fs_type", lambda dev: "ext4")
    monkeypatch.setattr(scandrift, "mount_table", lambda: b"")
    assert defers_watches(memzoi_dir)
    monkeypatch.setattr(scandrift, "fs_type", lambda dev: "fuse.sshfs")
    assert not defers_watches(memzoi_dir)
    monkeypatch.setattr(scandrift, "fs_type", lambda dev: "ext4")
    below = os.path.join(os.path.realpath(memzoi_dir), "records")
    monkeypatch.setattr(scandrift, "mount_table", lambda: f"36 35 98:0 / {below} rw - ext4 /dev/x rw".encode())
    assert not defers_watches(memzoi_dir)
    assert not defers_watches(str(tmp_path / "absent"))


def test_a_symlink_made_before_the_watches_is_drift(tmp_path: Path):
    """A refused symlink made after the listing and before the watches, or one gone meanwhile, is drift: the watch
    pass then shows (or clears) what ``memzoi check`` says of it."""
    m = tmp_path / ".memzoi"
    (m / "records").mkdir(parents=True)
    (tmp_path / "out.md").write_text("x")
    gone = str(m / "records" / "gone.md")
    (m / "records" / "new.md").symlink_to(tmp_path / "out.md")
    assert drifted(str(m), {gone: None}, 0) == [str(m / "records" / "new.md"), gone]
