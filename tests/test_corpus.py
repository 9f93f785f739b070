"""The real corpus behaves as ``../shared/corpus/README.md`` says."""

from __future__ import annotations

from pathlib import Path

import pytest

from memzoi.judge.analysis import analyze_path, analyze_text, upgrade_text
from memzoi.read.document import frame

from .conftest import CORPUS, corpus_or_skip


def _files(sub: str) -> list[Path]:
    return sorted((CORPUS / sub).rglob("*.md")) if CORPUS.is_dir() else []


def _legacy() -> list[Path]:
    return sorted(CORPUS.glob("legacy/*/.memzoi/records/*.md")) if CORPUS.is_dir() else []


CURRENT = [p for p in _files("memzoi-repo") if p.name != "index.md"]


def test_corpus_layout(corpus):
    assert len(CURRENT) == 24
    assert len(_legacy()) == 20


@pytest.mark.parametrize("path", CURRENT, ids=lambda p: p.stem[:40])
def test_current_records_have_no_error_or_warning(path):
    analysis = analyze_path(path)
    assert analysis.kind == "record"
    assert [(f.code, f.message) for f in analysis.findings if f.severity <= 2] == []
    assert analysis.model is not None


def test_index_md_is_not_a_record(corpus):
    analysis = analyze_path(corpus / "memzoi-repo/.memzoi/index.md")
    assert analysis.kind == "reserved"
    assert analysis.findings == []


@pytest.mark.parametrize("path", _legacy(), ids=lambda p: f"{p.parents[2].name.strip()}-{p.stem[:30]}")
def test_legacy_records_upgrade_clean(path):
    analysis = analyze_path(path)
    codes = [f.code for f in analysis.findings]
    assert codes == ["legacy_profile"], codes
    text = path.read_text(encoding="utf-8")
    new, changes = upgrade_text(text, path)
    assert changes
    upgraded = analyze_text(new, path)
    assert upgraded.findings == []
    before, after = frame(text), frame(new)
    assert after.body == before.body
    assert after.h1_text == before.h1_text
    for key in ("title", "source", "source_ref", "proposal_id", "timestamp", "updated", "type", "status"):
        assert after.data.get(key) == before.data.get(key), key
    assert after.data["id"] == path.stem
    assert after.data["origin"] == {
        "origin_key": f"repository-record:{path.stem}",
        "route": "repository_materialization",
    }
    if after.data["lane"] in ("semantic", "procedural"):
        assert after.data["retention"] == {}


#: Legacy records whose migrated version the current corpus holds (the others have none to compare with).
MIGRATED = [p for p in _legacy() if (CORPUS / "memzoi-repo/.memzoi/records" / p.name).exists()]


def test_most_legacy_records_have_their_migrated_version():
    corpus_or_skip()
    assert len(MIGRATED) >= len(_legacy()) // 2 > 0


@pytest.mark.parametrize("path", MIGRATED, ids=lambda p: f"{p.parents[2].name.strip()}-{p.stem[:30]}")
def test_legacy_upgrade_matches_memzoi_migration(path):
    """Where the current corpus holds the migrated version, the keys the upgrade adds equal Memzoi's output."""
    current = CORPUS / "memzoi-repo/.memzoi/records" / path.name
    new, _ = upgrade_text(path.read_text(encoding="utf-8"), path)
    got, want = frame(new).data, frame(current.read_text(encoding="utf-8")).data
    for key in ("id", "kind", "profile", "retention", "origin", "lane", "content_class"):
        assert got[key] == want[key], key
    before, current = frame(path.read_text(encoding="utf-8")), frame(current.read_text(encoding="utf-8"))
    unchanged = before.body == current.body and all(
        before.data.get(k) == current.data.get(k) for k in ("title", "description", "timestamp", "updated", "status")
    )
    if unchanged:  # the current file is the migration's output, not a later edit: the upgrade equals it exactly
        assert new == current.text


def test_example_proposals_parse(corpus):
    for path in sorted((corpus / "examples/proposals").glob("*.md")):
        analysis = analyze_path(path)
        assert analysis.kind == "proposal", path
        assert [f.code for f in analysis.findings if f.severity == 1] == [], path
        assert analysis.model is not None


def test_example_timestamp_stays_exact_string(corpus):
    analysis = analyze_path(corpus / "examples/example-memory.md")
    ts = analysis.document.data["timestamp"]
    assert isinstance(ts, str) and ts == "2026-07-04T00:00:00Z"
    assert analysis.model.timestamp == "2026-07-04T00:00:00Z"
