"""``memzoi import plan|apply`` (memzoi.lifecycle.import_plan, import_apply): Memzoi's mixed manifest gives its
documented outcome per destination, plans write nothing and are deterministic, the repo subset is blocked all or
nothing with no content in the plan, duplicates by trimmed-body BLAKE3 against records, pending packets, runtime
rows and earlier candidates, a stale plan id and invalid manifests write nothing, the source event (origin_key) is
imported once (replay, conflict), one ledgered change undone as one, and transactional cleanup by fault injection
at every step of the change."""

from __future__ import annotations

import errno
import json
import os
from datetime import UTC, datetime
from pathlib import Path

import pytest

from memzoi import ledger as L
from memzoi.lifecycle import checkpoints as C, list_local
from memzoi.lifecycle.import_apply import import_apply
from memzoi.lifecycle.import_plan import REDACTED_BODY, REDACTED_TITLE, SPLIT, plan_import
from tests import builders

PENDING = ".memzoi/proposals/pending"
T0 = datetime(2026, 7, 1, 9, 0, tzinfo=UTC)

#: Memzoi's mixed manifest (its import tests' ``MIXED_MANIFEST`` with the current header: ``version:
#: memzoi/import`` and the source event's ``origin_key``, as the seed states them).
MIXED = """version: memzoi/import
origin_key: adr-sync:2026-07-18
sources:
  - path: imports/not-read.yml
candidates:
  - destination: repo
    reason: durable project convention
    type: decision
    lane: semantic
    title: Repository convention
    body: The repository uses explicit review before durable memory changes.
    sensitivity: repo-safe
    scope:
      kind: repo
    tags: [workflow]
  - destination: local
    reason: private developer preference
    type: fact
    title: Local preference
    body: Keep this preference in local runtime memory only.
    sensitivity: local-only
  - destination: session
    reason: current handoff continuity
    type: episode
    lane: session
    title: Session continuity
    body: Resume the import review in the next session.
    sensitivity: local-only
  - destination: discard
    reason: stale transient note
    type: fact
    title: Discarded note
    body: This note is not kept.
  - destination: needs_review
    reason: ambiguous privacy boundary
    type: fact
    title: Unclear boundary
    body: A human decides where this goes.
"""


def manifest(*cands: dict, origin_key: str = "event-1", sources: list | None = None) -> str:
    """A manifest (JSON is YAML 1.2)."""
    return json.dumps(
        {
            "version": "memzoi/import",
            "origin_key": origin_key,
            "sources": sources or [{"ref": "issue://12"}],
            "candidates": list(cands),
        },
        indent=1,
    )


def cand(destination: str, title: str, body: str, **extra) -> dict:
    return {"destination": destination, "reason": "because", "type": "fact", "title": title, "body": body, **extra}


@pytest.fixture
def project(runtime_project: Path) -> Path:
    return runtime_project


def pending(root: Path) -> list[str]:
    folder = root / PENDING
    return sorted(p.name for p in folder.iterdir()) if folder.exists() else []


def state(root: Path) -> tuple[int, int, int]:
    L.reconcile(root)
    return len(pending(root)), len(list_local(root)), len(C.list_checkpoints(root)[1])


def apply(root: Path, text: str, **kw):
    plan = plan_import(root, text, actor="dev")
    return import_apply(root, text, plan_id=plan["plan_id"], actor="dev", now=T0, **kw)


def test_mixed_manifest_plan_gives_each_documented_action_and_writes_nothing(project):
    plan = plan_import(project, MIXED)
    assert plan["schema"] == "memzoi/import-plan" and plan["mode"] == "plan" and "writes" not in plan
    actions = [c["action"] for c in plan["candidates"]]
    assert actions[0] == {
        "kind": "create_proposal",
        "proposal_id": "mem_import_repository-convention",
        "path": f"{PENDING}/mem_import_repository-convention.md",
    }
    assert actions[1] == {"kind": "create_runtime", "route": "runtime_local"}
    assert actions[2] == {"kind": "create_runtime", "route": "runtime_session"}
    assert actions[3] == {"kind": "no_write", "reason": "stale transient note"}
    assert actions[4] == {"kind": "blocked", "reason": "ambiguous privacy boundary"}
    assert plan["summary"] == {
        "total": 5,
        "create_proposals": 1,
        "local_writes": 1,
        "session_writes": 1,
        "duplicates": 0,
        "discarded": 1,
        "needs_review": 1,
    }
    assert plan["sources"] == [{"path": "imports/not-read.yml"}]
    assert plan["candidates"][0]["policy"] == {
        "plane": "git",
        "write_route": "file_backed_proposal",
        "review": "proposal_review",
    }
    assert plan_import(project, MIXED)["plan_id"] == plan["plan_id"]  # deterministic
    assert plan_import(project, MIXED, actor="other")["plan_id"] != plan["plan_id"]  # the actor is part of it
    assert state(project) == (0, 0, 0) and L.history(project) == []


