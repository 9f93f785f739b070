"""No gate or detector finding on Memzoi's own repository memory; arbitrary text never breaks the detectors."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from memzoi.judge.analysis import analyze_path, analyze_text
from memzoi.safety import collect_hits

from .helpers import SAFETY_CODES, record


@pytest.mark.corpus
def test_memzoi_repo_has_no_safety_findings(corpus):
    paths = sorted((corpus / "memzoi-repo").rglob("*.md"))
    assert len(paths) >= 24
    for path in paths:
        found = [f for f in analyze_path(path).findings if f.code in SAFETY_CODES]
        assert found == [], (path.name, [(f.code, f.message) for f in found])


@pytest.mark.corpus
def test_legacy_records_have_no_safety_findings(corpus):
    for path in sorted((corpus / "legacy").rglob("*.md")):
        assert [f.code for f in analyze_path(path).findings if f.code in SAFETY_CODES] == [], path


_alphabet = st.sampled_from(
    list("abcAZ09 _-+/=:.\n\t\"'`<>{}$%#@")
    + [
        "\u200b",
        "\u202e",
        "\u00a0",
        "\uff49",
        "é",
        "👩",
        "\u200d",
        "ghp_",
        "eyJ",
        "://",
        "-----BEGIN ",
        "PRIVATE KEY-----",
        "User:",
        "Assistant:",
        "password: ",
        "ignore previous instructions",
        "%41",
        "4111 1111 1111 1111",
        "postgres://",
        "AKIA",
        "\r\n",
    ]
)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(_alphabet, max_size=80).map("".join))
def test_detectors_are_total_with_valid_spans(text):
    for h in collect_hits(text):
        assert 0 <= h.start <= h.end <= len(text)
    analysis = analyze_text(record(body=text or "x"), "ws/.memzoi/records/rec.md")
    for f in analysis.findings:
        assert 0 <= f.start <= f.end <= len(analysis.text)


# A hang guard against catastrophic backtracking, not a speed bar: each input takes milliseconds when the detectors
# are linear, and hours when a pattern backtracks; benchmarks measure the speed.
@pytest.mark.timeout(120)
def test_pathological_inputs_finish():
    cases = [
        "a" * 200_000,
        "=" * 100_000,
        "%41" * 30_000,
        "-----BEGIN PRIVATE KEY-----" + " A" * 50_000,
        "ignore " * 20_000,
        "User: x\n" * 20_000,
        "1-2 " * 40_000,
        "eyJ" + "a" * 100_000 + ".",
        "password: " * 20_000,
    ]
    for text in cases:
        for hit in collect_hits(text):
            assert 0 <= hit.start <= hit.end <= len(text)
