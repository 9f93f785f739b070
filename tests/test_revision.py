"""Canonical revision (RFC 8785 + domain-separated BLAKE3) and materialization attestation vectors."""

from __future__ import annotations

import shutil

import blake3
import pytest

from memzoi.judge.analysis import analyze_path, analyze_text
from memzoi.judge.attestation import AttestationState, attest, check_attestation
from memzoi.judge.revision import (
    REVISION_DOMAIN,
    canonical_json,
    content_hash,
    domain_id,
    lifecycle_projection,
    record_revision,
    semantic_projection,
)
from memzoi.read.document import frame
from memzoi.read.render import frontmatter

from . import builders
from .builders import edit

PLAN = builders.PLAN_ID
CAND = builders.CANDIDATE_ID
DECI = builders.DECISION_ID
OTHER = "blake3:" + "a" * 64

#: The vector record's fields: every semantic field the revision hashes has a value worth checking (a
#: microsecond timestamp, tags out of order, a non-ASCII body with a quote). No ``description``: it is not hashed.
VECTOR = dict(
    title="Vector record",
    timestamp="2026-07-05T20:16:46.552153Z",
    updated="2026-07-05T20:16:46.552153Z",
    source="cli",
    source_ref="prop_019f33df-110d-78c3-b2cb-2a94f31313a5",
    tags=["b", "a"],
    description=None,
    body='Body text with é and a "quote".',
)


def vector(**fields) -> str:
    """The vector record as the core writes it, with ``fields`` overriding :data:`VECTOR` (``attested=`` as for
    :func:`tests.builders.record`: its create attestation uses :data:`PLAN`, :data:`CAND`, :data:`DECI`)."""
    return builders.record("vector-record", **{**VECTOR, **fields})


RECORD = vector()
ATTESTED = vector(attested=True)

PATH = "ws/.memzoi/records/vector-record.md"


def attested(text: str, record_id: str, **kw) -> str:
    """``text`` with a ``materialization`` block computed by :func:`attest` (written by the core's writer)
    inserted before the closing ``---``; the rest of ``text`` is kept byte for byte."""
    doc = frame(text)
    params = dict(
        action="create", plan_id=PLAN, candidate_id=CAND, decision_id=DECI, decision_at="2026-07-06T00:00:00Z"
    )
    params.update(kw)
    block = attest(record_id, doc.data, doc.body, **params)
    insert = frontmatter({"materialization": block}, ("materialization",))
    return text[: doc.fm_end] + "\n" + insert.rstrip("\n") + text[doc.fm_end :]


def test_jcs_and_domain_separation_vector():
    value = {"b": 1.0, "a": [0.8, None, True, "é"], "c": {"z": 1, "y": "x"}}
    assert canonical_json(value) == '{"a":[0.8,null,true,"é"],"b":1,"c":{"y":"x","z":1}}'.encode()
    expected = "blake3:" + blake3.blake3(b"dom\x00" + canonical_json(value)).hexdigest()
    assert domain_id("dom", value) == expected
    assert domain_id("dom2", value) != expected


def test_content_hash_is_plain_hex_of_rust_trimmed_body():
    assert content_hash("  body\u2003\n") == blake3.blake3(b"body").hexdigest()
    assert len(content_hash("x")) == 64


def test_unattested_revision_vector_is_hand_checkable():
    doc = frame(RECORD)
    proj = semantic_projection(doc.data, doc.body)
    assert proj["confidence"] == 1.0 and proj["tags"] == ["b", "a"] and proj["retention"] == {}
    assert proj["title"] == "Vector record" and proj["body"] == 'Body text with é and a "quote".'
    # The projection hashed, written out by hand in RFC 8785 form (sorted keys, `1` for 1.0, nulls present).
    jcs = (
        '{"lifecycle":{"action":null,"counterpart_record_id":null,"counterpart_relationship":null,"reason":null,'
        '"target_expected_revision":null},"record":{"applies_to":[],"body":"Body text with é and a \\"quote\\".",'
        '"capture":null,"confidence":1,"content_class":"general_repo_knowledge",'
        '"created":"2026-07-05T20:16:46.552153Z","lane":"semantic","lineage":null,"memory_type":"decision",'
        '"origin":{"origin_key":"repository-record:vector-record","route":"repository_materialization"},'
        '"proposal_id":null,"retention":{},"scope_id":null,"scope_kind":"repo",'
        '"source_kind":"cli","source_ref":"prop_019f33df-110d-78c3-b2cb-2a94f31313a5","status":"active",'
        '"supersedes_id":null,"tags":["b","a"],"title":"Vector record","updated":"2026-07-05T20:16:46.552153Z",'
        '"visibility":"repo"},"record_id":"vector-record","schema":"memzoi/repository-canonical-revision"}'
    )
    want = "blake3:" + blake3.blake3(REVISION_DOMAIN.encode() + b"\x00" + jcs.encode()).hexdigest()
    assert record_revision("vector-record", doc.data, doc.body) == want


