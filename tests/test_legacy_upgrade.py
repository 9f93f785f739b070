"""Legacy upgrade of records and proposal packets, as Memzoi's own migrations in its history produced them.

Memzoi's history holds each example packet in three forms: ``memzoi/v0`` (``version: okf/v0.1``, no retention,
origin or content class), ``memzoi/v1`` (``version: okf/v0.2``, ``retention.policy_version``,
``origin.version``) and the current form, which the corpus's ``examples`` holds. The legacy forms are rebuilt
here from the corpus texts by undoing exactly those migration steps, then upgraded and compared byte for byte
with the corpus text.
"""

from __future__ import annotations

import re

import pytest
from hypothesis import example, given, settings, strategies as st

from memzoi.cli.main import main
from memzoi.judge.analysis import analyze_text, upgrade_text
from memzoi.judge.legacy import UpgradeError, apply_edits, concept_slug, slug_by_characters, upgrade_legacy
from memzoi.judge.workspace import place
from memzoi.read.document import frame

from .conftest import CORPUS

PACKETS = sorted((CORPUS / "examples" / "proposals").glob("*.md")) if CORPUS.is_dir() else []
_BLOCKS = re.compile(r"retention:.*?(?=^type:)", re.S | re.M)


def as_v1(text: str) -> str:
    """The ``memzoi/v1`` form of a current packet or record (the intermediate profile of Memzoi's history)."""
    text = text.replace("profile: memzoi\n", "version: okf/v0.2\nprofile: memzoi/v1\n", 1)
    text = text.replace("retention: {}\n", "retention:\n  policy_version: memzoi/lane-retention-v1\n", 1)
    text = text.replace(
        "retention:\n  occurred_at", "retention:\n  policy_version: memzoi/lane-retention-v1\n  occurred_at", 1
    )
    return text.replace("origin:\n", "origin:\n  version: memzoi/origin-v1\n", 1)


def as_v0(text: str) -> str:
    """The ``memzoi/v0`` form: no retention, origin or content class; ``confirmed`` for confidence 1.0."""
    text = text.replace("profile: memzoi\n", "version: okf/v0.1\nprofile: memzoi/v0\n", 1)
    text = _BLOCKS.sub("", text, count=1)
    text = text.replace("content_class: general_repo_knowledge\n", "", 1)
    return text.replace("confidence: 1.0\n", "confidence: confirmed\n", 1)


@pytest.mark.parametrize("form", [as_v0, as_v1], ids=["v0", "v1"])
@pytest.mark.parametrize("path", PACKETS, ids=lambda p: p.stem)
def test_legacy_packet_upgrades_to_memzoi_migrated_bytes(tmp_path, path, form):
    want = path.read_text(encoding="utf-8")
    legacy = form(want)
    assert "profile: memzoi/v" in legacy and "version: okf/" in legacy and legacy != want
    dst = tmp_path / ".memzoi" / "proposals" / "pending" / path.name
    new, changes = upgrade_text(legacy, dst)
    assert new == want, changes
    assert [f.code for f in analyze_text(legacy, dst).findings if f.severity == 1] == []


def test_v0_record_with_id_matches_memzoi_migration(tmp_path, corpus):
    """``compact-canonical-from-proposal.md``: a v0 record whose frontmatter id differs from its path. Memzoi
    put retention/origin right after ``profile``, keyed the origin by the path id and wrote ``confirmed`` as
    ``1.0``."""
    want = (corpus / "examples" / "compact-canonical-from-proposal.md").read_text(encoding="utf-8")
    legacy = as_v0(want)
    assert "confidence: confirmed" in legacy and "origin" not in legacy
    dst = tmp_path / ".memzoi" / "records" / "compact-canonical-from-proposal.md"
    new, _ = upgrade_text(legacy, dst)
    assert new == want


V0_RECORD = """---
id: semantic/old-id
kind: memory
version: okf/v0.1
profile: memzoi/v0
type: fact
lane: {lane}
title: Use pnpm
timestamp: 2026-07-06T00:00:00Z
status: current
visibility: repo
confidence: {confidence}
scope: repo
---

# Use pnpm

Use pnpm for installs.
"""


def test_v0_record_fields_go_where_memzoi_put_them(tmp_path):
    dst = tmp_path / ".memzoi" / "records" / "use-pnpm.md"
    new, _ = upgrade_text(V0_RECORD.format(lane="semantic", confidence="confirmed"), dst)
    assert (
        new
        == """---
id: semantic/old-id
kind: memory
profile: memzoi
retention: {}
origin:
  origin_key: repository-record:use-pnpm
  route: repository_materialization
type: fact
lane: semantic
title: Use pnpm
timestamp: 2026-07-06T00:00:00Z
status: active
visibility: repo
content_class: general_repo_knowledge
confidence: 1.0
scope: repo
---

# Use pnpm

Use pnpm for installs.
"""
    )
    # The id differs from the path: Memzoi keys the record by its path, so only the warning remains.
    assert [(f.code, f.severity) for f in analyze_text(new, dst).findings] == [("id_path_mismatch", 2)]


@pytest.mark.parametrize("label,number", [("likely", "0.75"), ("uncertain", "0.4")])
def test_confidence_labels(tmp_path, label, number):
    dst = tmp_path / ".memzoi" / "records" / "use-pnpm.md"
    new, _ = upgrade_text(V0_RECORD.format(lane="semantic", confidence=label), dst)
    assert f"\nconfidence: {number}\n" in new


