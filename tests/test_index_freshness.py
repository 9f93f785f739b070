"""The index follows the one freshness rule (:mod:`memzoi.base.freshness`): what ``memzoi search`` and the agent's
recall (``search_memory``, ``get_memory``, ``build_context_pack``, ``precheck_path``) hand out is the file's
current text and verdict, after an edit that keeps size and mtime (on ext4, and on a simulated mount whose ctime
follows the mtime), a rename over the file, a hard-link edit and an edit within the racy window; a row whose bytes
are unchanged is confirmed by hash once and then trusted by stat."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from memzoi.agent import context_pack, precheck, recall
from memzoi.base import freshness
from memzoi.stores import planelisting
from memzoi.stores.index import Index, IndexUnavailable

from .index_setup import (  # noqa: F401 - fixtures
    NEW,
    OLD,
    SCOPED,
    another_build,
    cli_records,
    closed,
    fact,
    git,
    renamed,
    same_size_edit,
    scoped,
)

try:  # where main keeps it since the agent package was split
    from memzoi.agent.search import search_memory
except ImportError:  # pragma: no cover - before that split
    search_memory = recall.search_memory
from .mcp.conftest import FACT_ID, home, make_project, project  # noqa: F401 - fixtures


def lying_stat(monkeypatch, path: Path) -> None:
    """The walk of a refresh sees ``path`` with the stat it has now, whatever is written (as on a mount whose
    ctime follows the mtime, after an edit that puts the mtime back)."""
    fixed = os.lstat(path)
    real = planelisting.lstat_listed

    def lying(folders, **kwargs):
        return [
            (folder, names, [fixed if st is not None and st.st_ino == fixed.st_ino else st for st in stats])
            for folder, names, stats in real(folders, **kwargs)
        ]

    monkeypatch.setattr(planelisting, "lstat_listed", lying)


def body(project: Path) -> str:
    return recall.get_memory(project, FACT_ID)["body"]


def search(capsys, project: Path, word: str) -> list[str]:
    return list(cli_records(capsys, project, word))


def served_new(capsys, project: Path) -> None:
    assert NEW in body(project) and OLD not in body(project)
    assert search(capsys, project, NEW) == [FACT_ID] and search(capsys, project, OLD) == []
    hits = search_memory(project, NEW)["results"]
    assert [h["id"] for h in hits] == [FACT_ID]


def test_an_edit_keeping_size_and_mtime_on_ext4(project, capsys, closed):
    assert OLD in body(project)
    same_size_edit(fact(project))
    served_new(capsys, project)


@pytest.mark.parametrize("kind", ["fuse.sshfs", "vfat"])
def test_an_edit_keeping_the_stat_where_ctime_follows_mtime(project, capsys, closed, monkeypatch, kind):
    monkeypatch.setattr(freshness, "fs_type", lambda dev: kind)
    assert OLD in body(project)
    lying_stat(monkeypatch, fact(project))
    same_size_edit(fact(project))
    served_new(capsys, project)


def test_a_lying_stat_where_ctime_is_kept_is_trusted_until_the_sample_draws_it(project, capsys, closed, monkeypatch):
    assert OLD in body(project)
    body(project)  # confirmed by hash once (the rows were written in the racy window of the files): now trusted
    lying_stat(monkeypatch, fact(project))
    same_size_edit(fact(project))
    assert OLD in body(project)  # what a lying stamp would do on ext4 (it cannot lie there) ...
    monkeypatch.setattr(freshness, "SAMPLE_SHARE", 1)
    served_new(capsys, project)  # ... and the sample still catches it


def test_an_edit_within_the_racy_window(project, capsys, monkeypatch):
    monkeypatch.setattr(freshness, "SAMPLE_SHARE", 0)
    monkeypatch.setattr(freshness, "fs_type", lambda dev: "ext4")
    assert OLD in body(project)
    lying_stat(monkeypatch, fact(project))  # the same clock tick: the stat shows nothing
    same_size_edit(fact(project), keep_mtime=False)
    served_new(capsys, project)


def test_a_rename_over_the_file(project, capsys, closed):
    path = fact(project)
    assert OLD in body(project)
    st = path.stat()
    tmp = project / "build-tool.tmp"
    tmp.write_text(renamed(path.read_text(encoding="utf-8")), encoding="utf-8")
    os.utime(tmp, ns=(st.st_atime_ns, st.st_mtime_ns))
    os.replace(tmp, path)
    served_new(capsys, project)


def test_an_edit_through_a_hard_link(project, capsys, closed):
    path = fact(project)
    link = project / "hard-link"
    os.link(path, link)
    assert OLD in body(project)
    same_size_edit(link)
    served_new(capsys, project)


def test_an_unchanged_row_is_hashed_once_then_trusted(project, closed, monkeypatch):
    monkeypatch.setattr(freshness, "RACY_NS", freshness.RACY_NS)  # the real window: the rows just made are racy
    with Index(project) as ix:
        ix.rebuild()
    reads: list[str] = []
    real = freshness.read_stable
    monkeypatch.setattr(freshness, "read_stable", lambda p: reads.append(str(p)) or real(p))
    with Index(project) as ix:
        ix.db.execute("UPDATE files SET checked_ns = checked_ns + ?", (10 * freshness.RACY_NS,))  # as if read later
        assert ix.refresh().files == 0
        assert reads == []
        ix.db.execute("UPDATE files SET checked_ns = 0")  # a row made without the clock of its read
        assert ix.refresh().files == 0 and len(reads) == 2  # confirmed by hash, restamped, not re-indexed
        reads.clear()
        ix.db.execute("UPDATE files SET checked_ns = checked_ns + ?", (10 * freshness.RACY_NS,))
        assert ix.refresh().files == 0 and reads == []


# --- the index's stamp: tool and configuration ------------------------------------------------------------------


def test_a_code_change_under_the_same_version_rebuilds_the_index(project, another_build):
    with Index(project) as ix:
        ix.rebuild()
    another_build()
    with Index(project) as ix:
        assert ix.schema_problem and "another build" in ix.schema_problem  # never served as it is
        with pytest.raises(IndexUnavailable):
            ix.search("hatch")
        assert ix.refresh().files == 2 and ix.schema_problem is None
    with Index(project) as ix:
        assert ix.schema_problem is None and ix.refresh().files == 0


def served(project: Path) -> dict[str, bool]:
    """Whether each agent read hands out the record :data:`SCOPED` as usable memory."""
    return {
        "get_memory": recall.get_memory(project, SCOPED)["admitted"],
        "build_context_pack": SCOPED
        in {e["id"] for e in context_pack.build_context_pack(project, "scoped", paths=["src/app.py"])["records"]},
        "precheck_path": SCOPED in {w["record_id"] for w in precheck.precheck_path(project, "src/app.py")["warnings"]},
    }


def test_a_project_id_change_re_judges_every_row(project):
    scoped(project)
    assert all(served(project).values())
    (project / ".memzoi/config.toml").write_text('[project]\nid = "other"\n')
    with Index(project) as ix:
        assert ix.schema_problem and "config.toml" in ix.schema_problem  # never served as it is
    assert not any(served(project).values())


# --- git's state: admission is judged again ---------------------------------------------------------------------


def warning_served(project: Path) -> dict[str, bool]:
    """Whether each agent read hands out the warning record as usable memory, and whether ``memzoi check FILE``
    admits it (cached, asserted byte-identical to ``--no-cache``)."""
    from memzoi.cli.formats import to_json
    from memzoi.runs.check import check_paths

    from .mcp.conftest import WARNING_ID

    path = str(next(project.glob(".memzoi/records/**/auth-refresh.md")))
    cached = json.dumps(to_json(check_paths([path], workers=1)))
    assert cached == json.dumps(to_json(check_paths([path], workers=1, cache=False)))
    return {
        "get_memory": recall.get_memory(project, WARNING_ID)["admitted"],
        "build_context_pack": WARNING_ID
        in {
            e["id"]
            for e in context_pack.build_context_pack(project, "refresh", paths=["src/auth/session.py"])["records"]
        },
        "precheck_path": WARNING_ID
        in {w["record_id"] for w in precheck.precheck_path(project, "src/auth/x.py")["warnings"]},
        "check": "ignored_untracked" not in cached,
    }


ALL = {"get_memory": True, "build_context_pack": True, "precheck_path": True, "check": True}
NONE = dict.fromkeys(ALL, False)


@pytest.mark.parametrize("where", [".gitignore", ".git/info/exclude", ".memzoi/records/.gitignore"])
def test_an_ignore_rule_withholds_an_untracked_record(project, where):
    assert warning_served(project) == ALL
    rule = project / where
    rule.parent.mkdir(parents=True, exist_ok=True)
    pattern = "warnings/" if where.startswith(".memzoi") else ".memzoi/records/warnings/"
    rule.write_text(pattern + "\n")
    assert warning_served(project) == NONE
    rule.write_text("")
    assert warning_served(project) == ALL


def test_git_add_commit_and_rm_cached_re_judge_admission(project):
    (project / ".gitignore").write_text(".memzoi/records/warnings/\n")
    assert warning_served(project) == NONE
    git(project, "add", "-f", ".memzoi/records")  # tracked wins over the ignore rule
    assert warning_served(project) == ALL
    git(project, "commit", "-q", "-m", "records")
    assert warning_served(project) == ALL
    git(project, "rm", "-q", "-r", "--cached", ".memzoi/records/warnings")  # untracked again, and ignored
    assert warning_served(project) == NONE
    git(project, "commit", "-q", "-m", "untrack")
    assert warning_served(project) == NONE


def test_an_unchanged_git_state_asks_git_nothing(project, monkeypatch):
    from memzoi.project import admission

    recall.get_memory(project, FACT_ID)
    asked: list = []
    real = admission.git_visibility
    monkeypatch.setattr(admission, "git_visibility", lambda *a, **k: asked.append(a) or real(*a, **k))
    recall.get_memory(project, FACT_ID)
    assert asked == []
    (project / ".gitignore").write_text("nothing-here\n")
    recall.get_memory(project, FACT_ID)
    assert len(asked) == 1