def test_attested_and_unattested_revisions_differ():
    doc = frame(RECORD)
    block = attest(
        "vector-record",
        doc.data,
        doc.body,
        action="create",
        plan_id=PLAN,
        candidate_id=CAND,
        decision_id=DECI,
        decision_at="2026-07-06T00:00:00Z",
    )
    assert block["revision"]["revision_hash"] != record_revision("vector-record", doc.data, doc.body)
    assert lifecycle_projection(block)["action"] == "create"
    assert lifecycle_projection(None) == dict.fromkeys(lifecycle_projection(None))


def test_attested_record_verifies_and_reports_nothing():
    a = analyze_text(ATTESTED, PATH)
    assert a.attestation.state is AttestationState.ATTESTED
    assert [f.code for f in a.findings] == []
    assert attested(RECORD, "vector-record") == ATTESTED  # the helper attests a given text as the builder does


# Edits that must change the revision: every semantic field.
MUST_CHANGE = [
    ("body", "Body text with é", "Body text with e"),
    ("title", 'title: "Vector record"', 'title: "Vector record!"'),
    ("h1 kept in sync", "# Vector record\n", "# Vector record\n\nNew paragraph.\n"),
    ("tags order", "tags:\n  - b\n  - a\n", "tags:\n  - a\n  - b\n"),
    ("status", "status: active", "status: superseded"),
    ("updated", 'updated: "2026-07-05T20:16:46.552153Z"', 'updated: "2026-07-07T00:00:00Z"'),
    ("timestamp", 'timestamp: "2026-07-05T20:16:46.552153Z"', 'timestamp: "2026-07-05T20:16:46Z"'),
    ("confidence", "confidence: 1", "confidence: 0.9"),
    ("lane", "lane: semantic", "lane: procedural"),
    ("type", "type: decision", "type: fact"),
    ("source_ref", "source_ref: prop_", "source_ref: prop-"),
    ("scope_id", "scope: repo\n", "scope: repo\nscope_id: memzoi\n"),
    ("supersedes", "status: active\n", "status: active\nsupersedes: older-record\n"),
    ("retention", "retention: {}", 'retention: {explicit_expires_at: "2027-01-01T00:00:00Z"}'),
    ("origin", "route: repository_materialization", "route: repository_proposal"),
    # Memzoi keeps tags exactly as written (no trim), so padding a tag is a semantic edit.
    ("padded tag", "  - b\n", '  - " b "\n'),
]

# Edits that must not: rendering and decision identities.
MUST_NOT_CHANGE = [
    ("plan_id", f'plan_id: "{PLAN}"', f'plan_id: "{OTHER}"'),
    ("candidate_id", f'candidate_id: "{CAND}"', f'candidate_id: "{OTHER}"'),
    ("decision_id", f'decision_id: "{DECI}"', f'decision_id: "{OTHER}"'),
    ("decision_at", 'decision_at: "2026-07-06T00:00:00Z"', 'decision_at: "2026-07-09T12:00:00+02:00"'),
    ("safety_contract", "safety_contract: memzoi/repository-write-safety-v1", "safety_contract: other-contract"),
    ("description", "lane: semantic\n", "lane: semantic\ndescription: anything at all\n"),
    ("quoting", 'title: "Vector record"', "title: Vector record"),
    ("confidence form", "confidence: 1", "confidence: 1.0"),
    ("key order", "type: decision\nlane: semantic\n", "lane: semantic\ntype: decision\n"),
    # Memzoi trims these strings when it parses the record (okf.rs required_string/optional_string), so quoted
    # padding changes nothing it hashes.
    ("padded timestamp", 'timestamp: "2026-07-05T20:16:46.552153Z"', 'timestamp: "  2026-07-05T20:16:46.552153Z\t"'),
    ("padded updated", 'updated: "2026-07-05T20:16:46.552153Z"', 'updated: " 2026-07-05T20:16:46.552153Z "'),
    ("padded title", 'title: "Vector record"', 'title: " Vector record "'),
    ("padded enums", "type: decision\n", 'type: " decision "\n'),
    ("padded status", "status: active", 'status: "active\u00a0"'),
    ("padded profile", "profile: memzoi", 'profile: " memzoi "'),
    (
        "padded source_ref",
        "source_ref: prop_019f33df-110d-78c3-b2cb-2a94f31313a5",
        'source_ref: " prop_019f33df-110d-78c3-b2cb-2a94f31313a5 "',
    ),
    ("trailing body whitespace", 'a "quote".\n', 'a "quote".\n\n\n'),
    ("flow vs block", "tags:\n  - b\n  - a\n", "tags: [b, a]\n"),
    ("crlf", "\n", "\r\n"),
]


