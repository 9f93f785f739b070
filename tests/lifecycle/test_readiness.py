"""The one can-apply rule (memzoi.lifecycle.readiness): the core's refusal and the editor's verdict agree, every
blocking reason is named, and route-to-local is offered only where it would be accepted."""

from __future__ import annotations

import subprocess

import pytest

from memzoi.base.findings import finding
from memzoi.base.runtime import git_env
from memzoi.judge.analysis import analyze_path
from memzoi.judge.config import parse_config
from memzoi.ledger import Refusal
from memzoi.lifecycle import apply_proposal
from memzoi.lifecycle.readiness import packet_readiness, readiness
from memzoi.project.crossfile import Workspace

from .. import builders
from ..ledger.faults import tree
from .conftest import PENDING

PACKET = "mem_2026_07_06_testing_procedure"


def test_no_findings_can_apply():
    r = readiness([])
    assert r.can_apply and not r.can_route_local and r.statement() == "yes, with an explicit Apply"


def test_every_blocking_reason_is_named_and_warnings_do_not_block():
    gate = finding("sensitivity_not_repo_safe", "sensitivity is local-only", 0, 1)
    schema = finding("invalid_value", "lane is not valid", 2, 3)
    dup = finding("duplicate_content", "same as x", 4, 5)  # a warning: Memzoi applies duplicates
    r = readiness(
        [gate, schema, dup],
        identity_resolved=".memzoi/proposals/resolved/applied/p.md",
        record_taken=".memzoi/records/x.md",
        sensitivity="local-only",
    )
    assert r.codes() == ["sensitivity_not_repo_safe", "invalid_value", "duplicate_identity", "record_exists"]
    assert r.can_route_local  # the gate keeps it out of git, and nothing forbids keeping it privately
    assert r.statement().startswith("no: blocked by sensitivity_not_repo_safe, invalid_value, duplicate_identity")
    assert "route it to local memory" in r.statement()


def test_a_refusal_carries_one_piece_of_advice():
    # issue 28: each blocker's message carried its own fix and the refusal added another
    schema = finding("invalid_value", "lane is not valid; use one of semantic, procedural", 2, 3)
    stale = finding("proposal_target_stale", "target updated after the proposal; re-propose against it", 4, 5)
    text = readiness([schema, stale]).refusal()
    assert text == (
        "blocked by invalid_value (lane is not valid); proposal_target_stale (target updated after the "
        "proposal); fix what is named or reject it"
    )
    assert "use one of" not in text and "re-propose" not in text and text.count("reject") == 1


def test_credentials_or_a_secret_packet_never_suggest_local_memory():
    gate = finding("sensitivity_not_repo_safe", "sensitivity is sensitive", 0, 1)
    cred = finding("credential_token", "a GitHub token", 5, 9)
    r = readiness([gate, cred], sensitivity="sensitive")
    assert not r.can_route_local and "route" not in r.statement()
    assert not readiness([gate], sensitivity="secret").can_route_local


def test_dangling_target_blocks_but_a_dangling_lineage_reference_does_not():
    target = finding("dangling_reference", "target missing", 0, 1, field="proposal.target")
    lineage = finding("dangling_reference", "predecessor missing", 0, 1, field="lineage.predecessor_id")
    assert readiness([target]).codes() == ["dangling_reference"]
    assert readiness([lineage]).can_apply


def test_git_ignored_pending_packet_is_refused_by_apply_and_shown_blocked(repo, cli):
    # Nobody could review a packet git ignores while untracked: Memzoi's admission refuses ignored files.
    (repo / ".gitignore").write_text(f"{PENDING}/{PACKET}.md\n")
    subprocess.run(["git", "add", ".gitignore"], cwd=repo, check=True, env=git_env())
    start = tree(repo)
    code, err = cli("proposals", "apply", PACKET)
    assert code == 1 and err["error"]["code"] == "ignored_untracked", err
    assert tree(repo) == start
    # The editor's view of the same file, from the findings it holds, says the same.
    path = repo / PENDING / f"{PACKET}.md"
    analysis = analyze_path(path)
    from memzoi.lifecycle.apply import packet_findings

    verdict = packet_readiness(repo, analysis, packet_findings(repo, f"{PENDING}/{PACKET}.md", analysis))
    assert not verdict.can_apply and verdict.codes() == ["ignored_untracked"]


