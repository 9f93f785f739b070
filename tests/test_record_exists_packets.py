"""A pending packet whose apply would create a record that already exists, or a supersede whose title keeps its
target's id, can never be applied (Memzoi's apply creates a record only where none is, reference §2.5): a packet
written by hand gets the ``record_exists`` finding in the cross-file pass (``memzoi check``, the editor, the index),
with the words of the propose-time refusal (one rule, :mod:`memzoi.judge.recordslot`)."""

from __future__ import annotations

import json

import pytest

from memzoi.cli.main import main
from memzoi.judge.analysis import analyze_text
from memzoi.judge.recordslot import created_record_id, record_taken_reason
from memzoi.ledger import Refusal
from memzoi.lifecycle.proposal_target import check_record_free
from memzoi.project.crossfile import Workspace

from . import builders

REC = "ws/.memzoi/records/lint-with-ruff.md"
NEW = "ws/.memzoi/proposals/pending/hand-create.md"
SUP = "ws/.memzoi/proposals/pending/hand-supersede.md"


def put(ws: Workspace, path: str, text: str) -> set[str]:
    return ws.update(path, analyze_text(text, path))


def found(ws: Workspace, path: str) -> list:
    return [f for f in ws.findings_for(path) if f.code == "record_exists"]


def test_created_record_id_is_the_title_slug_of_a_create_or_supersede():
    assert created_record_id("create", "Lint with ruff") == "lint-with-ruff"
    assert created_record_id("supersede", " Lint with ruff ") == "lint-with-ruff"
    assert created_record_id("tombstone", "Lint with ruff") is None
    assert created_record_id("create", "!!!") is None  # Memzoi names it after the packet's file id then
    assert created_record_id("create", "x" * 300) is None  # the packet's own title_too_long finding


def test_a_hand_written_create_of_an_existing_record_gets_record_exists():
    ws = Workspace()
    put(ws, NEW, builders.packet("hand-create", title="Lint with ruff"))
    assert found(ws, NEW) == []
    # The record appears after the packet: the packet is re-evaluated (it depends on that id).
    assert NEW in put(ws, REC, builders.record("lint-with-ruff", title="Lint with ruff"))
    (f,) = found(ws, NEW)
    reason = record_taken_reason("lint-with-ruff", same_as_target=False, supersede=False)
    assert f.message.startswith("Its record already exists. ") and reason[1:] in f.message  # the headline, then it
    assert "retitle it or reject it" in f.message
    text = builders.packet("hand-create", title="Lint with ruff")
    assert text[f.start : f.end] in ('"Lint with ruff"', "Lint with ruff")  # on the title
    # Removing the record clears it again.
    assert NEW in ws.remove(REC)
    assert found(ws, NEW) == []


def test_a_supersede_keeping_the_target_title_gets_record_exists():
    ws = Workspace()
    put(ws, REC, builders.record("lint-with-ruff", title="Lint with ruff"))
    put(ws, SUP, builders.packet("hand-supersede", action="supersede", target="lint-with-ruff", title="Lint with ruff"))
    (f,) = found(ws, SUP)
    assert "A new title is needed: this one gives the record id `lint-with-ruff`" in f.message
    # A title of its own is fine.
    put(ws, SUP, builders.packet("hand-supersede", action="supersede", target="lint-with-ruff", title="Lint fast"))
    assert found(ws, SUP) == []


def test_the_propose_time_refusal_uses_the_same_words(tmp_path):
    builders.write(tmp_path, ".memzoi/records/lint-with-ruff.md", builders.record("lint-with-ruff"))
    for target, same in ((None, False), ("lint-with-ruff", True)):
        with pytest.raises(Refusal) as info:
            check_record_free(tmp_path, "Lint with ruff", target_id=target)
        reason = record_taken_reason("lint-with-ruff", same_as_target=same, supersede=target is not None)
        assert info.value.code == "record_exists" and info.value.message == f"{reason}; nothing was written"


def test_memzoi_check_reports_the_hand_written_packet(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("MEMZOI_HOME", str(tmp_path / "home"))
    root = tmp_path / "repo"
    builders.write(root, ".memzoi/records/lint-with-ruff.md", builders.record("lint-with-ruff", title="Lint with ruff"))
    builders.write(
        root, ".memzoi/proposals/pending/hand-create.md", builders.packet("hand-create", title="Lint with ruff")
    )
    builders.write(root, ".memzoi/proposals/pending/fine.md", builders.packet("fine", title="Format with ruff"))
    capsys.readouterr()
    main(["check", "--root", str(root), "--format", "json", "--no-cache"])
    report = json.loads(capsys.readouterr().out)
    text = json.dumps(report)
    assert text.count('"record_exists"') == 1 and "hand-create" in text
