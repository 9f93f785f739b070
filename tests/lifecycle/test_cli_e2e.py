"""End to end through the CLI on a seeded git repository: apply each proposal kind, reject, route to local memory,
create supersede/tombstone packets, undo every change, and compare the files byte for byte."""

from __future__ import annotations

import subprocess
import sys

import blake3
import pytest

from memzoi import ledger
from memzoi.base.findings import CODES
from memzoi.judge.analysis import analyze_path
from memzoi.lifecycle import apply_proposal

from ..ledger.faults import tree
from .conftest import PENDING, TARGET_ID

APPLIED = ".memzoi/proposals/resolved/applied"
REJECTED = ".memzoi/proposals/resolved/rejected"
RECORDS = ".memzoi/records"


def clean(repo, rel: str) -> None:
    """The file re-parses with no finding at all."""
    analysis = analyze_path(repo / rel)
    assert analysis.model is not None
    assert [f.code for f in analysis.findings] == [], rel


def test_apply_create_then_undo(repo, cli):
    start = tree(repo)
    code, out = cli("proposals", "apply", "mem_2026_07_06_testing_procedure")
    assert code == 0 and out["status"] == "applied"
    rec = f"{RECORDS}/run-focused-tests-before-full-workspace-checks.md"
    assert out["files"] == [
        {"path": rec, "before": "absent", "after": "present", "change": "created"},
        {
            "path": f"{APPLIED}/mem_2026_07_06_testing_procedure.md",
            "before": "absent",
            "after": "present",
            "change": "created",
        },
        {
            "path": f"{PENDING}/mem_2026_07_06_testing_procedure.md",
            "before": "present",
            "after": "absent",
            "change": "deleted",
        },
    ]
    for f in out["files"][:2]:
        clean(repo, f["path"])
    model = analyze_path(repo / rec).model
    assert (model.status, model.proposal_id, model.applies_to, model.source, model.source_ref) == (
        "active",
        "mem_2026_07_06_testing_procedure",
        ["crates/**"],
        "path",
        "README.md",
    )
    packet = analyze_path(repo / APPLIED / "mem_2026_07_06_testing_procedure.md").model
    assert packet.status == "applied" and packet.resolution.record_id == model.id
    assert packet.resolution.resolved_by == "reviewer"
    code, undone = cli("undo", out["change_id"])
    assert code == 0 and undone["status"] == "undone"
    assert tree(repo) == start


def test_apply_supersede_then_undo_keeps_crlf(repo, cli):
    start = tree(repo)
    code, out = cli("proposals", "apply", "mem_2026_07_06_auth_supersede")
    assert code == 0, out
    target_rel = f"{RECORDS}/{TARGET_ID}.md"
    new_rel = f"{RECORDS}/server-sessions-supersede-client-auth-checks.md"
    assert {f["path"] for f in out["files"]} == {
        new_rel,
        target_rel,
        f"{APPLIED}/mem_2026_07_06_auth_supersede.md",
        f"{PENDING}/mem_2026_07_06_auth_supersede.md",
    }
    for rel in (new_rel, target_rel, f"{APPLIED}/mem_2026_07_06_auth_supersede.md"):
        clean(repo, rel)
    target = analyze_path(repo / target_rel).model
    assert target.status == "superseded" and target.updated != "2026-07-02T00:00:00Z"
    raw = (repo / target_rel).read_bytes()
    assert raw.count(b"\r\n") == raw.count(b"\n"), "the rewrite keeps the target's CRLF line endings"
    assert analyze_path(repo / new_rel).model.supersedes == TARGET_ID
    res = analyze_path(repo / APPLIED / "mem_2026_07_06_auth_supersede.md").model.resolution
    assert (res.record_id, res.target_id) == ("server-sessions-supersede-client-auth-checks", TARGET_ID)
    # The superseded target can no longer be tombstoned: refused, nothing written.
    before = tree(repo)
    code, err = cli("proposals", "apply", "mem_2026_07_06_auth_tombstone")
    assert code == 1 and err["error"]["code"] == "proposal_target_inactive"
    assert tree(repo) == before
    assert cli("undo", out["change_id"])[0] == 0
    assert tree(repo) == start


def test_apply_tombstone_then_undo(repo, cli):
    start = tree(repo)
    code, out = cli("proposals", "apply", "mem_2026_07_06_auth_tombstone")
    assert code == 0, out
    assert analyze_path(repo / RECORDS / f"{TARGET_ID}.md").model.status == "tombstoned"
    res = analyze_path(repo / APPLIED / "mem_2026_07_06_auth_tombstone.md").model.resolution
    assert (res.record_id, res.target_id) == (TARGET_ID, TARGET_ID)
    assert len(out["files"]) == 3
    assert cli("undo", out["change_id"])[0] == 0
    assert tree(repo) == start


