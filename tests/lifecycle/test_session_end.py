"""``session-end`` routing (memzoi.lifecycle.session_end): the seed's example, each destination's outcome, the
all-or-nothing repo-subset blocking with a classification-only report, --from-checkpoint (structured files only),
replay and conflict, one ledgered change undoable as one, and transactional cleanup by fault injection at every
step of the change."""

from __future__ import annotations

import errno
import json
import os
import sqlite3
from datetime import UTC, datetime
from pathlib import Path

import pytest

from memzoi import ledger as L
from memzoi.lifecycle import checkpoints as C, list_local, session_end as S

PENDING = ".memzoi/proposals/pending"
T0 = datetime(2026, 7, 1, 9, 0, tzinfo=UTC)
#: The seed's example (Memzoi lifecycle document, "Explicit session-end routing"), verbatim.
SEED = """task: "Implement auth middleware"
candidates:
  - destination: repo
    type: decision
    lane: semantic
    title: Protected routes validate sessions server-side
    body: Protected routes must validate sessions server-side.
    sensitivity: repo-safe
"""


def candidate(destination: str, title: str, body: str, **extra: str) -> dict:
    kinds = {"session": ("episode", "session"), "local": ("preference", "semantic")}
    type_, lane = kinds.get(destination, ("decision", "semantic"))
    return {"destination": destination, "type": type_, "lane": lane, "title": title, "body": body, **extra}


def doc(*cands: dict, task: str = "Implement auth middleware") -> str:
    """The session-end YAML (JSON is YAML 1.2)."""
    return json.dumps({"task": task, "candidates": list(cands)}, indent=1)


FULL = doc(
    candidate("repo", "Tokens rotate hourly", "Access tokens rotate every hour.", sensitivity="repo-safe"),
    candidate("local", "I prefer tabs", "Use tabs in my editor."),
    candidate("session", "Where I stopped", "Refresh flow half done."),
    {"destination": "discard", "title": "noise", "body": "noise"},
    {"destination": "needs_review", "title": "unsure", "body": "unsure"},
)


@pytest.fixture
def project(runtime_project: Path) -> Path:
    return runtime_project


def pending(root: Path) -> list[str]:
    folder = root / PENDING
    return sorted(p.name for p in folder.iterdir()) if folder.exists() else []


def route(root: Path, text: str, **kw):
    return S.session_end(root, text=text, actor="dev", now=T0, **kw)


def test_seed_example_creates_one_pending_packet(project):
    out = route(project, SEED)
    [item] = out["candidates"]
    assert item["outcome"] == "created" and item["destination"] == "repo"
    assert pending(project) == [f"{item['proposal_id']}.md"]
    text = (project / item["path"]).read_text(encoding="utf-8")
    assert "sensitivity: repo-safe" in text and "route: session_end" in text and "status: proposed" in text
    assert not any((project / ".memzoi" / "records").iterdir())  # never a canonical record


def test_each_destination_routes_deterministically(project):
    out = route(project, FULL)
    outcomes = [(c["destination"], c["outcome"]) for c in out["candidates"]]
    assert outcomes == [
        ("repo", "created"),
        ("local", "created"),
        ("session", "created"),
        ("discard", "skipped"),
        ("needs_review", "blocked"),
    ]
    assert out["candidates"][4]["reasons"] == ["needs_review"]
    assert len(pending(project)) == 1
    [local] = list_local(project)
    assert local.title == "I prefer tabs" and local.source_kind == "session_end" and local.sensitivity == "unknown"
    [cp] = C.list_checkpoints(project)[1]
    assert (cp.title, cp.body, cp.task, cp.source_kind) == (
        "Where I stopped",
        "Refresh flow half done.",
        "Implement auth middleware",
        "session_end",
    )
    assert cp.to_json(T0)["type"] == "episode" and cp.to_json(T0)["lane"] == "session"
    assert out["candidates"][2]["checkpoint_id"] == cp.id


def test_only_discard_and_needs_review_write_nothing(project):
    text = doc({"destination": "discard"}, {"destination": "needs_review", "title": "t", "body": "b"})
    out = route(project, text)
    assert out["written"] is False and out["change_id"] is None
    assert pending(project) == [] and list_local(project) == [] and C.list_checkpoints(project)[1] == []