@pytest.mark.parametrize("name,old,new", MUST_CHANGE, ids=[c[0] for c in MUST_CHANGE])
def test_semantic_edit_turns_attestation_stale(name, old, new):
    edited = edit(ATTESTED, old, new, 1)
    a = analyze_text(edited, PATH)
    assert a.attestation.state is AttestationState.STALE, [f.code for f in a.findings]
    stale = [f for f in a.findings if f.code == "stale_attestation"]
    assert len(stale) == 1
    assert a.text[stale[0].start : stale[0].end] == "materialization"


@pytest.mark.parametrize("name,old,new", MUST_NOT_CHANGE, ids=[c[0] for c in MUST_NOT_CHANGE])
def test_identity_and_rendering_edits_keep_attestation(name, old, new):
    edited = edit(ATTESTED, old, new, -1 if name == "crlf" else 1)
    a = analyze_text(edited, PATH)
    assert a.attestation.state is AttestationState.ATTESTED, [(f.code, f.message) for f in a.findings]
    assert not [f for f in a.findings if f.code in ("stale_attestation", "materialization_metadata")]


def test_record_id_is_part_of_the_revision():
    moved = analyze_text(edit(ATTESTED, "id: vector-record", "id: moved-record"), "ws/.memzoi/records/moved-record.md")
    assert moved.attestation.state is AttestationState.STALE


def test_stale_message_names_updated_after_decision():
    text = edit(
        edit(ATTESTED, "Body text", "Edited text"),
        'updated: "2026-07-05T20:16:46.552153Z"',
        'updated: "2026-07-08T00:00:00Z"',
    )
    a = analyze_text(text, PATH)
    [f] = [f for f in a.findings if f.code == "stale_attestation"]
    assert "`updated`" in f.message and "later than the decision time" in f.message
    assert f.data["expected"] != f.data["actual"]


def test_known_projection_names_the_changed_field():
    before = analyze_text(ATTESTED, PATH).attestation
    assert before.state is AttestationState.ATTESTED
    edited = frame(edit(ATTESTED, "Body text", "Changed text"))
    after = check_attestation(edited, "vector-record", valid=True, known=before.projection)
    assert after.state is AttestationState.STALE
    assert after.suspects == ["changed since decision time: `body`"]
    assert "changed since decision time: `body`" in after.findings[0].message


def test_supersede_attestation_uses_lifecycle_projection():
    target = {
        "record_id": "older-record",
        "expected_revision": {"schema": "memzoi/repository-canonical-revision", "revision_hash": OTHER},
    }
    text = vector(
        supersedes="older-record",
        attested={"action": "supersede", "target": target, "reason": "Replaced by newer guidance"},
    )
    a = analyze_text(text, PATH)
    assert a.attestation.state is AttestationState.ATTESTED, [(f.code, f.message) for f in a.findings]
    # The lifecycle projection is hashed: a different reason or target revision is a different revision.
    assert (
        analyze_text(edit(text, "Replaced by newer", "Replaced by other"), PATH).attestation.state
        is AttestationState.STALE
    )


@pytest.mark.parametrize(
    "old,new,needle",
    [
        ("schema: memzoi/repository-materialization\n", "schema: memzoi/other\n", "unsupported"),
        (f'plan_id: "{PLAN}"', 'plan_id: "blake3:ABC"', "plan_id"),
        (f'plan_id: "{PLAN}"', 'plan_id: "blake3:' + "A" * 64 + '"', "lower-case"),
        ("action: create", "action: update2", "action"),
        ('decision_at: "2026-07-06T00:00:00Z"', "decision_at: yesterday", "decision_at"),
        ("  safety_contract: memzoi/repository-write-safety-v1\n", "", "safety_contract"),
        ("  safety_contract:", "  extra_key: 1\n  safety_contract:", "extra_key"),
        ("action: create", "action: tombstone", "need both `target` and `reason`"),
    ],
)
def test_invalid_materialization_block(old, new, needle):
    a = analyze_text(edit(ATTESTED, old, new, 1), PATH)
    bad = [f for f in a.findings if f.code == "materialization_metadata"]
    assert bad and any(needle in f.message.casefold() for f in bad), [(f.code, f.message) for f in a.findings]
    assert a.attestation.state is AttestationState.INVALID
    for f in bad:
        assert 0 <= f.start <= f.end <= len(a.text)