def test_reject_then_undo(repo, cli):
    start = tree(repo)
    code, out = cli("proposals", "reject", "mem_2026_07_06_auth_supersede", "--reason", "still under discussion")
    assert code == 0, out
    rel = f"{REJECTED}/mem_2026_07_06_auth_supersede.md"
    clean(repo, rel)
    packet = analyze_path(repo / rel).model
    assert packet.status == "rejected"
    assert (packet.resolution.reason, packet.resolution.target_id, packet.resolution.record_id) == (
        "still under discussion",
        TARGET_ID,
        None,
    )
    # A rejected identity is terminal: a packet reusing it cannot be applied.
    (repo / PENDING / "again.md").write_bytes(
        (repo / "originals" / "mem_2026_07_06_testing_procedure.md")
        .read_bytes()
        .replace(b"mem_2026_07_06_testing_procedure", b"mem_2026_07_06_auth_supersede")
    )
    code, err = cli("proposals", "apply", "again")
    assert code == 1 and err["error"]["code"] == "duplicate_identity"
    (repo / PENDING / "again.md").unlink()
    assert cli("undo", out["change_id"])[0] == 0
    assert tree(repo) == start
    code, err = cli("proposals", "reject", "mem_2026_07_06_auth_001", "--reason", "  ")
    assert code == 1 and err["error"]["code"] == "reason_required"


def test_reject_non_repo_safe_archives_a_hash_receipt(repo, cli):
    src = repo / PENDING / "mem_2026_07_06_auth_handoff.md"
    raw = src.read_bytes().replace(b"sensitivity: repo-safe", b"sensitivity: sensitive")
    src.write_bytes(raw)
    start = tree(repo)
    code, out = cli("proposals", "reject", "mem_2026_07_06_auth_handoff", "--reason", "private notes")
    assert code == 0, out
    token = "redacted-identity-" + blake3.blake3(b"mem_2026_07_06_auth_handoff").hexdigest()
    rel = f"{REJECTED}/{token}.md"
    assert out["files"][0]["path"] == rel
    clean(repo, rel)
    text = (repo / rel).read_text()
    digest = blake3.blake3(
        b"proposal-id\0mem_2026_07_06_auth_handoff\0proposal-file-id\0mem_2026_07_06_auth_handoff"
        b"\0proposal-markdown\0" + raw
    ).hexdigest()
    cls = blake3.blake3(b"memzoi.rejected-proposal-classification.v1\0sensitive\0general_repo_knowledge").hexdigest()
    assert f"Content hash (BLAKE3): `{digest}`" in text
    assert f"Original classification hash (BLAKE3): `{cls}`" in text
    for leaked in ("handoff", "auth", "agent", "src/"):
        assert leaked not in text.lower(), leaked
    model = analyze_path(repo / rel).model
    assert (model.id, model.title, model.origin.origin_key) == (
        token,
        "Redacted non-repo-safe proposal",
        f"rejected-proposal:{digest}",
    )
    assert "handoff" not in str(out["details"])
    assert out["files"][1] == {
        "path": f"{PENDING}/mem_2026_07_06_auth_handoff.md",
        "before": "present",
        "after": "absent",
        "change": "deleted",
        "purged": ["before"],
    }
    # The packet was purged on purpose: the ledger kept only its hash, so undo is refused and says why.
    after = tree(repo)
    code, err = cli("undo", out["change_id"])
    assert code == 1 and err["error"]["code"] == "purged_secret", err
    assert "on purpose" in err["error"]["message"] and "cannot restore" in err["error"]["message"]
    assert tree(repo) == after and after != start


def test_route_local_then_undo(repo, cli):
    start = tree(repo)
    code, out = cli("proposals", "route-local", "mem_2026_07_06_auth_001")
    assert code == 0, out
    rel = f"{REJECTED}/mem_2026_07_06_auth_001.md"
    assert analyze_path(repo / rel).model.resolution.reason == "routed to local memory"
    assert not [p for p in tree(repo) if p.startswith(RECORDS) and "protected" in p], "never written under .memzoi"
    code, found = cli("local", "search", "session server-side")
    assert [r["id"] for r in found["records"]] == ["protected-routes-must-validate-sessions-server-side"]
    code, shown = cli("local", "show", "protected-routes-must-validate-sessions-server-side")
    assert shown["destination"] == "local" and shown["proposal_id"] == "mem_2026_07_06_auth_001"
    assert cli("undo", out["change_id"])[0] == 0
    assert tree(repo) == start
    assert cli("local", "list")[1]["records"] == []