def test_apply_writes_packet_and_runtime_rows_as_one_change_and_undo_reverts_it(project):
    out = apply(project, MIXED)
    assert out["mode"] == "apply" and out["expected_plan_id"] == out["plan_id"] and not out["replayed"]
    assert [(w["kind"], w["index"]) for w in out["writes"]] == [
        ("proposal_file", 0),
        ("runtime_record", 1),
        ("runtime_record", 2),
    ]
    assert state(project) == (1, 1, 1)
    text = (project / out["writes"][0]["path"]).read_text(encoding="utf-8")
    assert "status: proposed" in text and "route: import" in text and "- path: imports/not-read.yml" in text
    assert not any((project / ".memzoi" / "records").iterdir())  # never a canonical record
    [change] = L.history(project)
    assert change.operation == "import_apply" and change.id == out["change_id"]
    L.undo_change(project, change.id, actor="dev")
    assert state(project) == (0, 0, 0)


def test_identical_retry_replays_and_a_changed_manifest_with_the_same_origin_key_conflicts(project):
    first = apply(project, MIXED)
    again = import_apply(project, MIXED, plan_id=first["plan_id"], actor="dev", now=T0)
    assert again["replayed"] and again["writes"] == first["writes"] and state(project) == (1, 1, 1)
    changed = builders.edit(MIXED, "Keep this preference", "Keep that preference")
    with pytest.raises(L.Refusal) as err:
        apply(project, changed)
    assert err.value.code == "operation_id_conflict" and "origin_key" in err.value.message
    assert state(project) == (1, 1, 1) and len(L.history(project)) == 1


def test_a_stale_plan_id_writes_nothing(project):
    plan = plan_import(project, MIXED, actor="dev")
    builders.write(
        project,
        builders.packet_path("other"),  # the memory state moves: now a duplicate
        builders.packet("other", body="Keep this preference in local runtime memory only."),
    )
    with pytest.raises(L.Refusal) as err:
        import_apply(project, MIXED, plan_id=plan["plan_id"], actor="dev")
    assert err.value.code == "import_plan_stale"
    with pytest.raises(L.Refusal) as err:
        import_apply(project, MIXED, plan_id="import_0", actor="dev")
    assert err.value.code == "import_plan_stale"
    assert pending(project) == ["other.md"] and list_local(project) == [] and L.history(project) == []


@pytest.mark.parametrize("sensitivity", [None, "unknown", "secret", "local-only", "raw-transcript"])
def test_one_unsafe_repo_candidate_blocks_every_repo_candidate_without_content(project, sensitivity):
    title, body, reason = "PLANTED-TITLE-7Q", "PLANTED-BODY-3Z private", "PLANTED-REASON-5X"
    unsafe = cand(
        "repo", title, body, reason=reason, tags=["PLANTED-TAG-9V"], scope={"kind": "repo", "paths": ["planted/9V/**"]}
    )
    if sensitivity:
        unsafe["sensitivity"] = sensitivity
    text = manifest(
        cand("repo", "Safe one", "Safe body.", sensitivity="repo-safe"), unsafe, cand("local", "Mine", "Local body.")
    )
    plan = plan_import(project, text)
    dumped = json.dumps(plan)
    assert "PLANTED" not in dumped and "issue://12" not in dumped and plan["sources"] == []
    safe, bad, local = plan["candidates"]
    assert safe["action"] == {"kind": "blocked", "reason": SPLIT} and safe["title"] == "Safe one"
    assert bad["action"]["kind"] == "blocked" and bad["action"]["reasons"] == ["sensitivity_not_repo_safe"]
    assert (bad["title"], bad["body"], bad["tags"]) == (REDACTED_TITLE, REDACTED_BODY, [])
    assert bad["sensitivity"] == (sensitivity or "unknown")
    assert local["action"] == {"kind": "create_runtime", "route": "runtime_local"}
    out = import_apply(project, text, plan_id=plan["plan_id"])
    assert "PLANTED" not in json.dumps(out)
    assert state(project) == (0, 1, 0)  # no packet from the repo subset; the local candidate still proceeds


