"""Refusals of a proposal being made say what fits someone proposing (trial 2).

A proposal whose record could never be written is refused when it is made, not after review.

Memzoi's apply creates ``.memzoi/records/<concept slug of the title>.md`` with create-new, so an existing record is
a conflict, and a supersede's replacement id must differ from its target's (reference §2.5, ``apply.rs``). Such a
packet used to be written, listed as ``blocked: record_exists`` and never applicable: an agent re-proposing a known
title, or a supersede keeping the record's title (the common case), left a dead packet for the reviewer.

A supersede or tombstone of a record that is missing or no longer active is refused with advice for the one
proposing (nothing was written; the record that replaced a superseded one), not the advice for a pending packet
("reject the proposal"), and a bad ``applies_to`` entry is named as such.
"""

from __future__ import annotations

import pytest

from memzoi.agent import tools
from memzoi.ledger import Refusal
from memzoi.lifecycle.apply import apply_proposal
from memzoi.lifecycle.propose import Draft, propose_packet
from memzoi.lifecycle.supersede import propose_supersede
from memzoi.lifecycle.tombstone import propose_tombstone

from .conftest import draft_args, write_record

PENDING = ".memzoi/proposals/pending"
FLAT = "lint-with-ruff"


def _draft(**over) -> Draft:
    a = draft_args(**over)
    return Draft(**{k: v for k, v in a.items() if k != "destination"})


@pytest.fixture
def flat(project):
    """The project with a flat record whose id is its title's concept slug, as an applied proposal has."""
    write_record(
        project,
        FLAT,
        type="procedure",
        title="Lint with ruff",
        body="Run ruff check before committing.",
        applies="pyproject.toml",
    )
    return project


def _pending(project) -> list[str]:
    return sorted(p.name for p in (project / PENDING).iterdir())


def test_a_create_whose_record_exists_is_refused_with_the_supersede_advice(flat):
    with pytest.raises(Refusal) as info:
        propose_packet(flat, _draft(title="Lint with ruff", body="Use ruff format too."), actor="a")
    assert info.value.code == "record_exists"
    assert f".memzoi/records/{FLAT}.md" in info.value.message and "supersede" in info.value.message
    assert "nothing was written" in info.value.message
    assert _pending(flat) == []
    # Another title is fine: the record id differs.
    assert (
        propose_packet(flat, _draft(title="Format with ruff", body="Use ruff format too."), actor="a").status
        == "applied"
    )


def test_a_supersede_keeping_the_target_title_is_refused(flat):
    with pytest.raises(Refusal) as info:
        propose_packet(
            flat, _draft(title="Lint with ruff", body="Run ruff check and format.", supersedes=FLAT), actor="a"
        )
    assert info.value.code == "record_exists" and f"`{FLAT}`" in info.value.message
    assert info.value.message.startswith("a new title is needed") and _pending(flat) == []  # fits a command line
    # The CLI's and the editor's supersede (one core function) refuse it too, before anything is written.
    with pytest.raises(Refusal) as cli_info:
        propose_supersede(
            flat, FLAT, title="Lint with ruff", body="Run ruff check and format.", reason="r", actor="reviewer"
        )
    assert cli_info.value.code == "record_exists" and _pending(flat) == []


def test_a_supersede_with_a_new_title_is_written_and_applies(flat):
    out = propose_supersede(
        flat,
        FLAT,
        title="Lint and format with ruff",
        body="Run ruff check and format.",
        reason="format too",
        actor="reviewer",
    )
    assert out.status == "applied"
    packet = out.details["proposal_path"]
    assert apply_proposal(flat, packet, actor="reviewer").status == "applied"
    assert (flat / ".memzoi/records/lint-and-format-with-ruff.md").is_file()


def test_propose_memory_reports_record_exists_as_a_tool_error(flat):
    session = tools.Session(flat, "test-agent", tools.RateLimit(20))
    res = tools.call(session, "propose_memory", draft_args(title="Lint with ruff", body="Use ruff format too."))
    assert res.is_error and res.data["error"]["code"] == "record_exists"
    res = tools.call(
        session,
        "propose_memory",
        draft_args(action="supersede", target=FLAT, title="Lint with ruff", body="Use ruff format too."),
    )
    assert res.is_error and res.data["error"]["code"] == "record_exists"
    assert _pending(flat) == []


