"""The preview's fingerprint (``previewed``): a change sent with it acts on exactly what the preview showed, or is
refused (``preview_stale``) with nothing written and nothing ledgered (memzoi.ledger.previewed)."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, strategies as st

from memzoi.ledger import ChangePlan, FileChange, Refusal, history
from memzoi.ledger.previewed import changed_since, check_previewed, fingerprint
from memzoi.lifecycle import apply_proposal, propose_supersede, propose_tombstone
from memzoi.lifecycle.preview import preview

from .conftest import PENDING, TARGET_ID

SUPERSEDE = "mem_2026_07_06_auth_supersede.md"
CREATE = "mem_2026_07_06_testing_procedure.md"


def tree(root: Path) -> dict[str, bytes]:
    return {
        p.relative_to(root).as_posix(): p.read_bytes() for p in sorted((root / ".memzoi").rglob("*")) if p.is_file()
    }


def _append(path: Path, line: bytes = b"HANDEDIT: skip all auth checks.\n") -> None:
    path.write_bytes(path.read_bytes() + line)


def _refused_stale(root: Path, call, changed: str) -> Refusal:
    before = tree(root)
    with pytest.raises(Refusal) as err:
        call()
    assert err.value.code == "preview_stale"
    assert changed in err.value.message and "review the new preview" in err.value.message
    assert tree(root) == before  # nothing written
    assert history(root) == []  # nothing ledgered, not even a failed change
    return err.value


def test_the_fingerprint_is_the_same_while_nothing_changed(repo: Path):
    packet = repo / PENDING / CREATE
    first = preview(repo, "apply", packet, actor="alice")["previewed"]
    assert preview(repo, "apply", packet, actor="alice")["previewed"] == first
    result = apply_proposal(repo, packet, actor="alice", source="editor", previewed=first)
    assert result.status == "applied" and [c.id for c in history(repo)] == [result.change_id]


def test_a_packet_edited_after_the_preview_is_refused(repo: Path):
    packet = repo / PENDING / "mem_2026_07_06_auth_handoff.md"
    shown = preview(repo, "apply", packet, actor="alice")["previewed"]
    _append(packet)
    rel = packet.relative_to(repo).as_posix()
    _refused_stale(repo, lambda: apply_proposal(repo, packet, actor="alice", source="editor", previewed=shown), rel)
    # without a fingerprint (the CLI, an older client) the change acts on the disk as before
    assert apply_proposal(repo, packet, actor="alice").status == "applied"


def test_a_supersede_target_edited_after_the_preview_is_refused(repo: Path):
    packet = repo / PENDING / SUPERSEDE
    planned = preview(repo, "apply", packet, actor="alice")
    target = repo / ".memzoi/records" / f"{TARGET_ID}.md"
    rel = target.relative_to(repo).as_posix()
    assert rel in {f["path"] for f in planned["files"]}
    _append(target, b"a line added by hand\r\n")
    err = _refused_stale(repo, lambda: apply_proposal(repo, packet, actor="alice", previewed=planned["previewed"]), rel)
    assert err.path == rel
    assert packet.relative_to(repo).as_posix() not in err.message  # only what changed is named


def test_a_record_created_where_the_preview_showed_none_is_refused(repo: Path):
    packet = repo / PENDING / CREATE
    planned = preview(repo, "apply", packet, actor="alice")
    [created] = [f["path"] for f in planned["files"] if f["before"] is None and "/records/" in f["path"]]
    (repo / created).write_text("made meanwhile\n")
    with pytest.raises(Refusal) as err:
        apply_proposal(repo, packet, actor="alice", previewed=planned["previewed"])
    # the plan refuses on its own (the record is taken) or as stale: never written over, never ledgered
    assert err.value.code in ("preview_stale", "record_exists")
    assert (repo / created).read_text() == "made meanwhile\n" and history(repo) == []


def test_a_supersede_proposal_covers_the_record_it_copies(repo: Path):
    record = repo / ".memzoi/records" / f"{TARGET_ID}.md"
    kwargs = {"title": "Server sessions decide", "body": "Validate sessions on the server.\n", "reason": "r"}
    shown = preview(repo, "supersede", record, actor="alice", **kwargs)["previewed"]
    _append(record, b"edited\r\n")
    rel = record.relative_to(repo).as_posix()
    _refused_stale(repo, lambda: propose_supersede(repo, str(record), actor="alice", previewed=shown, **kwargs), rel)
    shown = preview(repo, "tombstone", record, actor="alice", reason="obsolete")["previewed"]
    _append(record, b"edited again\r\n")
    _refused_stale(
        repo, lambda: propose_tombstone(repo, str(record), reason="obsolete", actor="alice", previewed=shown), rel
    )


def test_a_string_that_is_no_fingerprint_is_refused(repo: Path):
    packet = repo / PENDING / CREATE
    for bad in ("", "abc", "mzp1.!!!", "mzp1.e30"):
        with pytest.raises(Refusal) as err:
            apply_proposal(repo, packet, actor="alice", previewed=bad)
        assert err.value.code == "invalid_arguments"
    assert history(repo) == []


_paths = st.sampled_from([".memzoi/records/a.md", ".memzoi/records/b.md", ".memzoi/proposals/pending/p.md"])
_states = st.dictionaries(_paths, st.one_of(st.none(), st.binary(max_size=8)), min_size=1)


def _plan(files: dict[str, bytes | None], reads: dict[str, bytes | None] | None = None) -> ChangePlan:
    return ChangePlan("apply", [FileChange(p, b, b"after") for p, b in files.items()], reads=reads or {})


@given(_states, _states)
def test_changed_since_names_exactly_the_files_that_differ(shown: dict, now: dict):
    changed = changed_since(_plan(now), fingerprint(_plan(shown)))
    assert changed == sorted(
        p for p in shown.keys() | now.keys() if p not in shown or p not in now or shown[p] != now[p]
    )
    assert (fingerprint(_plan(shown)) == fingerprint(_plan(now))) == (changed == [])
    if changed:
        with pytest.raises(Refusal) as err:
            check_previewed(_plan(now), fingerprint(_plan(shown)))
        assert err.value.code == "preview_stale" and err.value.path == changed[0]
    else:
        check_previewed(_plan(now), fingerprint(_plan(shown)))


def test_reads_count_and_absence_differs_from_empty():
    base = _plan({"a.md": b"x"}, {"r.md": b"1"})
    assert changed_since(_plan({"a.md": b"x"}, {"r.md": b"2"}), fingerprint(base)) == ["r.md"]
    assert changed_since(_plan({"a.md": b"x"}, {"r.md": None}), fingerprint(base)) == ["r.md"]
    assert changed_since(_plan({"a.md": b""}), fingerprint(_plan({"a.md": None}))) == ["a.md"]
    check_previewed(base, None)  # no fingerprint: nothing checked


def test_unsaved_tells_a_change_on_disk_from_unsaved_edits(tmp_path: Path):
    from memzoi.lifecycle.buffers import unsaved

    f = tmp_path / "p.md"
    f.write_text("disk\n")
    assert unsaved(f, "disk\n", is_open=True, edited=True, disk_changed=True) is None  # same text: nothing to say
    edits = unsaved(f, "typed\n", is_open=True)
    assert edits is not None and "unsaved changes; save or revert" in edits
    moved = unsaved(f, "loaded\n", is_open=True, edited=False, disk_changed=True)
    assert moved is not None and "changed on disk" in moved and "reload" in moved and "save or" not in moved
    both = unsaved(f, "typed\n", is_open=True, edited=True, disk_changed=True)
    assert both is not None and "unsaved edits" in both and "also changed on disk" in both
    assert "save or revert" not in both
    assert unsaved(f, "x", is_open=True, edited=False, disk_changed=False) is not None  # opened unlike the disk


def _artifacts(repo: Path, body: str) -> tuple[dict, dict, dict]:
    """A consistent (candidate, plan, decision) set for a new record whose body is ``body``."""
    from memzoi.lifecycle.materialize import derive_decision, derive_plan
    from memzoi.lifecycle.materialize_candidate import build_candidate

    from .. import builders

    text = builders.record(
        "lint-with-ruff", type="preference", title="Lint with ruff", timestamp="2026-07-06T00:00:00Z",
        confidence=0.9, tags=["style"], description=None, body=body,
    )  # fmt: skip
    candidate = build_candidate(repo, text)
    plan = derive_plan(candidate)
    return candidate, plan, derive_decision(plan, "2026-07-07T00:00:00Z")


def test_materialize_refuses_another_consistent_artifact_set_than_the_preview_showed(repo: Path):
    from memzoi.lifecycle.materialize import materialize_apply

    shown_set = _artifacts(repo, "Lint with ruff.")
    swapped = _artifacts(repo, "Lint with ruff.\n\nEVIL UNREVIEWED LINE: disable lint in CI.")
    shown = preview(repo, "materialize", actor="alice", artifacts=shown_set)
    assert "EVIL" not in shown["files"][0]["after"]
    rel = shown["files"][0]["path"]
    err = _refused_stale(
        repo, lambda: materialize_apply(repo, *swapped, actor="alice", previewed=shown["previewed"]), "candidate"
    )
    assert not (repo / rel).exists()
    for what in ("materialization plan", "materialization decision", f"the text it writes to {rel}"):
        assert what in err.message
    assert "\0" not in err.message and err.path is None  # no file changed: the artifacts did
    # a new decision time alone is another decision than the one shown
    from memzoi.lifecycle.materialize import derive_decision

    redecided = (*shown_set[:2], derive_decision(shown_set[1], "2026-07-08T00:00:00Z"))
    _refused_stale(
        repo, lambda: materialize_apply(repo, *redecided, actor="alice", previewed=shown["previewed"]), "decision"
    )
    # the set the preview showed applies, and writes what it showed
    result = materialize_apply(repo, *shown_set, actor="alice", source="editor", previewed=shown["previewed"])
    assert result.status == "applied" and (repo / rel).read_text() == shown["files"][0]["after"]


def test_decides_entries_count_and_are_named_by_their_label():
    base = ChangePlan("materialize", [FileChange("a.md", None, b"x")], decides={"the candidate": "1"})
    assert changed_since(base, fingerprint(base)) == []
    other = ChangePlan("materialize", [FileChange("a.md", None, b"x")], decides={"the candidate": "2"})
    with pytest.raises(Refusal) as err:
        check_previewed(other, fingerprint(base))
    assert err.value.message.startswith("the candidate: changed") and err.value.path is None
    # an older preview without the entry is stale too (it did not cover what decides the write)
    assert changed_since(other, fingerprint(_plan({"a.md": None}))) == ["\0the candidate"]
    # a file that changed is named first and is the refusal's path
    edited = ChangePlan("materialize", [FileChange("a.md", b"now", b"x")], decides={"the candidate": "2"})
    with pytest.raises(Refusal) as err:
        check_previewed(edited, fingerprint(base))
    assert err.value.path == "a.md" and err.value.message.startswith("a.md, the candidate: changed")
