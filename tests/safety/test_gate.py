"""The git-plane gate on records and pending proposals (Memzoi policy.rs / admission, reference §3.2, §4.3)."""

from __future__ import annotations

import pytest

from memzoi.base.findings import Severity
from memzoi.judge.analysis import analyze_path
from memzoi.judge.config import clear_cache
from memzoi.judge.gate_codes import CONTENT_CLASS_CODES

from ..builders import edit
from .helpers import proposal, record, safety, workspace


@pytest.fixture(autouse=True)
def _fresh_config():
    clear_cache()
    yield
    clear_cache()


def codes(findings):
    return sorted(f.code for f in findings)


def test_clean_record_and_proposal(tmp_path):
    mz = workspace(tmp_path)
    assert safety(record(), mz / "records" / "rec.md") == []
    assert safety(proposal(), mz / "proposals" / "pending" / "prop.md") == []


@pytest.mark.parametrize("visibility", ["team", "org", "private", "public"])
def test_record_visibility_must_be_exactly_repo(tmp_path, visibility):
    text = record(visibility=visibility)
    (f,) = safety(text, workspace(tmp_path) / "records" / "rec.md")
    assert f.code == "visibility_not_repository_safe" and f.severity == Severity.ERROR
    assert text[f.start : f.end] == visibility  # anchored on the deciding value
    assert ("admission" in f.message) == (visibility == "public")


@pytest.mark.parametrize("scope", ["personal", "team", "org", "agent", "imported_untrusted"])
def test_record_scope_not_repository(tmp_path, scope):
    text = record(scope=scope)
    (f,) = safety(text, workspace(tmp_path) / "records" / "rec.md")
    assert f.code == "scope_not_repository" and text[f.start : f.end] == scope


def test_project_scope_needs_the_configured_id(tmp_path):
    path = workspace(tmp_path) / "records" / "rec.md"
    # no project id configured
    (f,) = safety(record(scope="project", scope_id="acme"), path)
    assert f.code == "scope_project_mismatch" and "no `[project] id` is configured" in f.message
    # configured, but the record has another id / no id
    workspace(tmp_path, '[project]\nid = "memzoi"\n')
    text = record(scope="project", scope_id="acme")
    (f,) = safety(text, path)
    assert f.code == "scope_project_mismatch" and text[f.start : f.end] == "acme"
    text = record(scope="project")
    (f,) = safety(text, path)
    assert f.code == "scope_project_mismatch" and text[f.start : f.end] == "project"
    # matching id: allowed
    assert safety(record(scope="project", scope_id="memzoi"), path) == []


@pytest.mark.parametrize("content_class", sorted(CONTENT_CLASS_CODES))
def test_content_classes_map_to_memzoi_codes(tmp_path, content_class):
    text = record(content_class=content_class)
    (f,) = safety(text, workspace(tmp_path) / "records" / "rec.md")
    assert f.code == CONTENT_CLASS_CODES[content_class][0]
    assert text[f.start : f.end] == content_class


def test_kebab_case_content_class_is_read_like_snake_case(tmp_path):
    (f,) = safety(record(content_class="raw-transcript"), workspace(tmp_path) / "records" / "rec.md")
    assert f.code == "raw_transcript"


def test_invalid_values_are_left_to_the_schema(tmp_path):
    path = workspace(tmp_path) / "records" / "rec.md"
    assert safety(record(visibility="everyone", scope="galaxy", content_class="novel"), path) == []


@pytest.mark.parametrize(
    "sensitivity, local",
    [
        ("local-only", True),
        ("sensitive", True),
        ("secret", False),
        ("raw-transcript", True),
        ("private-personal-data", True),
        ("temporary-state", True),
        ("unknown", False),
    ],
)
def test_pending_proposal_sensitivity(tmp_path, sensitivity, local):
    text = proposal(sensitivity=sensitivity)
    (f,) = safety(text, workspace(tmp_path) / "proposals" / "pending" / "prop.md")
    assert f.code == "sensitivity_not_repo_safe"
    # The packet is committed: what it declares non-repo-safe is already in git (Memzoi's scan blocks it).
    assert f.severity == Severity.ERROR
    assert "This proposal cannot be applied to the repository" in f.message
    assert "already in git" in f.message
    assert ("route it to local memory" in f.message) is local and f.data["route_local"] is local
    assert text[f.start : f.end] == sensitivity