@pytest.mark.parametrize(
    "bad",
    [
        {"sensitivity": "unknown"},
        {},
        {"sensitivity": "local-only"},
        {"sensitivity": "repo-safe", "content_class": "temporary_task_state"},
    ],
)
def test_one_unsafe_repo_candidate_blocks_the_whole_batch_without_content(project, bad):
    planted_title, planted_body = "PLANTED-TITLE-7Q", "PLANTED-BODY-9Z is private"
    text = doc(
        candidate("repo", "Safe one", "A safe durable fact.", sensitivity="repo-safe"),
        candidate("repo", planted_title, planted_body, **bad),
        candidate("local", "Local one", "Local text."),
        candidate("session", "Session one", "Session text."),
        task="TASK-PLANTED-3X",
    )
    with pytest.raises(S.BatchBlocked) as err:
        route(project, text)
    report = json.dumps(err.value.to_json()) + str(err.value)
    for planted in (planted_title, planted_body, "Safe one", "Local one", "Session text", "TASK-PLANTED-3X"):
        assert planted not in report
    items = err.value.report["candidates"]
    assert items[1]["outcome"] == "blocked" and items[1]["reasons"]
    assert [i["outcome"] for i in (items[0], items[2], items[3])] == ["not_written"] * 3
    assert pending(project) == [] and list_local(project) == [] and C.list_checkpoints(project)[1] == []


def test_a_detector_finding_blocks_the_batch_and_is_never_stored(project):
    secret = "postgres://admin:" + "Vq8rT2nL" + "5xK9wZ3p" + "@db.internal.example:5432/app"
    for dest in ("repo", "local", "session"):
        text = doc(
            candidate(dest, "Connection", f"Use {secret}", sensitivity="repo-safe"),
            candidate("repo", "Safe", "A safe fact.", sensitivity="repo-safe"),
        )
        with pytest.raises(S.BatchBlocked) as err:
            route(project, text)
        assert "Vq8rT2nL5xK9wZ3p" not in json.dumps(err.value.to_json())
    home = Path(os.environ["MEMZOI_HOME"])
    assert all(b"Vq8rT2nL5xK9wZ3p" not in p.read_bytes() for p in home.rglob("*") if p.is_file())
    assert pending(project) == []


def test_invalid_input_is_refused_naming_the_field(project):
    for text, needle in (
        (doc({"destination": "team"}), "destination"),
        (doc(candidate("session", "s", "b") | {"type": "fact"}), "episode"),
        (doc({"destination": "discard", "extra": 1}), "extra"),
        ("task: [unclosed", "YAML"),
        ("candidates: []", "task"),
    ):
        with pytest.raises(L.Refusal) as err:
            route(project, text)
        assert err.value.code == "invalid_session_end" and needle in err.value.message


def test_replay_and_operation_id_conflict(project):
    first = route(project, FULL, operation_id="se-1", expected_version=0)
    again = route(project, FULL, operation_id="se-1", expected_version=0)  # version moved on: replay comes first
    assert again["replayed"] is True and again["change_id"] == first["change_id"]
    assert len(pending(project)) == 1 and len(list_local(project)) == 1
    with pytest.raises(L.Refusal) as err:
        route(project, SEED, operation_id="se-1", expected_version=0)
    assert err.value.code == "operation_id_conflict"
    with pytest.raises(L.Refusal) as err:
        route(project, SEED, operation_id="se-2", expected_version=0)
    assert err.value.code == "version_conflict"
    assert len(pending(project)) == 1


def test_one_change_undone_as_one(project):
    out = route(project, FULL)
    change = L.get_change(project, out["change_id"])
    assert change.operation == "session_end" and [f.path for f in change.files] == [out["candidates"][0]["path"]]
    L.undo_change(project, out["change_id"], actor="dev")
    assert pending(project) == [] and list_local(project) == [] and C.list_checkpoints(project)[1] == []


def test_from_checkpoint_reads_only_structured_files(project):
    note = C.add_checkpoint(project, task="T", body="free text: remember tokens", actor="dev", now=T0)
    with pytest.raises(L.Refusal) as err:
        S.session_end(project, checkpoint_id=note["checkpoint"]["id"], actor="dev", now=T0)
    assert err.value.code == "not_structured"
    bad_file = C.add_checkpoint(project, task="T", body="just some notes", source_kind="file", actor="dev", now=T0)
    with pytest.raises(L.Refusal) as err:
        S.session_end(project, checkpoint_id=bad_file["checkpoint"]["id"], actor="dev", now=T0)
    assert err.value.code == "not_structured"
    good = C.add_checkpoint(project, task="T", body=SEED, source_kind="file", actor="dev", now=T0)
    cid = good["checkpoint"]["id"]
    with pytest.raises(L.Refusal) as err:
        S.session_end(project, checkpoint_id=cid, expected_version=2, actor="dev", now=T0)
    assert err.value.code == "version_conflict"
    out = S.session_end(project, checkpoint_id=cid, expected_version=1, actor="dev", now=T0)
    assert out["candidates"][0]["outcome"] == "created" and len(pending(project)) == 1


def test_duplicate_bodies_are_refused(project):
    route(project, SEED)
    with pytest.raises(L.Refusal) as err:
        route(project, SEED)
    assert err.value.code == "duplicate_content"
    twice = doc(
        candidate("repo", "A", "Same body.", sensitivity="repo-safe"),
        candidate("repo", "B", "Same body.", sensitivity="repo-safe"),
    )
    with pytest.raises(L.Refusal) as err:
        route(project, twice)
    assert err.value.code == "duplicate_content" and len(pending(project)) == 1