def test_a_detector_finding_blocks_the_repo_subset_and_is_never_output_or_stored(project):
    secret = "ghp_" + "a1B2c3D4e5" * 3  # built at run time, never printed
    text = manifest(
        cand("repo", "Token", f"Use {secret} to deploy.", sensitivity="repo-safe"),
        cand("repo", "Safe", "Deploys go through CI.", sensitivity="repo-safe"),
        cand("session", "Where", f"Stopped at {secret}", type="episode"),
    )
    plan = plan_import(project, text)
    assert secret not in json.dumps(plan)
    first, second, session = (c["action"] for c in plan["candidates"])
    assert first["kind"] == "blocked" and "credential_token" in first["reasons"]
    assert second == {"kind": "blocked", "reason": SPLIT}
    assert session["kind"] == "blocked" and session["reasons"] == ["credential_token"]
    out = import_apply(project, text, plan_id=plan["plan_id"])
    assert out["writes"] == [] and out["change_id"] is None and state(project) == (0, 0, 0)


def test_duplicates_against_records_packets_runtime_rows_and_earlier_candidates(project):
    builders.write(project, builders.record_path("kept"), builders.record("kept", body="Records body."))
    builders.write(project, builders.packet_path("waiting"), builders.packet("waiting", body="Packet body."))
    L.reconcile(project)
    from memzoi.lifecycle import add_local

    add_local(project, title="Mine", body="Local body.", actor="dev")
    text = manifest(
        cand("repo", "A", "  Records body.  ", sensitivity="repo-safe"),
        cand("repo", "B", "Packet body.", sensitivity="repo-safe"),
        cand("local", "C", "Local body."),
        cand("local", "D", "Fresh body."),
        cand("session", "E", "Fresh body.", type="episode"),
    )
    plan = plan_import(project, text)
    kinds = [[(m["kind"], m["id"]) for m in c["duplicates"]] for c in plan["candidates"]]
    assert kinds == [
        [("canonical_record", "kept")],
        [("pending_proposal", "waiting")],
        [("runtime_record", "mine")],
        [],
        [("earlier_candidate", "candidate-3")],
    ]
    assert [c["action"]["kind"] for c in plan["candidates"]] == ["duplicate"] * 3 + ["create_runtime", "duplicate"]
    assert plan["summary"]["duplicates"] == 4


@pytest.mark.parametrize(
    ("change", "needle"),
    [
        (("version: memzoi/import\n", "version: memzoi/import-v1\n"), "memzoi/import-v1"),
        (("origin_key: adr-sync:2026-07-18\n", ""), "origin_key"),
        (("  - path: imports/not-read.yml", "  - path: ../outside.yml"), "sources[0]"),
        (("    tags: [workflow]\n", "    tags: [workflow]\n    colour: blue\n"), "unknown field"),
        (("    type: fact\n    title: Local preference", "    title: Local preference"), "type"),
        (("    reason: stale transient note\n", ""), "reason"),
    ],
)
def test_invalid_manifests_are_refused_naming_the_field(project, change, needle):
    text = builders.edit(MIXED, *change, count=1)
    with pytest.raises(L.Refusal) as err:
        plan_import(project, text, where="m.yml")
    assert err.value.code == "invalid_import_manifest" and needle in err.value.message
    assert err.value.message.startswith("m.yml")
    assert state(project) == (0, 0, 0)


def test_type_and_lane_inference_is_memzois(project):
    text = manifest(
        {"destination": "local", "reason": "r", "lane": "procedural", "title": "P", "body": "p"},
        {"destination": "local", "reason": "r", "type": "episode", "title": "E", "body": "e"},
        {"destination": "session", "reason": "r", "type": "fact", "lane": "semantic", "title": "S", "body": "s"},
    )
    got = [(c["type"], c["lane"]) for c in plan_import(project, text)["candidates"]]
    assert got == [("procedure", "procedural"), ("episode", "episodic"), ("episode", "session")]


TWO_PACKETS = manifest(
    cand("repo", "Tokens rotate hourly", "Access tokens rotate every hour.", sensitivity="repo-safe"),
    cand("repo", "Sessions live a day", "Server sessions expire after a day.", sensitivity="repo-safe"),
    cand("local", "I prefer tabs", "Use tabs in my editor."),
    cand("session", "Where I stopped", "Refresh flow half done.", type="episode"),
)


