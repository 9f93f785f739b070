"""The project file set and its event state machine (memzoi.project.projectfiles), without a server: each event is judged
by the final state on disk, the set always equals what `memzoi check` would check, and git is asked once per
batch for the new and changed files."""

from __future__ import annotations

import os
import random
from pathlib import Path

import pytest

from memzoi.project.checkpaths import expand
from memzoi.project.projectfiles import ProjectFiles, transient


class CountingGit:
    """A git oracle that records what it was asked."""

    def __init__(self) -> None:
        self.asked: list[list[str]] = []
        self.forgotten: list[str] = []

    def ask(self, paths) -> None:
        self.asked.append(sorted(str(p) for p in paths))

    def forget(self, paths) -> None:
        self.forgotten.extend(paths)


@pytest.fixture
def md(tmp_path: Path) -> Path:
    root = tmp_path / "proj" / ".memzoi"
    (root / "records").mkdir(parents=True)
    (root / "proposals" / "pending").mkdir(parents=True)
    (root / "records" / "a.md").write_text("---\n---\n")
    (root / "config.toml").write_text("")
    return root


def check_view(md: Path) -> set[str]:
    return {os.path.abspath(p) for p, _ in expand(str(md)).files}


def test_scan_lists_what_check_checks_and_asks_git_once(md: Path):
    (md / "index.md").write_text("# Index\n")
    (md / ".hidden.md").write_text("x")
    git = CountingGit()
    files = ProjectFiles(md, git)
    found = files.scan()
    assert set(found) == check_view(md) == files.files
    assert str(md / "index.md") in files.files and str(md / "config.toml") in files.files
    assert git.asked == [sorted(found)]


def test_a_save_by_write_and_rename_is_one_update(md: Path):
    files = ProjectFiles(md, CountingGit())
    files.scan()
    target = md / "records" / "a.md"
    tmp = md / "records" / "a.md.tmp"
    tmp.write_text("---\nid: a\n---\n")
    os.replace(tmp, target)
    changes = files.apply_events([target, tmp, target])
    assert changes.updated == [str(target)] and changes.removed == []


def test_deleted_directory_drops_everything_below_it(md: Path):
    (md / "records" / "sub").mkdir()
    (md / "records" / "sub" / "b.md").write_text("x")
    files = ProjectFiles(md, CountingGit())
    files.scan()
    for p in (md / "records" / "sub").iterdir():
        p.unlink()
    (md / "records" / "sub").rmdir()
    changes = files.apply_events([md / "records" / "sub"])
    assert changes.removed == [str(md / "records" / "sub" / "b.md")]
    assert files.files == check_view(md)


def test_directory_event_relists_it(md: Path):
    files = ProjectFiles(md, CountingGit())
    files.scan()
    (md / "records" / "a.md").unlink()
    (md / "records" / "c.md").write_text("x")
    changes = files.apply_events([md / "records"])
    assert changes.updated == [str(md / "records" / "c.md")]
    assert changes.removed == [str(md / "records" / "a.md")]


def test_symlink_replacing_a_file_removes_it(md: Path, tmp_path: Path):
    files = ProjectFiles(md, CountingGit())
    files.scan()
    target = md / "records" / "a.md"
    target.unlink()
    (tmp_path / "elsewhere.md").write_text("x")
    target.symlink_to(tmp_path / "elsewhere.md")
    assert files.apply_events([target]).removed == [str(target)]


def test_transient_names_and_outside_paths_are_ignored(md: Path, tmp_path: Path):
    files = ProjectFiles(md, CountingGit())
    files.scan()
    for name in (".a.md.swp", "a.md~", "4913", "#a.md#", ".#a.md"):
        (md / "records" / name).write_text("x")
        assert transient(name)
    (tmp_path / "outside.md").write_text("x")
    changes = files.apply_events(
        [md / "records" / n for n in (".a.md.swp", "a.md~", "4913")] + [tmp_path / "outside.md"]
    )
    assert not changes


