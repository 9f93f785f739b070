"""Reading a project's state for a request (memzoi.runs.projectview), without a server: cross-file findings are
withheld until the first scan is complete and shown only for the text they were computed from; reading changes
nothing, and the editor's text enters the state only through ``apply_editor``."""

from __future__ import annotations

from pathlib import Path

from memzoi.judge.analysis import analyze_text
from memzoi.runs.projectstate import ProjectState
from memzoi.runs.projectview import cross_findings, resolved_holder
from tests import builders


def _state(tmp_path: Path) -> tuple[ProjectState, str, str]:
    root = tmp_path / "proj"
    builders.write(root, ".memzoi/records/old.md", builders.record("old"))
    builders.write(root, ".memzoi/records/new.md", builders.record("new", supersedes="old"))
    state = ProjectState(root)
    old, new = (str(root / ".memzoi" / "records" / f"{r}.md") for r in ("old", "new"))
    for path in (old, new):
        state.apply_scan(path, analyze_text(Path(path).read_text(encoding="utf-8"), path))
    return state, old, new


def _codes(found) -> list[str]:
    return [f.code for f in found]


def test_cross_file_findings_wait_for_the_first_scan(tmp_path):
    state, _, new = _state(tmp_path)
    assert _codes(state.crossfile.findings_for(new)) == ["lifecycle_inconsistent"]
    assert cross_findings(state, new) == [] and resolved_holder(state, new) is None
    state.scanned = True
    assert _codes(cross_findings(state, new)) == ["lifecycle_inconsistent"]


def test_findings_are_shown_only_for_the_text_the_graph_holds(tmp_path):
    state, old, new = _state(tmp_path)
    state.scanned = True
    text = Path(new).read_text(encoding="utf-8")
    same = analyze_text(text, new)  # another analysis of the same text: same facts, same spans
    assert _codes(cross_findings(state, new, same)) == ["lifecycle_inconsistent"]
    starts = [f.start for f in cross_findings(state, new, same)]
    typed = analyze_text(builders.edit(text, "supersedes: old", "supersedes:   old", count=1), new)  # moved span
    assert cross_findings(state, new, typed) == []  # a buffer the graph has not taken in: its spans would be off
    assert _codes(state.crossfile.findings_for(new)) == ["lifecycle_inconsistent"]  # reading changed nothing
    state.apply_editor(new, typed)
    assert [f.start for f in cross_findings(state, new, typed)] == [s + 2 for s in starts]
    assert cross_findings(state, new, same) == []  # now the old text is the one not held


def test_an_editor_change_is_what_changes_other_files(tmp_path):
    state, old, new = _state(tmp_path)
    state.scanned = True
    text = Path(old).read_text(encoding="utf-8")
    superseded = analyze_text(builders.edit(text, "status: active", "status: superseded"), old)
    assert cross_findings(state, old, superseded) == []  # a read of the buffer: nothing changes
    assert _codes(cross_findings(state, new)) == ["lifecycle_inconsistent"]
    assert state.apply_editor(old, superseded) == {new}
    assert cross_findings(state, new) == []
