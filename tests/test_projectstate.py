"""The state of one project under review (memzoi.runs.projectstate), without a server: one mutator, apply_events,
brings the file set, the compact verdicts, the cross-file graph and the index in line with the disk; each changed
file is analysed once by the caller's source, git is asked once per batch, and the index is written from the
caller's analyses."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from memzoi.judge.analysis import analyze_bytes
from memzoi.project.checkpaths import expand
from memzoi.runs.projectstate import ProjectState, indexed
from tests.builders import packet, packet_path, record, record_path, write


class Source:
    """The caller's analyses: one per call, counted; ``open`` keys are skipped as an editor's open documents."""

    def __init__(self) -> None:
        self.asked: list[str] = []
        self.open: set[str] = set()
        self.fail: set[str] = set()

    def analysis_of(self, key: str):
        self.asked.append(key)
        if key in self.open:
            return None
        if key in self.fail:
            raise RuntimeError("a bug in one file's analysis")
        path = Path(key[len("key:") :])
        try:
            return analyze_bytes(path.read_bytes(), path)
        except OSError:
            return None

    def on_disk(self, path: Path):
        self.asked.append(str(path))
        data = path.read_bytes()
        return data, path.stat(), analyze_bytes(data, path)


class CountingGit:
    """Wraps the project's git oracle and records the batches it is asked."""

    def __init__(self, git) -> None:
        self.git, self.batches = git, []

    def ask(self, paths) -> None:
        self.batches.append(sorted(str(p) for p in paths))
        self.git.ask(paths)

    def __getattr__(self, name):
        return getattr(self.git, name)


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "proj"
    write(root, record_path("old"), record("old"))
    write(root, packet_path("retire"), packet("retire", action="tombstone", target="old"))
    write(root, ".memzoi/config.toml", "")
    return root


def state_of(root: Path) -> tuple[ProjectState, Source]:
    state = ProjectState(root, key=lambda p: "key:" + p, path_of=lambda k: k[len("key:") :])
    state.tracked.git = state.git = CountingGit(state.git)
    source = Source()
    keys = state.adopt(state.listing())
    for key in keys:
        state.feed(key, source.analysis_of(key))
    source.asked.clear()
    state.git.batches.clear()
    return state, source


def key(root: Path, rel: str) -> str:
    return "key:" + os.path.abspath(root / rel)


def test_the_listing_is_what_check_checks_keyed_by_the_callers_spelling(project: Path):
    state, _ = state_of(project)
    assert state.files == {"key:" + os.path.abspath(p) for p, _ in expand(str(project / ".memzoi")).files}
    assert state.has_path(project / record_path("old")) and not state.has_path(project / "README.md")
    assert state.key_of(project / record_path("old")) == key(project, record_path("old"))


def test_deleting_a_target_removes_it_and_affects_the_packet_that_names_it(project: Path):
    state, source = state_of(project)
    target, pkt = key(project, record_path("old")), key(project, packet_path("retire"))
    state.verdicts[target] = object()
    assert state.crossfile.findings_for(pkt) == []
    (project / record_path("old")).unlink()
    changes = state.apply_events([project / record_path("old")])
    assert changes.removed == [target] and changes.updated == []
    assert changes.affected == {pkt}
    assert changes.reindex == [project / record_path("old")]
    assert target not in state.verdicts and target not in state.files
    assert [f.code for f in state.crossfile.findings_for(pkt)] == ["dangling_reference"]
    assert source.asked == [] and state.git.batches == []  # nothing to analyse, nothing to ask git


def test_a_created_file_is_analysed_once_and_git_asked_once_for_the_batch(project: Path):
    state, source = state_of(project)
    (project / record_path("old")).unlink()
    state.apply_events([project / record_path("old")])
    write(project, record_path("old"), record("old"))
    write(project, record_path("new"), record("new"))
    events = [project / record_path("old"), project / record_path("new"), project / record_path("old")]
    changes = state.apply_events(events, analysis_of=source.analysis_of)
    assert sorted(changes.updated) == [key(project, record_path("new")), key(project, record_path("old"))]
    assert sorted(source.asked) == sorted(changes.updated)  # each once, though "old" had two events
    assert len(state.git.batches) == 1 and len(state.git.batches[0]) == 2
    assert changes.affected == {key(project, packet_path("retire"))}
    assert state.crossfile.findings_for(key(project, packet_path("retire"))) == []