def test_a_shown_file_that_is_gone_is_removed_even_if_never_known(md: Path):
    files = ProjectFiles(md, CountingGit())
    ghost = str(md / "records" / "ghost.md")
    assert files.apply_events([ghost], shown={ghost}).removed == [ghost]


def test_git_is_asked_once_per_batch_and_forgets_removed(md: Path):
    git = CountingGit()
    files = ProjectFiles(md, git)
    files.scan()
    git.asked.clear()
    new = [md / "records" / f"n{i}.md" for i in range(5)]
    for p in new:
        p.write_text("x")
    (md / "records" / "a.md").unlink()
    files.apply_events([*new, md / "records" / "a.md"])
    assert git.asked == [sorted(str(p) for p in new)]
    assert git.forgotten == [str(md / "records" / "a.md")]


def test_random_event_storms_always_end_at_checks_view(md: Path):
    # Whatever happens on disk and whichever events arrive (duplicated, reordered, partial), once every touched
    # path has been reported the set equals what `memzoi check` would check.
    rng = random.Random(7)
    files = ProjectFiles(md, CountingGit())
    files.scan()
    names = [md / "records" / f"r{i}.md" for i in range(6)] + [md / "records" / "d" / f"s{i}.md" for i in range(3)]
    for _ in range(60):
        touched: list[Path] = []
        for _ in range(rng.randint(1, 5)):
            p = rng.choice(names)
            action = rng.random()
            if action < 0.5:
                p.parent.mkdir(exist_ok=True)
                p.write_text(str(rng.random()))
            elif p.exists():
                p.unlink()
            elif p.parent.exists() and p.parent.name == "d" and not any(p.parent.iterdir()):
                p.parent.rmdir()
                touched.append(p.parent)
            touched.append(p)
        events = touched + rng.sample(touched, k=len(touched) // 2)
        rng.shuffle(events)
        files.apply_events(events)
        assert files.files == check_view(md)


def test_refused_symlinks_are_kept_apart_as_check_reports_them(tmp_path: Path):
    """The symlinks ``memzoi check`` refuses (a ``*.md`` link, a link to a folder) are :attr:`ProjectFiles.refused`,
    never files; events keep them in line with the disk (made, removed, in a new folder, the folder removed), and
    nothing below a symlinked folder becomes a file."""
    import shutil  # noqa: PLC0415

    m = tmp_path / ".memzoi"
    (m / "records").mkdir(parents=True)
    (m / "records" / "a.md").write_text("---\nid: a\n---\n")
    out, out_dir = tmp_path / "out.md", tmp_path / "outdir"
    out.write_text("x")
    out_dir.mkdir()
    (out_dir / "inner.md").write_text("---\nid: inner\n---\n")
    (m / "records" / "l.md").symlink_to(out)
    (m / "records" / "ld").symlink_to(out_dir)
    (m / "records" / "note.txt").symlink_to(out)  # skipped by check: no finding, not a link of the set
    pf = ProjectFiles(m)
    assert pf.scan() == [str(m / "records" / "a.md")]
    checked = {p for e in [expand(str(m))] for p in e.links}
    assert pf.refused == checked == {str(m / "records" / "l.md"), str(m / "records" / "ld")}
    (m / "records" / "l.md").unlink()
    (m / "records" / "l2.md").symlink_to(out)
    pf.apply_events([m / "records" / "l.md", m / "records" / "l2.md", m / "records" / "ld" / "inner.md"])
    assert pf.refused == {str(m / "records" / "l2.md"), str(m / "records" / "ld")}
    assert pf.files == {str(m / "records" / "a.md")}  # nothing read through the folder link
    (m / "records" / "sub").mkdir()
    (m / "records" / "sub" / "l3.md").symlink_to(out)
    pf.apply_events([m / "records" / "sub"])
    assert str(m / "records" / "sub" / "l3.md") in pf.refused
    shutil.rmtree(m / "records" / "sub")
    pf.apply_events([m / "records" / "sub"])
    assert pf.refused == {str(m / "records" / "l2.md"), str(m / "records" / "ld")}
