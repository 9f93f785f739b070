"""Memzoi's light preflight parser and hash-receipt identities (reference §2.6)."""

from __future__ import annotations

import blake3

from memzoi.lifecycle.common import concept_slug, identity_token, preflight_ids
from memzoi.lifecycle.reject import receipt, receipt_digests


def test_preflight_reads_unique_top_level_scalars_only():
    raw = b'---\nid: "p-1"\nsensitivity: secret\ncontent_class: raw_transcript\nscope:\n  id: nested\n---\nid: body\n'
    assert preflight_ids(raw) == {"id": "p-1", "sensitivity": "secret", "content_class": "raw_transcript"}
    dup = b"---\nid: a\nid: b\nsensitivity: [x]\n---\n"
    assert preflight_ids(dup) == {"id": None, "sensitivity": None, "content_class": None}
    assert preflight_ids(b"not a packet at all") == {"id": None, "sensitivity": None, "content_class": None}


def test_receipt_for_a_packet_without_id_uses_the_digest():
    raw = b"---\ntitle: no id\n---\n\ntext\n"
    digest, cls, _ = receipt_digests(raw, "file_x")
    expected = blake3.blake3(
        b"proposal-id\0<missing-or-non-string>\0proposal-file-id\0file_x\0proposal-markdown\0" + raw
    ).hexdigest()
    assert digest == expected
    assert cls == blake3.blake3(b"memzoi.rejected-proposal-classification.v1\0unknown\0<missing>").hexdigest()
    file_token, data, body = receipt(raw, "file_x", actor="me", when="2026-07-06T00:00:00Z", reason="r")
    assert file_token == identity_token("file_x")
    assert data["id"] == identity_token(f"missing-id:{digest}")
    assert data["origin"]["origin_key"] == f"rejected-proposal:{digest}"
    assert "no id" not in body and "text" not in body


def test_tokens_and_slugs():
    token = identity_token("abc")
    assert token == "redacted-identity-" + blake3.blake3(b"abc").hexdigest()
    assert identity_token(token) == token  # already a token: unchanged
    assert concept_slug("Rust MSRV is 1.96.1+") == "rust-msrv-is-1-96-1"
    assert concept_slug("  --Ünïcode Títle!! ") == "n-code-t-tle"
    assert concept_slug("!!!") == ""
