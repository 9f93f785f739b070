"""Lifecycle on a record whose frontmatter ``id`` differs from its path: Memzoi keys it by the path and its
renderers write that id, so a rewrite (tombstone target, re-attestation) writes the path id."""

from __future__ import annotations

from memzoi.judge.analysis import analyze_path

from .conftest import TARGET_ID

RECORDS = ".memzoi/records"


def test_tombstone_target_is_found_and_rewritten_by_path_id(repo, cli):
    target = repo / RECORDS / f"{TARGET_ID}.md"
    target.write_bytes(target.read_bytes().replace(f"id: {TARGET_ID}".encode(), b"id: auth-client-validation"))
    assert [(f.code, f.severity) for f in analyze_path(target).findings] == [("id_path_mismatch", 2)]
    code, out = cli("proposals", "apply", "mem_2026_07_06_auth_tombstone")
    assert code == 0, out
    after = analyze_path(target)
    assert after.model.status == "tombstoned" and after.model.id == TARGET_ID
    assert after.findings == []


def test_reattest_writes_the_record_at_its_path(repo, cli):
    rec = repo / RECORDS / "rust-msrv-is-1-96-1.md"
    rec.write_bytes(rec.read_bytes().replace(b"id: rust-msrv-is-1-96-1", b"id: rust-msrv"))
    code, out = cli("reattest", "rust-msrv-is-1-96-1", "--reason", "reviewed")
    assert code == 0, out
    assert [f["path"] for f in out["files"]] == [f"{RECORDS}/rust-msrv-is-1-96-1.md"]
    after = analyze_path(rec)
    assert after.model.id == "rust-msrv-is-1-96-1" and after.findings == []
    assert not (repo / RECORDS / "rust-msrv.md").exists()
