"""Session-end routing acts on exactly what its preview showed: ``routing_preview`` answers ``previewed`` (the
fingerprint of the input file's bytes, the packets it creates and the checkpoint set version,
memzoi.ledger.previewed); ``routing_apply`` with it refuses ``preview_stale``, with nothing written and nothing
ledgered, when any of them changed since. Without it (the CLI, an older client) the file is routed as before."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from memzoi import ledger as L
from memzoi.lifecycle import checkpoints as cps
from memzoi.lifecycle.routing import routing_apply, routing_preview
from memzoi.lifecycle.session_end import session_end
from tests.lifecycle.test_session_end import FULL, SEED, candidate, doc

PENDING = ".memzoi/proposals/pending"


@pytest.fixture
def project(runtime_project: Path) -> Path:
    return runtime_project


def state(root: Path) -> tuple[dict[str, bytes], list[str], list[str], int]:
    """What a routing may write: the project's files below ``.memzoi``, the ledger's changes, the visible local
    records and the checkpoint set."""
    files = {p.relative_to(root).as_posix(): p.read_bytes() for p in (root / ".memzoi").rglob("*") if p.is_file()}
    ledger = L.Ledger.for_project(root)
    with ledger.connect() as conn:
        local = [r[0] for r in conn.execute("SELECT id FROM local_record")]
        version = cps.set_version(conn)
    return files, [c.id for c in L.history(root)], local, version


def write(root: Path, text: str, name: str = "session.yml") -> Path:
    path = root / name
    path.write_text(text, encoding="utf-8")
    return path


def apply(root: Path, path: Path, shown: dict, **kw):
    text = path.read_bytes().decode("utf-8")  # what the server reads at Apply
    return routing_apply(root, path, text, actor="dev", previewed=shown["previewed"], **kw)


def refused_stale(root: Path, path: Path, shown: dict, named: str) -> L.Refusal:
    before = state(root)
    with pytest.raises(L.Refusal) as err:
        apply(root, path, shown)
    assert err.value.code == "preview_stale", err.value.message
    assert named in err.value.message and "nothing was written" in err.value.message
    assert state(root) == before  # no packet, no local record, no checkpoint, no ledger row
    return err.value


def test_nothing_changed_routes_what_the_preview_showed(project):
    path = write(project, FULL)
    shown = routing_preview(project, path, FULL, actor="dev")
    assert isinstance(shown["previewed"], str) and shown["previewed"].startswith("mzp1.")
    assert routing_preview(project, path, FULL, actor="dev")["previewed"] == shown["previewed"]
    out = apply(project, path, shown)
    assert out["status"] == "routed" and out["written"]
    assert [c.get("path") for c in out["candidates"]] == [c.get("path") for c in shown["candidates"]]


def test_an_input_file_edited_after_the_preview_is_refused(project):
    path = write(project, SEED)
    shown = routing_preview(project, path, SEED, actor="dev")
    edited = doc(
        candidate(
            "repo", "Protected routes validate sessions server-side", "Validate sessions.", sensitivity="repo-safe"
        ),
        candidate("local", "Unreviewed", "A local record nobody saw."),
        candidate("session", "Unreviewed too", "A checkpoint nobody saw."),
    )
    write(project, edited)
    err = refused_stale(project, path, shown, "session.yml")
    assert err.path == "session.yml"
    # the new preview shows the edit, and its fingerprint routes it
    again = routing_preview(project, path, edited, actor="dev")
    assert [c["destination"] for c in again["candidates"]] == ["repo", "local", "session"]
    assert apply(project, path, again)["written"]


def test_without_a_fingerprint_the_file_is_routed_as_before(project):
    path = write(project, SEED)
    shown = routing_preview(project, path, SEED, actor="dev")
    write(project, FULL)
    out = routing_apply(project, path, FULL, actor="dev", expected_version=shown["expected_version"])
    assert out["status"] == "routed" and len(out["candidates"]) == len(json.loads(FULL)["candidates"])


def test_a_checkpoint_added_after_the_preview_is_refused_without_expected_version(project):
    path = write(project, FULL)
    shown = routing_preview(project, path, FULL, actor="dev")
    session_end(project, text=doc(candidate("session", "Elsewhere", "Another session.")), actor="dev")  # another writer
    write(project, FULL)  # same bytes
    before_session = state(project)
    with pytest.raises(L.Refusal) as err:
        apply(project, path, shown)
    assert err.value.code == "preview_stale" and "checkpoint set version" in err.value.message
    assert state(project) == before_session


def test_a_packet_created_at_the_previewed_path_is_refused(project):
    path = write(project, SEED)
    shown = routing_preview(project, path, SEED, actor="dev")
    [packet] = [c["path"] for c in shown["candidates"] if c.get("path")]
    (project / packet).parent.mkdir(parents=True, exist_ok=True)
    (project / packet).write_text("made meanwhile\n")
    refused_stale(project, path, shown, packet)


def test_a_blocked_preview_does_not_route_a_file_fixed_since(project):
    blocked = FULL.replace('"sensitivity": "repo-safe"', '"sensitivity": "secret"')
    path = write(project, blocked)
    shown = routing_preview(project, path, blocked, actor="dev")
    assert shown["blocked"] and shown["previewed"]
    with pytest.raises(L.Refusal) as err:  # unchanged: blocked again, nothing written
        apply(project, path, shown)
    assert err.value.code == "session_end_blocked"
    write(project, FULL)  # fixed by someone else: the reviewer saw none of it
    refused_stale(project, path, shown, "session.yml")


def test_a_preview_that_wrote_nothing_does_not_route_an_edit(project):
    quiet = doc({"destination": "discard", "title": "noise", "body": "noise"})
    path = write(project, quiet)
    shown = routing_preview(project, path, quiet, actor="dev")
    write(project, FULL)
    refused_stale(project, path, shown, "session.yml")
    # and the other way round: the writes shown became a discard-only file
    path = write(project, FULL)
    shown = routing_preview(project, path, FULL, actor="dev")
    write(project, quiet)
    refused_stale(project, path, shown, "session.yml")


def test_a_malformed_fingerprint_is_refused(project):
    path = write(project, SEED)
    before = state(project)
    with pytest.raises(L.Refusal) as err:
        apply(project, path, {"previewed": "not-a-fingerprint"})
    assert err.value.code == "invalid_arguments"
    assert state(project) == before


_TITLES = st.sampled_from(["Alpha rule", "Beta rule", "Gamma note", "Delta note"])
_DEST = st.sampled_from(["repo", "local", "session", "discard", "needs_review"])
_CANDS = st.lists(st.tuples(_DEST, _TITLES, st.sampled_from(["One body.", "Two body.", "Three body."])), max_size=3)


def _text(cands: list[tuple[str, str, str]]) -> str:
    out = []
    for dest, title, body in cands:
        extra = {"sensitivity": "repo-safe"} if dest == "repo" else {}
        out.append(candidate(dest, title, f"{title}: {body}", **extra))
    return doc(*out)


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(shown_cands=_CANDS, applied_cands=_CANDS)
def test_apply_routes_only_the_previewed_bytes(runtime_project: Path, shown_cands, applied_cands):
    """Property: with the preview's fingerprint, an apply routes iff the file holds the bytes the preview showed;
    otherwise it is refused with nothing written (stale, or the batch's own refusal)."""
    root = Path(tempfile.mkdtemp(dir=runtime_project.parent)) / "repo"
    (root / ".memzoi" / "records").mkdir(parents=True)
    shown_text, applied_text = _text(shown_cands), _text(applied_cands)
    path = write(root, shown_text)
    shown = routing_preview(root, path, shown_text, actor="dev")
    write(root, applied_text)
    before = state(root)
    try:
        out = apply(root, path, shown)
    except L.Refusal as err:
        assert state(root) == before
        assert err.code != "preview_stale" or applied_text != shown_text
        assert err.code == "preview_stale" or shown["blocked"] or applied_text == shown_text or err.code in (
            "session_end_blocked", "duplicate_content",
        )  # fmt: skip
        return
    assert applied_text == shown_text
    assert [c.get("path") for c in out["candidates"]] == [c.get("path") for c in shown.get("candidates", [])]
