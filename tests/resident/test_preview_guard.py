"""Resident decisions act on exactly what their preview showed: ``preview_apply``, ``preview_edit`` and
``preview_remove`` answer ``previewed`` (the fingerprint of the resident file's bytes and of the operation written,
memzoi.ledger.previewed); the approve, edit and removal given it refuse ``preview_stale`` with nothing recorded or
written when the file (anywhere in it, not only the candidate's entry) or the operation changed since. Without it
(the CLI, an older client) the file is read as it is, as before."""

from __future__ import annotations

import itertools

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from memzoi.ledger import Refusal
from memzoi.resident import candidates as db, decisions, service
from memzoi.resident.format import serialize
from memzoi.resident.store import WRITE_LOCK_SUFFIX
from memzoi.resident.views import candidates_for

from .conftest import rules

#: How a refusal names the operation a decision writes (memzoi.resident.candidate_write.OPERATION_LABEL).
OPERATION_LABEL = "the candidate's operation"


def _propose(project, content="Run make lint before pushing."):
    return service.propose(
        project, scope="project", action="add", content=content, reason="asked twice", confidence=0.6, actor="agent"
    ).candidate


def _write(project, entries: list[str]) -> None:
    rules(project).parent.mkdir(parents=True, exist_ok=True)
    rules(project).write_text(serialize(entries), encoding="utf-8")


def _folder(project) -> dict[str, bytes]:
    # the writer lock's companion excepted: taking the lock is no write
    folder = rules(project).parent.iterdir()
    return {p.name: p.read_bytes() for p in folder if p.is_file() and not p.name.endswith(WRITE_LOCK_SUFFIX)}


def _status(project, cid: str) -> str:
    return next(c.status for c in candidates_for(project) if c.id == cid)


def _refused_stale(project, call, named: str) -> Refusal:
    before = _folder(project), [(c.id, c.status, c.content) for c in candidates_for(project)]
    with pytest.raises(Refusal) as err:
        call()
    assert err.value.code == "preview_stale", err.value.message
    assert named in err.value.message and "nothing was written" in err.value.message
    # the file untouched (no .bak copy either), no candidate recorded, decided or edited
    assert (_folder(project), [(c.id, c.status, c.content) for c in candidates_for(project)]) == before
    return err.value


def test_approve_after_nothing_changed_writes_what_the_preview_showed(project):
    _write(project, ["Hand A."])
    cand = _propose(project)
    shown = service.preview_apply(project, cand.id)
    assert shown["previewed"].startswith("mzp1.")
    assert service.preview_apply(project, cand.id)["previewed"] == shown["previewed"]
    assert service.apply(project, cand.id, actor="me", previewed=shown["previewed"]).status == "applied"
    assert rules(project).read_text(encoding="utf-8") == shown["files"][0]["after"]


def test_an_edit_elsewhere_in_the_file_refuses_the_approve(project):
    _write(project, ["Hand A."])
    cand = _propose(project)
    shown = service.preview_apply(project, cand.id)
    _write(project, ["Hand A.", "Unreviewed: skip the tests."])  # another writer, a well-formed file
    path = str(rules(project))
    err = _refused_stale(
        project, lambda: service.apply(project, cand.id, actor="me", previewed=shown["previewed"]), path
    )
    assert err.path == path and _status(project, cand.id) == "pending"
    # the new preview shows the edit; its fingerprint applies
    again = service.preview_apply(project, cand.id)
    assert "Unreviewed" in again["files"][0]["before"]
    assert service.apply(project, cand.id, actor="me", previewed=again["previewed"]).status == "applied"


def test_without_a_fingerprint_the_approve_reads_the_file_as_before(project):
    _write(project, ["Hand A."])
    cand = _propose(project)
    service.preview_apply(project, cand.id)
    _write(project, ["Hand A.", "Hand B."])
    assert service.apply(project, cand.id, actor="me").status == "applied"
    assert "Hand B." in rules(project).read_text(encoding="utf-8")


