"""An entry below ``.memzoi`` whose name is not UTF-8 is refused by ``memzoi check``'s walk (``canonical_path``,
never read or entered); the core keeps it apart the same way everywhere: the walk names it
(:attr:`memzoi.project.checkpaths.Expanded.names`), the project's file set keeps it among the refused entries and
in line with events (:class:`memzoi.project.projectfiles.ProjectFiles`), it takes no part in cross-file checks, the
drift pass lists it, and the watcher that cannot name it is made anew (:func:`memzoi.base.dirwatch.changed_paths`).
Skipped where the file system refuses such a name."""

from __future__ import annotations

import os
import queue
import shutil
import threading
from pathlib import Path

import pytest

from memzoi.base import dirwatch
from memzoi.judge.workspace import takes_part, unread_entry
from memzoi.project.checkpaths import expand, refused_findings
from memzoi.project.projectfiles import ProjectFiles
from memzoi.runs.scandrift import drifted

from . import builders


def raw(folder: Path, name: bytes) -> Path:
    """The path of the raw ``name`` in ``folder`` (the name as ``os`` decodes it: surrogate-escaped)."""
    return Path(os.fsdecode(os.path.join(os.fsencode(folder), name)))


def write(path: Path, text: str = "") -> Path:
    try:
        path.write_text(text or builders.record("cafe"), encoding="utf-8")
    except OSError as err:
        pytest.skip(f"the file system refuses a name that is not UTF-8: {err}")
    return path


@pytest.fixture
def memzoi(tmp_path: Path) -> Path:
    m = tmp_path / ".memzoi"
    (m / "records").mkdir(parents=True)
    (m / "records" / "a.md").write_text(builders.record("a"))
    return m


def test_unread_entry_names_the_nearest_entry_below_memzoi():
    bad = os.fsdecode(b"caf\xe9")
    assert unread_entry(f"/p/.memzoi/records/{bad}.md") == f"/p/.memzoi/records/{bad}.md"
    assert unread_entry(f"/p/.memzoi/records/{bad}/x/y.md") == f"/p/.memzoi/records/{bad}"
    assert unread_entry(f"/p{bad}/.memzoi/records/a.md") is None  # above .memzoi: the walk never asks
    assert unread_entry("/p/.memzoi/records/café.md") is None  # UTF-8, not ASCII: read as any name
    assert unread_entry(f"/q/{bad}.md") is None  # below no .memzoi
    assert unread_entry(f"/p/.memzoi/records/{bad}.md", "/p/.memzoi") == f"/p/.memzoi/records/{bad}.md"
    assert unread_entry(f"/p/.memzoi/records/{bad}.md", "/other/.memzoi") is None
    assert not takes_part(f"/p/.memzoi/records/{bad}.md", "record")  # check never reads it: no cross-file facts
    assert takes_part("/p/.memzoi/records/café.md", "record")


def test_the_walk_names_it_and_check_by_name_reports_the_same(memzoi: Path):
    path = write(raw(memzoi / "records", b"caf\xe9.md"), builders.record("cafe", extra="colour: blue\n"))
    folder = raw(memzoi / "records", b"dir\xfe")
    folder.mkdir()
    (folder / "inner.md").write_text(builders.record("inner"))
    out = expand(str(memzoi))
    assert sorted(out.names) == sorted([str(path), str(folder)])
    assert [p for p, _ in out.files] == [str(memzoi / "records" / "a.md")]  # nothing below the folder is read
    walked = [f.code for _, f in out.path_findings]
    for given in (path, folder, folder / "inner.md"):  # given by name: the walk's finding, never an analysis
        one = expand(str(given))
        assert one.files == [] and [f.code for _, f in one.path_findings] == ["canonical_path"]
        assert one.path_findings[0][1].message == out.path_findings[0][1].message
    assert walked == ["canonical_path", "canonical_path"]
    for opened in (False, True):  # the editor shows check's finding whether the file is open or not
        assert [f.code for f in refused_findings(str(path), opened=opened) or []] == ["canonical_path"]
    link = memzoi / "records" / "l.md"
    link.symlink_to(memzoi / "records" / "a.md")
    assert [f.code for f in refused_findings(str(link)) or []] == ["canonical_path", "unsafe_output_path"]
    assert refused_findings(str(link), opened=True) is None  # an open symlink's buffer is analysed