def test_pending_proposal_scope_and_content_class(tmp_path):
    path = workspace(tmp_path) / "proposals" / "pending" / "prop.md"
    got = safety(proposal(scope="kind: personal", content_class="temporary_task_state"), path)
    assert codes(got) == ["scope_not_repository", "temporary_task_state"]
    assert all(f.data["route_local"] for f in got)
    # Only "cannot be applied yet": warnings.
    assert all(f.severity == Severity.WARNING for f in got)
    text = proposal(scope="kind: project\nid: other")
    (f,) = safety(text, path)
    assert f.code == "scope_project_mismatch" and text[f.start : f.end] == "other"
    workspace(tmp_path, '[project]\nid = "other"\n')
    assert safety(text, path) == []


def test_resolved_packets_are_not_gated(tmp_path):
    mz = workspace(tmp_path)
    text = edit(proposal(sensitivity="secret"), "status: proposed", "status: rejected")
    assert safety(text, mz / "proposals" / "resolved" / "rejected" / "prop.md") == []


def test_record_sensitivity_is_implicitly_repo_safe(tmp_path):
    # a record has no sensitivity field: it is repo-safe by being in the repository
    assert safety(record(), workspace(tmp_path) / "records" / "rec.md") == []


def test_candidate_too_large(tmp_path):
    path = workspace(tmp_path) / "records" / "rec.md"
    big = "word " * (110 * 1024)  # 550 KiB body
    found = [f for f in safety(record(body=big), path) if f.code == "candidate_too_large"]
    assert len(found) == 1 and "body" in found[0].message
    huge = record(extra=f'description: "{"x" * (520 * 1024)}"\n')
    found = [f for f in safety(huge, path) if f.code == "candidate_too_large"]
    assert any("`description`" in f.message for f in found)


def test_gate_infers_role_from_kind_outside_memzoi(tmp_path):
    text = record(visibility="team")
    assert codes(safety(text, tmp_path / "notes" / "rec.md")) == ["visibility_not_repository_safe"]


@pytest.mark.corpus
def test_corpus_examples(corpus):
    ex = corpus / "examples"
    got = [f for f in analyze_path(ex / "example-memory.md").findings if f.code == "visibility_not_repository_safe"]
    assert len(got) == 1 and got[0].severity == Severity.ERROR  # the corpus README: refused for visibility: team
    # scope: project without an id, and no project id configured (Memzoi: scope_project_mismatch)
    compact = analyze_path(ex / "compact-canonical-from-proposal.md")
    assert [f.code for f in compact.findings if f.code.startswith("scope")] == ["scope_project_mismatch"]
    for path in sorted((ex / "proposals").glob("*.md")):
        found = [f for f in analyze_path(path).findings if f.code.startswith(("scope", "sensitivity"))]
        text = path.read_text(encoding="utf-8")
        if "kind: project" in text:
            assert [(f.code, f.severity) for f in found] == [("scope_project_mismatch", Severity.WARNING)], path
            assert "cannot be applied" in found[0].message
        else:
            assert found == [], path


def test_oversized_pending_proposal_cannot_be_applied(tmp_path):
    path = workspace(tmp_path) / "proposals" / "pending" / "prop.md"
    found = [f for f in safety(proposal(body="word " * (110 * 1024)), path) if f.code == "candidate_too_large"]
    assert len(found) == 1
    assert found[0].severity == Severity.WARNING and "cannot be applied" in found[0].message


def test_scope_project_mismatch_suggests_the_valid_repo_scope_for_the_file_kind():
    # A record's scope is a scalar, a packet's a mapping: the fix text must name a form that validates there.
    from memzoi.judge.analysis import analyze_text

    from .helpers import proposal, record

    rec = analyze_text(record(scope="project"), "ws/.memzoi/records/rec.md")
    [r] = [f for f in rec.findings if f.code == "scope_project_mismatch"]
    assert "`scope: repo`" in r.message
    pkt = analyze_text(edit(proposal(), "kind: repo", "kind: project", 1), "ws/.memzoi/proposals/pending/p.md")
    [p] = [f for f in pkt.findings if f.code == "scope_project_mismatch"]
    assert "`scope: {kind: repo}`" in p.message and "`scope: repo`" not in p.message