def test_route_local_of_blocked_packet_redacts_it(repo, cli):
    # The unmodified, project-scoped example is blocked by the gate: apply refuses, routing works.
    (repo / PENDING / "mem_2026_07_06_auth_001.md").write_bytes(
        (repo / "originals" / "mem_2026_07_06_auth_001.md").read_bytes()
    )
    start = tree(repo)
    code, err = cli("proposals", "apply", "mem_2026_07_06_auth_001")
    assert code == 1 and CODES[err["error"]["code"]][1] == "gate"
    assert tree(repo) == start
    code, out = cli("proposals", "route-local", "mem_2026_07_06_auth_001")
    assert code == 0 and out["files"][0]["path"].startswith(f"{REJECTED}/redacted-identity-")
    assert cli("local", "list")[1]["records"][0]["title"] == "Protected routes must validate sessions server-side"


def test_secret_in_a_proposal_blocks_apply_and_local_routing(repo, cli):
    src = repo / PENDING / "mem_2026_07_06_testing_procedure.md"
    token = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"
    src.write_bytes(src.read_bytes().replace(b"## Review notes", f"Use {token} in CI.\n\n## Review notes".encode()))
    start = tree(repo)
    for cmd in (("proposals", "apply"), ("proposals", "route-local")):
        code, err = cli(*cmd, "mem_2026_07_06_testing_procedure")
        assert code == 1 and CODES[err["error"]["code"]][1] == "detector", err
        assert token not in str(err)
    assert tree(repo) == start
    code, out = cli("proposals", "reject", "mem_2026_07_06_testing_procedure", "--reason", "contains a token")
    assert code == 0 and "redacted-identity-" in out["files"][0]["path"]
    assert token.encode() not in (repo / out["files"][0]["path"]).read_bytes()


def test_stale_and_missing_targets_refuse(repo, cli):
    target = repo / RECORDS / f"{TARGET_ID}.md"
    target.write_bytes(
        target.read_bytes().replace(b'updated: "2026-07-02T00:00:00Z"', b'updated: "2026-08-01T00:00:00Z"')
    )
    start = tree(repo)
    code, err = cli("proposals", "apply", "mem_2026_07_06_auth_tombstone")
    assert code == 1 and err["error"]["code"] == "proposal_target_stale"
    target.unlink()
    code, err = cli("proposals", "apply", "mem_2026_07_06_auth_supersede")
    assert code == 1 and err["error"]["code"] == "target_missing"
    assert "does not exist" in err["error"]["message"]
    assert tree(repo) == {k: v for k, v in start.items() if k != f"{RECORDS}/{TARGET_ID}.md"}


def test_supersede_and_tombstone_packets_then_apply_and_undo(repo, cli):
    start = tree(repo)
    record = "rust-msrv-is-1-96-1"
    code, sup = cli(
        "supersede",
        record,
        "--title",
        "Rust MSRV is 1.97+",
        "--body",
        "Support Rust 1.97 and newer.",
        "--reason",
        "bumped",
    )
    assert code == 0, sup
    sup_rel = sup["files"][0]["path"]
    assert sup_rel == f"{PENDING}/supersede-{record}.md"
    clean(repo, sup_rel)
    code, tomb = cli("tombstone", f"{RECORDS}/{record}.md", "--reason", "no longer relevant")
    assert code == 0, tomb
    tomb_id = tomb["files"][0]["path"].rsplit("/", 1)[1][:-3]
    clean(repo, tomb["files"][0]["path"])
    code, applied = cli("proposals", "apply", tomb_id)
    assert code == 0, applied
    assert analyze_path(repo / RECORDS / f"{record}.md").model.status == "tombstoned"
    # The supersede packet now targets an inactive record.
    code, err = cli("proposals", "apply", f"supersede-{record}")
    assert code == 1 and err["error"]["code"] == "proposal_target_inactive"
    code, err = cli("tombstone", "no-such-record", "--reason", "x")
    assert code == 1 and err["error"]["code"] == "target_missing"
    for cid in (applied["change_id"], tomb["change_id"], sup["change_id"]):
        assert cli("undo", cid)[0] == 0
    assert tree(repo) == start