def test_the_file_set_keeps_it_apart_and_in_line_with_events(memzoi: Path):
    records = memzoi / "records"
    pf = ProjectFiles(memzoi)
    assert pf.scan() == [str(records / "a.md")] and pf.refused == set()
    path = write(raw(records, b"caf\xe9.md"))
    changes = pf.apply_events([path])
    assert not changes and pf.refused == {str(path)} and pf.files == {str(records / "a.md")}
    folder = raw(records, b"dir\xfe")
    folder.mkdir()
    (folder / "inner.md").write_text(builders.record("inner"))
    changes = pf.apply_events([folder / "inner.md", folder])  # the folder and what is below it: never entered
    assert not changes and pf.refused == {str(path), str(folder)} and pf.files == {str(records / "a.md")}
    assert sorted(drifted(str(memzoi), dict.fromkeys(pf.files), 0)) == sorted(
        [str(records / "a.md"), str(path), str(folder)]
    )
    (records / "sub").mkdir()
    sub = write(raw(records / "sub", b"x\xff.md"))
    pf.apply_events([records / "sub"])  # a folder event lists it again, as check walks it
    assert str(sub) in pf.refused
    path.unlink()
    shutil.rmtree(folder)
    shutil.rmtree(records / "sub")
    pf.apply_events([path, folder / "inner.md", records / "sub"])
    assert pf.refused == set() and pf.files == {str(records / "a.md")}
    outside = memzoi.parent / "outside"  # a symlinked folder is never entered: no name below it is met
    outside.mkdir()
    (records / "ld").symlink_to(outside)
    pf.apply_events([records / "ld"])
    pf.apply_events([raw(records / "ld", b"x\xff.md"), write(raw(outside, b"x\xff.md"))])
    assert pf.refused == {str(records / "ld")}
    (records / "ld").unlink()
    again = ProjectFiles(memzoi)
    write(raw(records, b"caf\xe9.md"))
    again.scan()
    assert again.refused == set(expand(str(memzoi)).names) == {str(raw(records, b"caf\xe9.md"))}


def test_a_watcher_broken_by_such_a_name_is_made_anew_and_goes_on(tmp_path: Path):
    """watchfiles cannot hand over a name that is not UTF-8 and stays broken after it; with ``lost`` the watcher is
    made anew, ``lost`` is called once its watches exist, and later changes are reported again."""
    folder = tmp_path / "w"
    folder.mkdir()
    ready, lost, stop = threading.Event(), threading.Event(), threading.Event()
    batches: queue.Queue[list[Path]] = queue.Queue()
    errors: list[BaseException] = []

    def run() -> None:
        try:
            for paths in dirwatch.changed_paths(folder, stop=stop, every_path=True, ready=ready.set, lost=lost.set):
                batches.put(paths)
        except BaseException as err:  # noqa: BLE001 - handed to the test
            errors.append(err)

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    try:
        assert ready.wait(20)
        write(raw(folder, b"caf\xe9.md"), "x")
        assert lost.wait(20), errors  # the broken watcher was replaced
        good = folder / "good.md"
        good.write_text("x")
        while True:  # every batch until the good file's (a failure: the queue's timeout raises)
            if good in batches.get(timeout=20):
                break
        assert errors == []
    finally:
        stop.set()
        thread.join(timeout=10)


def test_without_lost_the_watcher_error_is_raised(tmp_path: Path):
    """The behaviour ``lost`` is for: watchfiles' error names the undecodable path (:func:`dirwatch.undecodable`)."""
    folder = tmp_path / "w"
    folder.mkdir()
    ready, stop = threading.Event(), threading.Event()
    errors: list[BaseException] = []

    def run() -> None:
        try:
            for _ in dirwatch.changed_paths(folder, stop=stop, every_path=True, ready=ready.set):
                pass
        except BaseException as err:  # noqa: BLE001 - handed to the test
            errors.append(err)

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    try:
        assert ready.wait(20)
        write(raw(folder, b"caf\xe9.md"), "x")
        thread.join(timeout=20)
        assert not thread.is_alive() and len(errors) == 1 and dirwatch.undecodable(errors[0]), errors
    finally:
        stop.set()
        thread.join(timeout=10)