def test_materialization_not_a_mapping():
    text = vector(extra="materialization: yes\n")
    a = analyze_text(text, PATH)
    assert "materialization_metadata" in [f.code for f in a.findings]


def test_corpus_record_attested_copy_turns_stale_after_one_character(corpus, tmp_path):
    src = corpus / "memzoi-repo/.memzoi/records/rust-msrv-is-1-96-1.md"
    records = tmp_path / ".memzoi/records"
    records.mkdir(parents=True)
    plain = records / src.name
    shutil.copyfile(src, plain)
    assert analyze_path(plain).attestation.state is AttestationState.UNATTESTED
    text = attested(src.read_text(encoding="utf-8"), src.stem)
    plain.write_text(text, encoding="utf-8")
    a = analyze_path(plain)
    assert a.attestation.state is AttestationState.ATTESTED
    assert [f.code for f in a.findings if f.severity <= 2] == []
    body_at = text.rindex("support Rust")  # the body's copy, not the description's
    plain.write_text(text[:body_at] + "s" + text[body_at:], encoding="utf-8")
    edited = analyze_path(plain)
    assert [f.code for f in edited.findings if f.severity <= 2] == ["stale_attestation"]


def test_corpus_records_are_unattested_and_clean(corpus):
    for path in sorted((corpus / "memzoi-repo/.memzoi/records").glob("*.md")):
        a = analyze_path(path)
        assert a.attestation is not None and a.attestation.state is AttestationState.UNATTESTED, path.name
        assert not [f for f in a.findings if f.code in ("stale_attestation", "materialization_metadata")]


from hypothesis import (  # noqa: E402
    given,
    settings,
    strategies as st,  # noqa: E402
)

_leaf = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.floats(allow_nan=False),
    st.text(max_size=10),
    st.sampled_from(
        [
            PLAN,
            "create",
            "supersede",
            "memzoi/repository-materialization",
            "memzoi/repository-canonical-revision",
            "2026-07-06T00:00:00Z",
        ]
    ),
)
_block = st.recursive(
    _leaf,
    lambda c: st.one_of(
        st.lists(c, max_size=3),
        st.dictionaries(
            st.sampled_from(
                [
                    "schema",
                    "action",
                    "plan_id",
                    "candidate_id",
                    "decision_id",
                    "decision_at",
                    "safety_contract",
                    "revision",
                    "revision_hash",
                    "target",
                    "record_id",
                    "expected_revision",
                    "reason",
                    "x",
                ]
            ),
            c,
            max_size=6,
        ),
    ),
    max_leaves=12,
)


@settings(max_examples=200, deadline=None)
@given(_block)
def test_any_materialization_block_gives_findings_not_exceptions(block):
    import json

    text = vector(extra="materialization: " + json.dumps(block, ensure_ascii=False) + "\n")
    a = analyze_text(text, PATH)
    assert (a.attestation is not None) == (a.document.data is not None)
    for f in a.findings:
        assert 0 <= f.start <= f.end <= len(a.text)
    if a.attestation is not None and block is not None:
        assert a.attestation.state is not AttestationState.ATTESTED  # random blocks never verify


def test_padded_quoted_timestamp_hashes_as_memzoi_trims_it():
    """Memzoi's parser trims ``timestamp``/``updated`` before they enter the projection (``created``/``updated``)."""
    plain = frame(RECORD)
    padded = frame(vector(timestamp=" 2026-07-05T20:16:46.552153Z ", updated="2026-07-05T20:16:46.552153Z\n"))
    assert semantic_projection(padded.data, padded.body)["created"] == "2026-07-05T20:16:46.552153Z"
    assert semantic_projection(padded.data, padded.body)["updated"] == "2026-07-05T20:16:46.552153Z"
    assert record_revision("vector-record", padded.data, padded.body) == record_revision(
        "vector-record", plain.data, plain.body
    )
    # The projection trims even when handed untrimmed data (e.g. built by a caller, not framed).
    raw = {**plain.data, "timestamp": "\u3000" + plain.data["timestamp"] + " "}
    assert semantic_projection(raw, plain.body)["created"] == plain.data["timestamp"]
    text = edit(ATTESTED, 'timestamp: "2026-07-05T20:16:46.552153Z"', 'timestamp: "  2026-07-05T20:16:46.552153Z  "')
    a = analyze_text(text, PATH)
    assert a.attestation.state is AttestationState.ATTESTED
    assert [f.code for f in a.findings] == []
