"""What ``memzoi check``'s parent holds per file until its report is settled (issue 29, "check peak RSS"): the
compact stage :func:`memzoi.runs.checkfiles.held` keeps settles to the same findings as the stage a worker sent, and
shares or drops what is held once per file (the walk's strings, clean first stages, the entry's payload)."""

from __future__ import annotations

import os
from pathlib import Path

from hypothesis import given, settings, strategies as st

from memzoi.base.clock import utc_now
from memzoi.base.freshness import pack_stamp, unpack_stamp
from memzoi.project.checkpaths import expand
from memzoi.project.filefacts import FileFacts, Ref
from memzoi.project.verdict import ProjectContext
from memzoi.runs import check as check_mod
from memzoi.runs.check import check_paths
from memzoi.runs.checkfiles import Shared, check_chunk, held
from memzoi.runs.checksettle import settle
from tests import builders


def _project(root: Path) -> list[str]:
    """Two clean records, a record with findings of its own and a pending packet; their absolute paths."""
    paths = [
        builders.write(root, builders.record_path("use-pnpm"), builders.record("use-pnpm")),
        builders.write(root, builders.record_path("use-uv"), builders.record("use-uv", tags=["build"])),
        builders.write(root, builders.record_path("no-lane"), builders.record("no-lane", lane=None)),
        builders.write(root, builders.packet_path("mem-new"), builders.packet("mem-new")),
    ]
    return [os.path.abspath(p) for p in paths]


def _copy(s: str) -> str:
    """An equal string that is not the same object (as a worker's, unpickled, is not the walk's)."""
    return "".join(list(s))


def test_held_settles_to_the_same_findings_and_holds_less(tmp_path):
    paths = _project(tmp_path)
    results = check_chunk(utc_now(), [(p, p) for p in paths], cache=True)
    shared = Shared()
    walk = [(_copy(p), _copy(p)) for p in paths]
    kept = [held(r, path, display, shared) for r, (path, display) in zip(results, walk, strict=True)]
    ctx = {os.path.abspath(tmp_path / ".memzoi"): ProjectContext.of(str(tmp_path / ".memzoi"))}

    def rows(stages):
        return [(l.path, l.finding.code, l.finding.message, l.start, l.end) for l in settle(ctx, stages, {}, {})]

    assert rows(kept) == rows(results)
    assert any(r.stage.first.own for r in results)  # the lane-less record has findings of its own
    for r, k, (path, display) in zip(results, kept, walk, strict=True):
        assert k.stage.path is path and k.display is display  # the walk's strings, not the worker's copies
        assert (k.stage.first, k.stage.facts, k.stage.starts, k.stage.length, k.stage.boundary) == (
            r.stage.first,
            r.stage.facts,
            r.stage.starts,
            r.stage.length,
            r.stage.boundary,
        )
        assert k.stage.revision == ""
        assert r.entry is not None and r.entry[3] is not None  # a worker sends the payload the parent stores...
        assert k.entry is None and k.stage.stamp is None  # ...which is not held once stored; nor the stamp twice:
        assert k.kept is not None and unpack_stamp(k.kept) == r.entry[:3] == (r.entry[0], r.stage.stamp, r.entry[2])
    clean = [k.stage.first for k in kept if not k.stage.first.own and k.stage.first.role.value == "record"]
    assert len(clean) == 2 and clean[0] is clean[1]  # one shared first stage for the clean records
    assert len({id(k.stage.memzoi_dir) for k in kept}) == 1


def test_a_redacted_display_path_is_kept(tmp_path):
    paths = _project(tmp_path)
    r = check_chunk(utc_now(), [(paths[0], paths[0])], cache=False)[0]
    k = held(r._replace(display="[redacted]"), paths[0], paths[0], Shared())
    assert k.display == "[redacted]" and k.entry is None


def test_the_walk_can_leave_its_files_to_the_caller(tmp_path):
    _project(tmp_path)
    calls: list[tuple[str, str]] = []
    found = expand(str(tmp_path), on_file=lambda p, d, _i: calls.append((p, d)), files=False)
    assert found.files == []
    assert calls == [(os.path.abspath(p), d) for p, d in expand(str(tmp_path)).files] and len(calls) == 4


def test_check_records_compact_stages_then_writes_the_stores(tmp_path, monkeypatch):
    _project(tmp_path)
    monkeypatch.setenv("MEMZOI_HOME", str(tmp_path / "home"))
    seen: list[str] = []
    real_record, real_save = check_mod.record, check_mod._save

    def record(scope, plan, stages, report):
        seen.append("record")
        assert stages and all(r.entry is None and r.kept is not None for r in stages)
        assert all(slot is None for slot in plan.slots)  # every slot was let go as it was taken
        return real_record(scope, plan, stages, report)

    def save(plan):
        seen.append("save")
        real_save(plan)

    monkeypatch.setattr(check_mod, "record", record)
    monkeypatch.setattr(check_mod, "_save", save)
    memzoi = str(tmp_path / ".memzoi")
    cached = check_paths([memzoi], workers=1)
    assert seen == ["record", "save"]
    plain = check_paths([memzoi], workers=1, cache=False)
    assert [(l.path, l.finding, l.start) for l in cached.findings] == [
        (l.path, l.finding, l.start) for l in plain.findings
    ]


def test_visibility_is_keyed_by_the_callers_strings(tmp_path):
    paths = [_copy(p) for p in _project(tmp_path)]
    got = check_mod.git_visibility(str(tmp_path), paths)
    assert [k for k in got] == paths and all(a is b for a, b in zip(got, paths, strict=True))


def test_file_facts_hold_no_instance_dict():
    facts = FileFacts("record", "record", refs=(Ref("supersedes", "old", (1, 2)),))
    assert not hasattr(facts, "__dict__") and not hasattr(facts.refs[0], "__dict__")
    assert FileFacts.from_json(facts.to_json()) == facts


@settings(max_examples=200, deadline=None)
@given(
    digest=st.binary(min_size=32, max_size=32),
    stamp=st.tuples(
        st.integers(0, 2**63 - 1),
        st.integers(-(2**63), 2**63 - 1),
        st.integers(0, 2**64 - 1),
        st.integers(-(2**63), 2**63 - 1),
    ),
    checked=st.integers(-(2**63), 2**63 - 1),
)
def test_a_packed_entry_stamp_reads_back_whole(digest, stamp, checked):
    """What the parent holds of an entry (:func:`pack_stamp`) reads back as the digest, stamp and read clock it was
    made from, for every value a stat can give."""
    kept = pack_stamp(digest, stamp, checked)
    assert kept is not None and len(kept) == 72
    assert unpack_stamp(kept) == (digest, stamp, checked)


def test_an_entry_whose_stamp_does_not_pack_is_held_as_it_is(tmp_path):
    paths = _project(tmp_path)
    r = check_chunk(utc_now(), [(paths[0], paths[0])], cache=True)[0]
    assert r.entry is not None
    big = (r.entry[1][0], r.entry[1][1], 2**64, r.entry[1][3])  # an inode no stat gives: not packed
    k = held(r._replace(entry=(r.entry[0], big, r.entry[2], None)), paths[0], paths[0], Shared())
    assert k.kept is None and k.entry == (r.entry[0], big, r.entry[2], None)