@pytest.mark.parametrize("lane,fact", [("episodic", "occurred_at"), ("session", "started_at")])
def test_missing_retention_gets_memzoi_creation_defaults(tmp_path, lane, fact):
    dst = tmp_path / ".memzoi" / "records" / "use-pnpm.md"
    new, _ = upgrade_text(V0_RECORD.format(lane=lane, confidence="1"), dst)
    assert f"profile: memzoi\nretention:\n  {fact}: 2026-07-06T00:00:00Z\norigin:\n" in new
    assert [f.code for f in analyze_text(new, dst).findings if f.severity == 1] == []


V1_QUOTED = """---
id: pkt-q
kind: proposal
version: okf/v0.2
profile: memzoi/v1
retention:
  policy_version: memzoi/lane-retention-v1
  occurred_at: "2026-07-06T00:15:00Z"
origin:
  version: memzoi/origin-v1
  origin_key: "repository-proposal:pkt-q"
  route: repository_proposal
type: episode
lane: episodic
title: Handoff
description: Handoff notes.
status: proposed
proposal:
  action: create
  proposed_by: agent
  proposed_at: 2026-07-06T00:15:00Z
scope:
  kind: repo
timestamp: 2026-07-06T00:15:00Z
supersedes: []
sensitivity: repo-safe
content_class: general_repo_knowledge
---

# Handoff

Handoff notes.
"""


def test_v1_blocks_lose_only_their_legacy_lines(tmp_path):
    dst = tmp_path / ".memzoi" / "proposals" / "pending" / "pkt-q.md"
    new, _ = upgrade_text(V1_QUOTED, dst)
    assert new == V1_QUOTED.replace("version: okf/v0.2\nprofile: memzoi/v1\n", "profile: memzoi\n").replace(
        "  policy_version: memzoi/lane-retention-v1\n", ""
    ).replace("  version: memzoi/origin-v1\n", "")


def test_v0_packet_without_sensitivity_gets_content_class_at_the_end(tmp_path):
    text = V1_QUOTED.replace("sensitivity: repo-safe\ncontent_class: general_repo_knowledge\n", "")
    text = re.sub(r"retention:.*?(?=^type:)", "", text, count=1, flags=re.S | re.M)
    text = text.replace("version: okf/v0.2\nprofile: memzoi/v1", "version: okf/v0.1\nprofile: memzoi/v0")
    new, _ = upgrade_text(text, tmp_path / ".memzoi" / "proposals" / "pending" / "pkt-q.md")
    assert new.startswith(
        "---\nid: pkt-q\nkind: proposal\nprofile: memzoi\nretention:\n  occurred_at: "
        "2026-07-06T00:15:00Z\norigin:\n  origin_key: repository-proposal:pkt-q\n"
        "  route: repository_proposal\ntype: episode\n"
    )
    assert "supersedes: []\ncontent_class: general_repo_knowledge\n---\n" in new


def test_editor_quick_fix_is_the_upgrade(tmp_path):
    """The ``legacy_profile`` quick fix carries the edits of the same core upgrade that ``memzoi upgrade`` runs."""
    dst = tmp_path / ".memzoi" / "proposals" / "pending" / "pkt-q.md"
    a = analyze_text(V1_QUOTED, dst)
    [f] = [f for f in a.findings if f.code == "legacy_profile"]
    [fix] = f.fixes
    assert list(fix.edits) == upgrade_legacy(frame(V1_QUOTED), place(dst)).edits
    assert apply_edits(V1_QUOTED, list(fix.edits)) == upgrade_text(V1_QUOTED, dst)[0]


def test_kind_must_fit_the_folder(tmp_path):
    with pytest.raises(UpgradeError, match="kind: memory"):
        upgrade_legacy(frame(V1_QUOTED), place(tmp_path / ".memzoi" / "records" / "pkt-q.md"))


def test_cli_upgrades_a_packet_folder(capsys, tmp_path):
    pending = tmp_path / ".memzoi" / "proposals" / "pending"
    pending.mkdir(parents=True)
    dst = pending / "pkt-q.md"
    dst.write_text(V1_QUOTED, encoding="utf-8")
    assert main(["upgrade", str(pending)]) == 0
    out, err = capsys.readouterr()
    assert out.startswith("--- a/") and "-profile: memzoi/v1" in out and "would upgrade 1 legacy file(s)" in err
    assert dst.read_text(encoding="utf-8") == V1_QUOTED
    assert main(["upgrade", str(pending), "--write"]) == 0
    assert dst.read_text(encoding="utf-8") == upgrade_text(V1_QUOTED, dst)[0]
    assert main(["check", str(dst)]) == 0


@settings(max_examples=400, deadline=None)
@given(st.text(alphabet=st.sampled_from([*"aZ09 -_./:!\t\n", "İ", "é", "ß", "Ⅻ"]), max_size=40))
@example("  Use pnpm -- not npm!  ")
@example("--A--")
def test_the_concept_slug_of_an_ascii_title_equals_the_character_walk(title):
    assert concept_slug(title) == slug_by_characters(title)
    ascii_title = title.encode("ascii", "ignore").decode()
    assert concept_slug(ascii_title) == slug_by_characters(ascii_title)
