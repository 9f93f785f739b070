"""What a project under review follows besides its files (memzoi.runs.projectstate, without a server): its
configuration and git's state (``ProjectState.input_changes``), and the retention boundaries of the files it
judged (``ProjectState.passed_boundaries``)."""

from __future__ import annotations

from datetime import UTC

from memzoi.judge.analysis import analyze_bytes
from memzoi.runs.projectstate import ProjectState
from tests.builders import record, record_path, write


def test_input_changes_report_the_configuration_and_gits_state(tmp_path):
    import subprocess

    from memzoi.base.runtime import git_env
    from memzoi.project.admission import GitVisibility

    root = tmp_path / "ws"
    path = write(root, record_path("use-pnpm"), record("use-pnpm"))
    subprocess.run(["git", "init", "-q", str(root)], check=True, env=git_env(), capture_output=True)
    state = ProjectState(root)
    assert not state.input_changes().any  # nothing before the listing
    state.adopt(state.listing())
    assert state.git.visibility(str(path)) is GitVisibility.UNTRACKED
    state.verdicts[str(path)] = object()
    assert not state.input_changes().any  # nothing changed
    (root / ".gitignore").write_text(".memzoi/records/\n")
    changes = state.input_changes()
    assert changes.git and not changes.config
    assert state.git.visibility(str(path)) is GitVisibility.IGNORED and state.verdicts  # asked again, kept
    (root / ".memzoi/config.toml").write_text('[project]\nid = "demo"\n')
    changes = state.input_changes()
    assert changes.config and not changes.git and not state.verdicts  # every first stage is made again
    (root / ".memzoi/records/.gitignore").write_text("nothing\n")  # a folder between the root and the files
    assert state.input_changes().git
    assert not state.input_changes().any


def test_passed_boundaries_names_each_file_once_when_its_retention_boundary_passes(tmp_path):
    from datetime import datetime, timedelta

    from memzoi.project.verdict import ProjectContext
    from memzoi.runs.scanverdicts import analyse

    boundary = datetime(2026, 7, 1, tzinfo=UTC)
    root = tmp_path / "ws"
    episode = write(
        root,
        record_path("episode"),
        record("episode", lane="episodic", retention={"occurred_at": "2026-06-01T00:00:00Z"}),
    )
    plain = write(root, record_path("plain"), record("plain"))
    state = ProjectState(root)
    state.adopt(state.listing())
    ctx = ProjectContext.of(state.memzoi_dir, now=boundary - timedelta(days=1), git=state.git)
    for got in analyse([str(episode), str(plain)], ctx, index_root=root, workers=1):
        state.verdicts[got.verdict.path] = got.verdict
    assert state.verdicts[str(episode)].boundary == boundary and state.verdicts[str(plain)].boundary is None
    assert state.next_boundary() == boundary  # the server's timer is set for it
    assert state.passed_boundaries(boundary - timedelta(seconds=1)) == []
    assert state.passed_boundaries(boundary) == [str(episode)]  # the boundary is inclusive
    assert state.next_boundary() is None
    assert str(episode) not in state.verdicts and str(plain) in state.verdicts
    assert state.passed_boundaries(boundary + timedelta(days=1)) == []  # once
    # An analysis fed after the boundary already holds retention_query_only: nothing to wait for.
    late = analyze_bytes(episode.read_bytes(), episode, now=boundary)
    early = analyze_bytes(episode.read_bytes(), episode, now=boundary - timedelta(days=1))
    state.feed("late", late)
    state.feed("early", early)
    assert state.next_boundary() == boundary
    assert state.passed_boundaries(boundary) == ["early"]
    assert state.next_boundary() is None


def test_a_threaded_owner_reads_inputs_off_its_thread_and_changes_state_on_its_own(tmp_path):
    """``inputs_now`` only reads (the server's scan thread); ``input_changes(now, ask_git=False)`` changes the state
    (the event loop) without running git; ``ask_git`` asks git again (the scan thread) (issue 32)."""
    import subprocess

    from memzoi.base.runtime import git_env
    from memzoi.project.admission import GitVisibility

    root = tmp_path / "ws"
    path = write(root, record_path("use-pnpm"), record("use-pnpm"))
    subprocess.run(["git", "init", "-q", str(root)], check=True, env=git_env(), capture_output=True)
    state = ProjectState(root)
    state.adopt(state.listing())
    state.verdicts[str(path)] = object()
    (root / ".gitignore").write_text(".memzoi/records/\n")
    (root / ".memzoi/config.toml").write_text('[project]\nid = "demo"\n')
    asked: list[list[str]] = []
    real = state.git.ask
    state.git.ask = lambda paths: asked.append(list(paths)) or real(paths)  # type: ignore[method-assign]
    now = state.inputs_now()
    assert state.verdicts and not asked  # a read: nothing changed
    changes = state.input_changes(now, ask_git=False)
    assert changes.config and changes.git and not state.verdicts and not asked
    assert state.git.visibility(str(path)) is GitVisibility.UNTRACKED  # not asked yet
    state.ask_git()
    assert asked == [[str(path)]] and state.git.visibility(str(path)) is GitVisibility.IGNORED
    assert not state.input_changes(state.inputs_now(), ask_git=False).any
