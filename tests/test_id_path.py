"""A record whose frontmatter ``id`` differs from its path id: Memzoi's parser accepts it and keys the record by
its path (reference §1.2), so it is a warning here and every cross-file and lifecycle lookup uses the path id."""

from __future__ import annotations

from memzoi.base.findings import Severity
from memzoi.judge.analysis import analyze_text, record_id_of
from memzoi.judge.revision import record_revision
from memzoi.project.crossfile import Workspace
from memzoi.project.refusals import refusals

from .test_crossfile import codes, put, record, rpath


def test_mismatch_is_a_warning_naming_the_path_key():
    text = record("old-name")
    a = analyze_text(text, rpath("new-name"))
    [f] = a.findings
    assert (f.code, f.severity) == ("id_path_mismatch", Severity.WARNING)
    assert "Memzoi keys the record by its path" in f.message and "`new-name`" in f.message
    assert a.model is not None and record_id_of(a) == "new-name"
    assert refusals(a.findings) == []  # not a refusal of admission (canonical-path-id concerns the path itself)
    assert a.text[f.start : f.end] == "old-name" and f.fixes


def test_crossfile_references_resolve_by_path_id():
    ws = Workspace()
    put(ws, rpath("new-name"), record("old-name", status="superseded"))
    put(ws, rpath("by-path"), record("by-path", extra="supersedes: new-name\n"))
    put(ws, rpath("by-frontmatter"), record("by-frontmatter", extra="supersedes: old-name\n"))
    assert "dangling_reference" not in codes(ws, rpath("by-path"))
    assert "dangling_reference" in codes(ws, rpath("by-frontmatter"))


def test_self_reference_rules_use_the_path_id():
    text = record("old-name", extra="supersedes: new-name\n")
    assert "invalid_value" in [f.code for f in analyze_text(text, rpath("new-name")).findings]
    text = record("old-name", extra="supersedes: old-name\n")
    assert "invalid_value" not in [f.code for f in analyze_text(text, rpath("new-name")).findings]


def test_attestation_hashes_the_path_id():
    a = analyze_text(record("old-name"), rpath("new-name"))
    assert a.attestation is not None
    doc = a.document
    assert record_revision("new-name", doc.data, doc.body) != record_revision("old-name", doc.data, doc.body)