def test_history_newest_first_and_undo_refusals(repo, cli):
    _, a = cli("proposals", "apply", "mem_2026_07_06_testing_procedure")
    _, b = cli("proposals", "reject", "mem_2026_07_06_auth_001", "--reason", "dup")
    code, hist = cli("history")
    assert [c["change_id"] for c in hist["changes"]] == [b["change_id"], a["change_id"]]
    first = hist["changes"][1]
    assert {"actor", "source", "reason", "created_at", "applied_at", "status", "files"} <= set(first)
    assert (first["actor"], first["source"], first["status"]) == ("reviewer", "cli", "applied")
    rec = repo / RECORDS / "run-focused-tests-before-full-workspace-checks.md"
    code, only = cli("history", str(rec))
    assert [c["change_id"] for c in only["changes"]] == [a["change_id"]]
    rec.write_bytes(rec.read_bytes() + b"\nHand edit.\n")
    code, err = cli("undo", a["change_id"])
    assert code == 1 and err["error"]["code"] == "undo_drift"
    code, err = cli("undo", "chg_nope")
    assert code == 1 and err["error"]["code"] == "change_not_found"
    assert cli("undo", b["change_id"])[0] == 0
    code, err = cli("undo", b["change_id"])
    assert code == 1 and err["error"]["code"] == "not_undoable"


def test_packet_edited_between_snapshot_and_write_is_refused(repo):
    src = repo / PENDING / "mem_2026_07_06_testing_procedure.md"
    start = tree(repo)

    def edit(step: str) -> None:
        if step == "recorded":
            src.write_bytes(src.read_bytes() + b"\nlate edit\n")

    ledger.set_fault_hook(edit)
    try:
        with pytest.raises(ledger.Refusal) as err:
            apply_proposal(repo, "mem_2026_07_06_testing_procedure", actor="r")
    finally:
        ledger.set_fault_hook(None)
    assert err.value.code == "external_drift"
    assert tree(repo) == {
        **start,
        f"{PENDING}/mem_2026_07_06_testing_procedure.md": start[f"{PENDING}/mem_2026_07_06_testing_procedure.md"]
        + b"\nlate edit\n",
    }
    assert ledger.history(repo)[0].status == "failed"