def test_editor_and_core_agree_on_every_seeded_packet(repo, cli):
    # For each pending packet: the verdict from findings + cross-file facts equals the core's apply outcome.
    base = (repo / PENDING / f"{PACKET}.md").read_text()
    variants = {
        "mem-local-only": base.replace("sensitivity: repo-safe", "sensitivity: local-only"),
        "mem-taken-slug": base.replace(
            "title: Run focused tests before full workspace checks",
            'title: "Automatic private inference is event-bound"',
        ),
        "mem-two-blockers": base.replace("sensitivity: repo-safe", "sensitivity: sensitive").replace(
            "lane: ", "lane: nowhere-", 1
        ),
    }
    for name, text in variants.items():
        text = text.replace(f"id: {PACKET}", f"id: {name}", 1)
        assert text != base
        (repo / PENDING / f"{name}.md").write_text(text)
    ws = Workspace()
    paths = sorted((repo / ".memzoi").rglob("*.md"))
    analyses = {p: analyze_path(p) for p in paths}
    for p, a in analyses.items():
        ws.update(str(p), a)
    from memzoi.lifecycle.apply import packet_findings

    outcomes: list[bool] = []
    for p in sorted((repo / PENDING).glob("*.md")):
        a = analyses[p]
        findings = packet_findings(repo, p.relative_to(repo).as_posix(), a) + ws.findings_for(str(p))
        verdict = packet_readiness(repo, a, findings, identity_resolved=ws.resolved_holder(str(p)))
        start = tree(repo)
        code, out = cli("proposals", "apply", p.stem)
        outcomes.append(verdict.can_apply)
        assert (code == 0) == verdict.can_apply, (p.name, verdict.codes(), out)
        if code == 0:
            cli("undo", out["change_id"])
        else:
            assert out["error"]["code"] == verdict.codes()[0], (p.name, out)
        assert tree(repo) == start
    assert True in outcomes and False in outcomes  # the seed has packets of both kinds


def test_a_packet_whose_record_file_name_is_too_long_cannot_be_applied(repo, cli):
    from .. import builders

    long = ("Long title " * 30).strip()
    builders.write(repo, builders.packet_path("long-pkt"), builders.packet("long-pkt", title=long))
    shown = {p["id"]: p for p in cli("proposals", "list")[1]["proposals"]}["long-pkt"]
    assert shown["can_apply"] is False and shown["blocked_by"] == ["title_too_long"]
    assert "reject it and propose it again with a shorter title" in shown["blockers"][0]["message"]
    checked = cli("check", str(repo / builders.packet_path("long-pkt")))[1]["findings"]
    assert [f["code"] for f in checked] == ["title_too_long"]
    before = tree(repo)
    code, err = cli("proposals", "apply", "long-pkt")
    assert code == 1 and err["error"]["code"] == "title_too_long"
    assert tree(repo) == before
    code, err = cli(
        "supersede", "semantic/decisions/auth-client-validation", "--title", "x" * 440, "--body", "b", "--reason", "r"
    )
    assert code == 1 and err["error"]["code"] == "title_too_long" and tree(repo) == before


@pytest.mark.parametrize("disabled", [False, True], ids=["graded", "rules-configured"])
@pytest.mark.parametrize(
    ("fields", "where"),
    [
        ({"action": "supersede", "supersedes": []}, "supersedes"),
        ({"action": "supersede", "supersedes": None}, "supersedes"),
        ({"action": "tombstone"}, "proposal.target"),
    ],
    ids=["supersede-empty", "supersede-absent", "tombstone-no-target"],
)
def test_a_packet_naming_no_record_to_replace_is_refused_not_a_crash(tmp_path, monkeypatch, fields, where, disabled):
    # A hand-written supersede without `supersedes` (or a tombstone without `proposal.target`) parses; applying
    # it was an IndexError (an internal error), and with its finding disabled it would have applied as a create.
    # `invalid_proposal_shape` itself can no longer be disabled (an `invalid_config`): the configured case turns off
    # what a project can (the schema warning `id_path_mismatch`, our `prompt_injection`), and the refusal stays.
    monkeypatch.setenv("MEMZOI_HOME", str(tmp_path / "home"))
    root = tmp_path / "repo"
    subprocess.run(["git", "init", "-q", "--template=", str(root)], check=True, env=git_env())
    builders.write(root, builders.record_path("kept"), builders.record("kept"))
    if disabled:
        config = '[rules]\ndisabled = ["id_path_mismatch", "prompt_injection"]\n'
        assert parse_config(config).errors == ()  # a valid configuration, every entry applied
        assert parse_config('[rules]\ndisabled = ["invalid_proposal_shape"]\n').errors  # this one cannot be
        builders.write(root, ".memzoi/config.toml", config)
    packet = builders.write(root, builders.packet_path("hand"), builders.packet("hand", **fields))
    before = tree(root)
    with pytest.raises(Refusal) as refused:
        apply_proposal(root, packet, actor="me")
    assert refused.value.code == "invalid_proposal_shape"
    assert where in refused.value.message and "internal" not in refused.value.message
    assert tree(root) == before  # nothing written