def test_a_file_created_after_the_preview_refuses_the_approve(project):
    cand = _propose(project)
    shown = service.preview_apply(project, cand.id)
    assert shown["files"][0]["before"] is None
    _write(project, ["Made meanwhile."])
    _refused_stale(
        project, lambda: service.apply(project, cand.id, actor="me", previewed=shown["previewed"]), "RULES.md"
    )


def test_a_candidate_edited_after_the_preview_refuses_the_approve(project):
    _write(project, ["Hand A."])
    cand = _propose(project)
    shown = service.preview_apply(project, cand.id)
    with db.connect() as conn:
        assert db.edit_content(conn, cand.id, "Run make lint, then push --force.")
    err = _refused_stale(
        project, lambda: service.apply(project, cand.id, actor="me", previewed=shown["previewed"]), OPERATION_LABEL
    )
    assert err.path is None  # the file did not change: the operation did


def test_edit_and_approve_acts_on_the_previewed_file_and_content(project):
    _write(project, ["Hand A."])
    cand = _propose(project)
    shown = decisions.preview_edit(project, cand.id, "Run make lint and make test.")
    # other content than the preview showed
    _refused_stale(
        project,
        lambda: decisions.edit_and_apply(project, cand.id, "Something else.", actor="me", previewed=shown["previewed"]),
        OPERATION_LABEL,
    )
    _write(project, ["Hand A.", "Unreviewed."])
    _refused_stale(
        project,
        lambda: decisions.edit_and_apply(
            project, cand.id, "Run make lint and make test.", actor="me", previewed=shown["previewed"]
        ),
        "RULES.md",
    )
    _write(project, ["Hand A."])  # back to the bytes shown
    done = decisions.edit_and_apply(
        project, cand.id, "Run make lint and make test.", actor="me", previewed=shown["previewed"]
    )
    assert done.status == "applied" and rules(project).read_text(encoding="utf-8") == shown["files"][0]["after"]


def test_remove_entry_acts_on_the_previewed_file(project):
    _write(project, ["Keep me.", "Drop me."])
    shown = decisions.preview_remove(project, "project", "Drop")
    _write(project, ["Keep me.", "Drop me.", "Unreviewed."])
    _refused_stale(
        project,
        lambda: decisions.remove_entry(project, "project", "Drop", actor="me", previewed=shown["previewed"]),
        "RULES.md",
    )
    _write(project, ["Keep me.", "Drop me."])
    done = decisions.remove_entry(project, "project", "Drop", actor="me", previewed=shown["previewed"])
    assert done.status == "applied" and rules(project).read_text(encoding="utf-8") == shown["files"][0]["after"]


def test_a_malformed_fingerprint_is_refused(project):
    _write(project, ["Hand A."])
    cand = _propose(project)
    with pytest.raises(Refusal) as err:
        service.apply(project, cand.id, actor="me", previewed="not-a-fingerprint")
    assert err.value.code == "invalid_arguments" and _status(project, cand.id) == "pending"


_ENTRY = st.sampled_from(["Alpha.", "Beta.", "Gamma rule.", "Delta: use tabs."])
_serial = itertools.count()


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(shown=st.lists(_ENTRY, max_size=3, unique=True), now=st.lists(_ENTRY, max_size=3, unique=True))
def test_approve_applies_iff_the_file_holds_what_the_preview_showed(project, shown, now):
    """Property: with the preview's fingerprint, an approve applies exactly when the file's bytes are the ones the
    preview showed; otherwise ``preview_stale`` and the file and the candidate stay as they were."""
    _write(project, shown)
    cand = _propose(project, f"Candidate number {next(_serial)}.")
    planned = service.preview_apply(project, cand.id)
    _write(project, now)
    if serialize(shown) == serialize(now):
        assert service.apply(project, cand.id, actor="me", previewed=planned["previewed"]).status == "applied"
        assert rules(project).read_text(encoding="utf-8") == planned["files"][0]["after"]
    else:
        _refused_stale(
            project, lambda: service.apply(project, cand.id, actor="me", previewed=planned["previewed"]), "RULES.md"
        )
        assert _status(project, cand.id) == "pending"