def test_fault_at_every_step_leaves_all_or_nothing(tmp_path, monkeypatch):
    monkeypatch.setenv("MEMZOI_HOME", str(tmp_path / "home"))
    probe = tmp_path / "probe"
    (probe / ".memzoi" / "records").mkdir(parents=True)
    steps: list[str] = []
    L.set_fault_hook(steps.append)
    try:
        apply(probe, TWO_PACKETS)
    finally:
        L.set_fault_hook(None)
    assert any(s.startswith("apply:file1:") for s in steps)  # both packets are written by the change
    outcomes = {}
    for i, step in enumerate(steps):
        root = tmp_path / f"p{i}"
        (root / ".memzoi" / "records").mkdir(parents=True)
        plan = plan_import(root, TWO_PACKETS, actor="dev")

        def hook(name: str, step: str = step) -> None:
            if name == step:
                raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

        L.set_fault_hook(hook)
        try:
            import_apply(root, TWO_PACKETS, plan_id=plan["plan_id"], actor="dev", now=T0)
        except (L.Refusal, OSError):
            pass
        finally:
            L.set_fault_hook(None)
        outcomes[step] = got = state(root)
        assert got in ((0, 0, 0), (2, 1, 1)), (step, got)
    assert outcomes["apply:file1:swap"] == (0, 0, 0)


def test_failed_runtime_write_records_nothing(project, monkeypatch):
    import sqlite3

    def broken(conn, change_id, values):
        raise sqlite3.OperationalError("database or disk is full")

    monkeypatch.setattr(C, "insert", broken)
    with pytest.raises(L.Refusal) as err:
        apply(project, TWO_PACKETS)
    assert err.value.code == "disk_full"
    assert state(project) == (0, 0, 0) and L.history(project) == []


def test_crash_at_every_step_leaves_all_or_nothing(tmp_path, monkeypatch):
    """A process killed (``os._exit``) at each numbered step of an import apply: after the next reconciliation
    the packets, the local record and the checkpoint are all there or none is; or, killed between two file
    switches, the change is ``uncertain`` with no runtime row visible, and ``restore-before`` removes the packet
    already written (as for session-end)."""
    from ..ledger.faults import CRASH_EXIT, run_child

    monkeypatch.setenv("MEMZOI_HOME", str(tmp_path / "home"))

    def project(name: str) -> tuple[Path, str]:
        root = tmp_path / name
        (root / ".memzoi" / "records").mkdir(parents=True)
        return root, plan_import(root, TWO_PACKETS, actor="dev")["plan_id"]

    probe, plan_id = project("probe")
    steps: list[str] = []
    L.set_fault_hook(steps.append)
    try:
        import_apply(probe, TWO_PACKETS, plan_id=plan_id, actor="dev", now=T0)
    finally:
        L.set_fault_hook(None)
    seen = set()
    for n in range(1, len(steps) + 1):
        root, plan_id = project(f"c{n}")
        code, _ = run_child(
            lambda root=root, plan_id=plan_id: import_apply(root, TWO_PACKETS, plan_id=plan_id, actor="dev", now=T0),
            crash_at=n,
        )
        assert code == CRASH_EXIT
        got = state(root)
        if got not in ((0, 0, 0), (2, 1, 1)):
            [change] = L.history(root)
            assert change.status == "uncertain" and got[1:] == (0, 0), (steps[n - 1], got)
            L.recover(root, change.id, "restore-before", actor="dev")
            got = state(root)
            assert got == (0, 0, 0), steps[n - 1]
        seen.add(got)
    assert seen == {(0, 0, 0), (2, 1, 1)}


def test_a_secret_anywhere_is_never_shown_or_stored(project):
    secret = "ghp_" + "R5t6Y7u8I9" * 3  # built at run time, never printed
    text = manifest(
        cand("discard", "Noise", f"old {secret}"),
        cand("needs_review", "Unsure", "Decide.", reason=f"because {secret}"),
        cand("local", "Mine", "Tabs.", tags=[secret]),
        cand("local", "Fine", "Spaces."),
    )
    plan = plan_import(project, text)
    assert secret not in json.dumps(plan)
    actions = [c["action"] for c in plan["candidates"]]
    assert actions[0]["kind"] == "no_write" and actions[0]["reasons"] == ["credential_token"]
    assert actions[1]["kind"] == "blocked" and actions[1]["reasons"] == ["credential_token"]
    assert actions[2]["kind"] == "blocked" and actions[3]["kind"] == "create_runtime"
    out = import_apply(project, text, plan_id=plan["plan_id"])
    assert secret not in json.dumps(out) and [r.title for r in list_local(project)] == ["Fine"]
    leaky = manifest(cand("local", "a", "b"), sources=[{"url": f"https://x.example/?token={secret}"}])
    with pytest.raises(L.Refusal) as err:
        plan_import(project, leaky)
    assert err.value.code == "invalid_import_manifest" and secret not in err.value.message
