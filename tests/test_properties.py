"""Property tests: the reader is total, spans are valid, and valid records survive a re-read."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings, strategies as st

from memzoi.base.findings import CODES
from memzoi.judge.analysis import analyze_bytes, analyze_text
from memzoi.judge.legacy import apply_edits
from memzoi.read.document import rust_trim
from memzoi.read.yaml_quote import quote_string

from .test_framing_yaml import VALID

PATHS = [None, ".memzoi/records/rec-x.md", ".memzoi/proposals/pending/p-1.md", ".memzoi/records/index.md"]
_settings = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _check_spans(analysis) -> None:
    n = len(analysis.text)
    for f in analysis.findings:
        assert 0 <= f.start <= f.end <= n, (f.code, f.start, f.end, n)
        for fix in f.fixes:
            for e in fix.edits:
                assert 0 <= e.start <= e.end <= n
            apply_edits(analysis.text, list(fix.edits))


yamlish = st.text(alphabet=st.sampled_from(list("-:#[]{}*&!|>'\"\t \n\r\ufeff\u2028aZ0é😀,?%@`\\")), max_size=200)


@_settings
@given(st.text(max_size=400), st.sampled_from(PATHS))
def test_arbitrary_text_never_raises(text, path):
    _check_spans(analyze_text(text, path))


@_settings
@given(yamlish, st.sampled_from(PATHS))
def test_yaml_shaped_text_never_raises(body, path):
    _check_spans(analyze_text("---\n" + body + "\n---\nbody\n", path))


@_settings
@given(st.binary(max_size=400), st.sampled_from(PATHS))
def test_arbitrary_bytes_never_raise(data, path):
    _check_spans(analyze_bytes(data, path))


@_settings
@given(st.integers(min_value=0, max_value=len(VALID)), yamlish)
def test_mutated_valid_record_never_raises(at, insert):
    _check_spans(analyze_text(VALID[:at] + insert + VALID[at:], ".memzoi/records/rec-x.md"))


title_text = st.text(st.characters(blacklist_categories=("Cs", "Cc", "Zl", "Zp")), min_size=1, max_size=60).filter(
    lambda t: rust_trim(t) == t and t.strip() == t and t
)
body_text = st.text(st.characters(blacklist_categories=("Cs",)), min_size=1, max_size=300).filter(
    lambda t: rust_trim(t)
)


@_settings
@given(
    title_text,
    body_text,
    st.sampled_from(["fact", "decision", "procedure"]),
    st.floats(0, 1, allow_nan=False),
    st.lists(st.text(min_size=1, max_size=12), max_size=4),
    st.sampled_from(["\n", "\r\n"]),
)
def test_valid_record_survives_reread(title, body, mtype, confidence, tags, nl):
    # Render the way Memzoi does: JSON string literals for text, numbers bare.
    lines = [
        "---",
        "id: rec-x",
        "kind: memory",
        "profile: memzoi",
        f"type: {mtype}",
        "lane: semantic",
        f"title: {quote_string(title)}",
        "scope: repo",
        "visibility: repo",
        "content_class: general_repo_knowledge",
        "status: active",
        f"confidence: {confidence!r}",
        'timestamp: "2026-07-06T00:00:00Z"',
        "tags: [" + ", ".join(map(quote_string, tags)) + "]",
        "retention: {}",
        "origin:",
        "  origin_key: repository-record:rec-x",
        "  route: repository_materialization",
        "---",
        "",
        f"# {title}",
        "",
        rust_trim(body),
    ]
    text = nl.join(lines) + nl
    a = analyze_text(text, ".memzoi/records/rec-x.md")
    # Content detectors may flag random text; this property is about framing and schema.
    schema = [f for f in a.findings if CODES[f.code][1] in ("framing", "schema") and f.code != "title_h1_mismatch"]
    if rust_trim(body).startswith("# "):
        return  # a second heading line would be read as part of the H1 rule; covered elsewhere
    assert schema == [] or all(f.severity > 1 for f in schema), [(f.code, f.message) for f in schema]
    assert a.model is not None
    assert a.model.title == title
    assert a.model.tags == tags
    assert a.model.confidence == confidence
    assert a.document.body == rust_trim(rust_trim(body).replace("\n", nl)) or nl == "\r\n"