def test_a_supersede_of_a_superseded_record_names_its_replacement(flat):
    replaced = propose_supersede(
        flat,
        FLAT,
        title="Lint and format with ruff",
        body="Run ruff check and format.",
        reason="format too",
        actor="reviewer",
    )
    apply_proposal(flat, replaced.details["proposal_path"], actor="reviewer")
    before = _pending(flat)
    for attempt in (
        lambda: propose_packet(
            flat, _draft(title="Lint with ruff only", body="Only ruff check.", supersedes=FLAT), actor="a"
        ),
        lambda: propose_supersede(
            flat, FLAT, title="Lint with ruff only", body="Only ruff check.", reason="r", actor="reviewer"
        ),
        lambda: propose_tombstone(flat, FLAT, reason="obsolete", actor="reviewer"),
    ):
        with pytest.raises(Refusal) as info:
            attempt()
        message = info.value.message
        assert info.value.code == "proposal_target_inactive"
        assert "superseded" in message and "`lint-and-format-with-ruff`, which replaced it" in message
        assert "nothing was written" in message and "reject" not in message
    assert _pending(flat) == before


def test_a_target_that_does_not_exist_gets_advice_for_the_one_proposing(flat):
    session = tools.Session(flat, "test-agent", tools.RateLimit(20))
    res = tools.call(session, "propose_memory", {"action": "tombstone", "target": "no-such-record", "reason": "gone"})
    error = res.data["error"]
    assert res.is_error and error["code"] == "target_missing"
    assert "nothing was written" in error["message"] and "packet" not in error["message"]
    with pytest.raises(Refusal) as info:
        propose_supersede(flat, "no-such-record", title="New", body="b", reason="r", actor="reviewer")
    assert info.value.code == "target_missing" and "reject" not in info.value.message
    assert _pending(flat) == []


def test_a_bad_applies_to_entry_is_named_by_its_argument(flat):
    session = tools.Session(flat, "test-agent", tools.RateLimit(20))
    res = tools.call(session, "propose_memory", draft_args(applies_to=["src/ok", "/etc/passwd"]))
    error = res.data["error"]
    assert res.is_error and error["code"] == "invalid_value"
    assert error["message"].startswith("`applies_to[1]` must be inside the project") and "passwd" not in str(res)
    assert _pending(flat) == []


def test_a_superseded_search_hit_names_the_record_that_replaced_it(flat):
    """Trial 2: a natural question matched only the superseded record (its words), not its replacement, and the
    hit did not say it had one, so the agent was handed stale memory with no way forward but get_memory."""
    from memzoi.agent.search import search_memory

    made = propose_supersede(
        flat, FLAT, title="Ruff settings", body="Configure ruff in pyproject.toml.", reason="moved", actor="reviewer"
    )
    apply_proposal(flat, made.details["proposal_path"], actor="reviewer")
    hits = {h["id"]: h for h in search_memory(flat, "how do I lint before committing?")["results"]}
    assert hits[FLAT]["status"] == "superseded" and hits[FLAT]["superseded_by"] == ["ruff-settings"]
    session = tools.Session(flat, "test-agent", tools.RateLimit(20))
    res = tools.call(session, "search_memory", {"query": "how do I lint before committing?"})
    assert "superseded by ruff-settings" in res.text
    fresh = search_memory(flat, "configure ruff")["results"]
    assert fresh and all(h.get("superseded_by") == [] for h in fresh if h["kind"] == "record")


def test_a_boolean_sent_as_json_text_is_decoded_like_numbers_and_arrays(flat):
    """Trial 2: ``"include_unsafe": "true"`` was refused (``Input should be a valid boolean``) although numbers and
    arrays sent as JSON text are decoded; a string that is not JSON ``true``/``false`` is still refused."""
    session = tools.Session(flat, "test-agent", tools.RateLimit(20))
    got = tools.call(session, "get_memory", {"id": FLAT, "include_unsafe": "true"})
    assert not got.is_error, got.text
    assert not tools.call(session, "list_pending", {"include_resolved": "false"}).is_error
    bad = tools.call(session, "get_memory", {"id": FLAT, "include_unsafe": "yes"})
    assert bad.is_error and bad.data["error"]["code"] == "invalid_arguments"


def test_a_hand_written_packet_whose_record_exists_is_listed_blocked(flat):
    """The packets MCP refuses to write, written by hand: ``list_pending`` says why they can never be applied."""
    from .. import builders

    builders.write(flat, f"{PENDING}/hand-create.md", builders.packet("hand-create", title="Lint with ruff"))
    builders.write(
        flat,
        f"{PENDING}/hand-supersede.md",
        builders.packet("hand-supersede", action="supersede", target=FLAT, title="Lint with ruff"),
    )
    session = tools.Session(flat, "test-agent", tools.RateLimit(20))
    res = tools.call(session, "list_pending", {})
    listed = {p["id"]: p for p in res.data["proposals"]}
    for pid in ("hand-create", "hand-supersede"):
        assert listed[pid]["can_apply"] is False and "record_exists" in listed[pid]["blocked_by"], listed[pid]
        assert f"proposal {pid} " in res.text and "record_exists" in res.text