def test_an_open_document_keeps_the_facts_of_its_editor_text(project: Path):
    state, source = state_of(project)
    pkt = key(project, packet_path("retire"))
    source.open.add(key(project, record_path("old")))
    write(project, record_path("old"), record("old", status="archived"))
    changes = state.apply_events([project / record_path("old")], analysis_of=source.analysis_of)
    assert changes.updated == [key(project, record_path("old"))] and changes.affected == set()
    assert state.crossfile.findings_for(pkt) == []  # still the facts fed before: an active target


def test_one_files_failure_does_not_stop_the_batch(project: Path):
    state, source = state_of(project)
    source.fail.add(key(project, record_path("old")))
    write(project, record_path("new"), record("new", supersedes=["old"]))
    changes = state.apply_events(
        [project / record_path("old"), project / record_path("new")], analysis_of=source.analysis_of
    )
    assert changes.updated == [key(project, record_path("old")), key(project, record_path("new"))]
    assert state.crossfile.facts(key(project, record_path("new"))) is not None


def test_a_shown_path_that_is_no_longer_a_file_is_reported_removed(project: Path):
    state, _ = state_of(project)
    ghost = project / record_path("ghost")
    changes = state.apply_events([ghost], shown=[str(ghost)])
    assert changes.removed == ["key:" + str(ghost)] and changes.reindex == [ghost]


def test_only_records_and_packets_are_reindexed(project: Path):
    state, source = state_of(project)
    (project / ".memzoi/config.toml").write_text("# edited\n")
    changes = state.apply_events([project / ".memzoi/config.toml"], analysis_of=source.analysis_of)
    assert changes.updated == [key(project, ".memzoi/config.toml")] and changes.reindex == []
    assert indexed(project / record_path("old")) and indexed(project / packet_path("retire"))
    assert not indexed(project / ".memzoi/config.toml") and not indexed(project / ".memzoi/records/index.md")


def test_the_index_is_written_from_the_callers_analyses(project: Path):
    state, source = state_of(project)
    assert state.search("old", 10) is None  # not ready before the first refresh
    state.reindex([project / record_path("old")], source.on_disk)  # nothing happens before it either
    assert source.asked == []
    try:
        state.refresh_index(source.on_disk)
        assert sorted(source.asked) == sorted(str(project / p) for p in (record_path("old"), packet_path("retire")))
        assert [h.id for h in state.search("old", 10) if h.kind == "record"] == ["old"]
        write(project, record_path("old"), record("old", title="Quokka habits"))
        source.asked.clear()
        state.reindex([project / record_path("old")], source.on_disk)
        assert source.asked == [str(project / record_path("old"))]
        assert [h.id for h in state.search("quokka", 10)] == ["old"]
        assert state.rebuild_index(source.on_disk)["records"] == 1
    finally:
        state.close()
    assert state.index is None


def test_a_stray_file_with_record_frontmatter_takes_no_part_in_the_cross_file_graph(project: Path):
    """As ``memzoi check``: a Markdown file below .memzoi but outside records/ and proposals/ is scanned only, even
    when it holds a record's frontmatter (the same id and body as a record, a reference to nothing)."""
    write(project, ".memzoi/notes/stray.md", record("old", supersedes="nowhere"))
    state, source = state_of(project)
    stray = key(project, ".memzoi/notes/stray.md")
    assert stray in state.files  # a file of the project: scanned for secrets
    assert state.crossfile.findings_for(stray) == []
    assert state.crossfile.findings_for(key(project, record_path("old"))) == []  # no duplicate of the stray copy
    # An edit that moves it into records/ makes it take part; one back out takes it out again.
    (project / ".memzoi/notes/stray.md").unlink()
    write(project, record_path("copy"), record("old", supersedes="nowhere"))
    changes = state.apply_events(
        [project / ".memzoi/notes/stray.md", project / record_path("copy")], analysis_of=source.analysis_of
    )
    assert key(project, record_path("copy")) in changes.updated
    assert {f.code for f in state.crossfile.findings_for(key(project, record_path("copy")))} >= {"dangling_reference"}


def test_a_file_spelled_through_a_linked_folder_has_the_file_s_key(project: Path, tmp_path: Path):
    # issue 28: an editor that opened the workspace through a linked folder must not make one file two entries
    state, _source = state_of(project)
    [key] = [k for k in state.adopt(state.listing()) if k.endswith("old.md")]
    link = tmp_path / "link"
    os.symlink(project, link)
    assert state.key_of(link / record_path("old")) == key
    assert state.key_of(project / record_path("old")) == key
    assert state.key_of(link / ".memzoi/records/new.md") != key  # not a file of the project: its own spelling