TWO_PACKETS = doc(
    candidate("repo", "Tokens rotate hourly", "Access tokens rotate every hour.", sensitivity="repo-safe"),
    candidate("repo", "Sessions live a day", "Server sessions expire after a day.", sensitivity="repo-safe"),
    candidate("local", "I prefer tabs", "Use tabs in my editor."),
    candidate("session", "Where I stopped", "Refresh flow half done."),
)


def _steps(project: Path) -> list[str]:
    seen: list[str] = []
    L.set_fault_hook(seen.append)
    try:
        route(project, TWO_PACKETS)
    finally:
        L.set_fault_hook(None)
    return seen


def _state(root: Path) -> tuple[int, int, int]:
    L.reconcile(root)
    return len(pending(root)), len(list_local(root)), len(C.list_checkpoints(root)[1])


def test_fault_at_every_step_leaves_all_or_nothing(tmp_path, monkeypatch):
    monkeypatch.setenv("MEMZOI_HOME", str(tmp_path / "home"))
    probe = tmp_path / "probe"
    (probe / ".memzoi" / "records").mkdir(parents=True)
    steps = _steps(probe)
    assert any(s.startswith("apply:file1:") for s in steps)  # both packets are written by the change
    outcomes = {}
    for i, step in enumerate(steps):
        root = tmp_path / f"p{i}"
        (root / ".memzoi" / "records").mkdir(parents=True)

        def hook(name: str, step: str = step) -> None:
            if name == step:
                raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

        L.set_fault_hook(hook)
        try:
            route(root, TWO_PACKETS)
        except (L.Refusal, OSError):
            pass
        finally:
            L.set_fault_hook(None)
        state = _state(root)
        assert state in ((0, 0, 0), (2, 1, 1)), (step, state)
        outcomes[step] = state
    assert (0, 0, 0) in outcomes.values() and outcomes["apply:file1:swap"] == (0, 0, 0)


def test_failed_runtime_write_records_nothing(project, monkeypatch):
    def broken(conn, change_id, values):
        raise sqlite3.OperationalError("database or disk is full")

    monkeypatch.setattr(C, "insert", broken)
    with pytest.raises(L.Refusal) as err:
        route(project, TWO_PACKETS)
    assert err.value.code == "disk_full"
    assert _state(project) == (0, 0, 0)
    assert L.history(project) == []


def test_crash_at_every_step_leaves_all_or_nothing(tmp_path, monkeypatch):
    """A process killed (``os._exit``) at each numbered step: after the next command's reconciliation the packets,
    the local record and the checkpoint are all there or none is; or, killed between two file switches, the change
    is ``uncertain`` (the ledger never guesses; Memzoi makes no crash-atomicity claim across several renames either)
    with no runtime row visible, and the explicit recovery ``restore-before`` removes the packet already written."""
    from ..ledger.faults import CRASH_EXIT, run_child

    monkeypatch.setenv("MEMZOI_HOME", str(tmp_path / "home"))
    probe = tmp_path / "probe"
    (probe / ".memzoi" / "records").mkdir(parents=True)
    steps = _steps(probe)
    seen = set()
    for n in range(1, len(steps) + 1):
        root = tmp_path / f"c{n}"
        (root / ".memzoi" / "records").mkdir(parents=True)
        code, _ = run_child(lambda root=root: route(root, TWO_PACKETS), crash_at=n)
        assert code == CRASH_EXIT
        state = _state(root)
        if state not in ((0, 0, 0), (2, 1, 1)):
            [change] = L.history(root)
            assert change.status == "uncertain" and state[1:] == (0, 0), (steps[n - 1], state)
            L.recover(root, change.id, "restore-before", actor="dev")
            state = _state(root)
            assert state == (0, 0, 0), steps[n - 1]
        seen.add(state)
    assert seen == {(0, 0, 0), (2, 1, 1)}


def test_a_lone_surrogate_is_refused_not_stored(project):
    text = doc(candidate("local", "Escaped", "bad SURROGATE escape")).replace("SURROGATE", "\\ud800")
    assert "bad \\ud800 escape" in text  # a YAML escape of a lone surrogate
    with pytest.raises(L.Refusal) as err:
        route(project, text)
    assert err.value.code == "invalid_session_end"  # yaml_syntax here, or the field named as a lone surrogate
    with pytest.raises(L.Refusal) as err:
        C.add_checkpoint(project, task="T", body="bad \ud800", actor="dev", now=T0)
    assert err.value.code == "invalid_encoding"
    assert list_local(project) == [] and C.list_checkpoints(project)[1] == []