def test_console_script_text_output(repo):
    out = subprocess.run(
        [sys.executable, "-m", "memzoi", "proposals", "apply", "mem_2026_07_06_testing_procedure", "--root", str(repo)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert out.returncode == 0, out.stderr
    assert "applied (apply)" in out.stdout and "created" in out.stdout
    out = subprocess.run(
        [sys.executable, "-m", "memzoi", "proposals", "apply", "mem_2026_07_06_testing_procedure", "--root", str(repo)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert out.returncode == 1 and out.stderr.startswith("memzoi: proposal_resolved: ") and out.stdout == ""


def test_packet_without_optional_supersedes_key_is_resolved(repo, cli):
    src = repo / PENDING / "mem_2026_07_06_testing_procedure.md"
    src.write_bytes(src.read_bytes().replace(b"supersedes: []\n", b""))
    code, out = cli("proposals", "apply", "mem_2026_07_06_testing_procedure")
    assert code == 0, out
    clean(repo, out["files"][1]["path"])
    assert b"\nsupersedes: []\n" in (repo / out["files"][1]["path"]).read_bytes()


def test_reconcile_and_explicit_recovery_through_the_cli(repo, cli):
    from ..ledger.faults import CRASH_EXIT, run_child

    start = tree(repo)
    # Crash after the first of three files is in place: the change can only be uncertain.
    code, steps = run_child(
        lambda: apply_proposal(repo, "mem_2026_07_06_testing_procedure", actor="r"), crash_at="apply:file0:done"
    )
    assert code == CRASH_EXIT and steps[-1] == "apply:file0:done"
    code, out = cli("reconcile")
    assert code == 1 and [o["status"] for o in out["reconciled"]] == ["uncertain"], out
    change_id = out["uncertain"][0]
    code, hist = cli("history")
    assert "without replay" in hist["changes"][0]["diagnostic"]
    code, err = cli("undo", change_id)
    assert code == 1 and err["error"]["code"] == "not_undoable"
    code, rec = cli("reconcile", "--recover", change_id, "restore-before", "--reason", "start over")
    assert code == 0 and rec["operation"] == "recover"
    assert tree(repo) == start
    code, out = cli("reconcile")
    assert code == 0 and out == {"reconciled": [], "uncertain": []}
    assert cli("proposals", "apply", "mem_2026_07_06_testing_procedure")[0] == 0


def test_local_add_list_search_and_secret_refusal(repo, cli):
    code, out = cli(
        "local", "add", "--title", "Staging DB is flaky", "--body", "Retry the staging migrations once.", "--tag", "ops"
    )
    assert code == 0 and out["files"] == [] and out["operation"] == "local_add"
    assert not (repo / ".memzoi" / "records" / "staging-db-is-flaky.md").exists()
    # The same memory again (CRLF and trailing spaces do not make it new): the existing record is named, no `-2`.
    code, err = cli(
        "local", "add", "--title", "Staging DB is flaky", "--body", "Retry the staging migrations once.  \r\n"
    )
    assert (
        code == 1 and err["error"]["code"] == "duplicate_content" and "staging-db-is-flaky" in err["error"]["message"]
    )
    assert [r["id"] for r in cli("local", "list")[1]["records"]] == ["staging-db-is-flaky"]
    assert [r["id"] for r in cli("local", "search", "staging retry")[1]["records"]] == ["staging-db-is-flaky"]
    assert cli("local", "search", "production")[1]["records"] == []
    secret = "ghp_" + "Z9y8X7w6V5u4T3s2R1q0P9o8N7m6L5k4J3i2"
    code, err = cli("local", "add", "--title", "token", "--body", f"use {secret}")
    assert code == 1 and err["error"]["code"] == "credential_token" and secret not in str(err)
    assert cli("undo", out["change_id"])[0] == 0
    assert cli("local", "list")[1]["records"] == []
    code, err = cli("local", "show", "staging-db-is-flaky")
    assert code == 1 and err["error"]["code"] == "local_record_not_found"


def test_malformed_packet_is_rejected_as_a_receipt(repo, cli):
    bad = repo / PENDING / "broken_packet.md"
    bad.write_bytes(b"---\nid: broken_packet\ntitle: [unclosed\nsensitivity: repo-safe\n---\n\nbody\n")
    code, err = cli("proposals", "apply", "broken_packet")
    assert code == 1
    code, out = cli("proposals", "reject", "broken_packet", "--reason", "malformed")
    assert code == 0, out
    rel = out["files"][0]["path"]
    assert rel.startswith(f"{REJECTED}/redacted-identity-")
    clean(repo, rel)
    assert b"unclosed" not in (repo / rel).read_bytes()


def test_history_of_a_deleted_file_by_project_relative_path(repo, cli):
    _, out = cli("proposals", "apply", "mem_2026_07_06_testing_procedure")
    code, hist = cli("history", f"{PENDING}/mem_2026_07_06_testing_procedure.md")
    assert code == 0 and [c["change_id"] for c in hist["changes"]] == [out["change_id"]]


def test_read_commands_outside_a_project_are_usage_errors(tmp_path, monkeypatch, capsys):
    from memzoi.cli.main import main

    monkeypatch.setenv("MEMZOI_HOME", str(tmp_path / "home"))
    monkeypatch.chdir(tmp_path)
    for argv in (["proposals", "list"], ["rebuild"], ["search", "x"]):
        assert main(argv) == 2, argv
        assert "no .memzoi directory" in capsys.readouterr().err


def test_undo_text_output_says_what_the_undo_did(repo, cli, capsys):
    # undo_change's result already describes the undo (a created record goes present -> absent); the text output
    # swapped it once more and printed the applied change's verbs ("created" for the record it removed)
    code, out = cli("proposals", "apply", "mem_2026_07_06_testing_procedure")
    assert code == 0
    from memzoi.cli.main import main

    capsys.readouterr()
    assert main(["undo", out["change_id"], "--root", str(repo)]) == 0
    text = capsys.readouterr().out
    rec = f"{RECORDS}/run-focused-tests-before-full-workspace-checks.md"
    assert f"deleted  {rec}" in text and f"created  {PENDING}/mem_2026_07_06_testing_procedure.md" in text


def test_a_pending_copy_of_an_applied_packet_fails_check(repo, cli):
    """An editor buffer saved after the CLI applied its packet re-creates it in pending/ (newuser3 D12). Memzoi's
    proposal inventory refuses an identity used twice across pending and resolved packets (an applied identity is
    final), so `check` fails on it as an error, not a warning: promise 1, the pre-commit hook must not pass it."""
    pid = "mem_2026_07_06_testing_procedure"
    pending = repo / PENDING / f"{pid}.md"
    saved = pending.read_bytes()
    assert cli("proposals", "apply", pid)[0] == 0
    pending.write_bytes(saved + b"\nA reviewer note.\n")
    code, out = cli("check")
    assert code == 1, out
    dup = [f for f in out["findings"] if f["code"] == "duplicate_identity"]
    assert {(f["path"].split("/.memzoi/")[1], f["severity"]) for f in dup} == {
        (f"proposals/pending/{pid}.md", "error"),
        (f"proposals/resolved/applied/{pid}.md", "error"),
    }
    (copy,) = [f for f in dup if "/pending/" in f["path"]]
    assert "was already applied (resolved/applied/); an applied or rejected identity is final" in copy["message"]
