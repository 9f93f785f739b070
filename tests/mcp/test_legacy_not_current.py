"""A legacy record (``legacy_profile``: current Memzoi refuses the file, reference §0 "current-schema-only") is not
handed to an agent as memory: get_memory, search_memory, context packs and prechecks withhold it by the one rule
(:meth:`memzoi.agent.recall.Reader.usable`) and say how to upgrade it. A record that is not a current assertion now
(its retention has ended) is never shown as current memory: get_memory's text starts ``NOT CURRENT`` and
search_memory's row says so. Driven through the official SDK's stdio client, as an agent reads them."""

from __future__ import annotations

import json
from pathlib import Path

from memzoi.agent.exports import select

from .. import builders
from .test_stdio_e2e import connect

LEGACY_ID = "legacy-one"
OLD_ID = "facts/old-port"

#: A record in an old profile, as the corpus holds them (a legacy ``profile``, a ``version`` key, a confidence
#: label). It has no lane, so it is not a current assertion either: packs and prechecks, which read current
#: records only, never had it; get_memory and search_memory did.
LEGACY = """---
profile: memzoi/v1
version: 1
type: warning
title: "Ledger rotation uses the blue deploy lane"
timestamp: "2026-07-05T11:31:45Z"
status: active
scope: repo
visibility: repo
confidence: likely
---

# Ledger rotation uses the blue deploy lane

Rotate the ledger through the blue deploy lane before tagging a release.
"""


def _text(res) -> str:
    return "\n".join(getattr(c, "text", "") for c in res.content)


def _plant_legacy(project: Path) -> None:
    path = project / ".memzoi" / "records" / f"{LEGACY_ID}.md"
    path.write_text(LEGACY, encoding="utf-8")


async def test_a_legacy_record_is_withheld_with_how_to_upgrade_it(project, home):
    _plant_legacy(project)
    async with connect(project, home) as s:
        got = await s.call_tool("get_memory", {"id": LEGACY_ID})
        text, data = _text(got), got.structured_content
        assert not got.is_error and data["withheld"] is True and data["reasons"] == ["legacy_profile"]
        assert text.startswith(f"WITHHELD: record {LEGACY_ID} is not usable memory (legacy_profile)")
        assert f"memzoi upgrade .memzoi/records/{LEGACY_ID}.md --write" in text
        assert "blue deploy lane" not in text + json.dumps(data)
        found = await s.call_tool("search_memory", {"query": "ledger rotation blue deploy lane"})
        rows = _text(found).splitlines()
        assert not any(r.startswith(f"- {LEGACY_ID}") for r in rows)
        assert rows[-1].startswith("Withheld, not usable memory") and f"{LEGACY_ID} (legacy_profile)" in rows[-1]
        assert "memzoi upgrade PATH --write" in rows[-1]
        (hit,) = [h for h in found.structured_content["results"] if h["id"] == LEGACY_ID]
        assert hit["reasons"] == ["legacy_profile"] and hit["excerpt"] is None
        pack = await s.call_tool("build_context_pack", {"task": "rotate the ledger through the blue deploy lane"})
        assert not pack.structured_content["records"]
        assert "Rotate the ledger" not in _text(pack)
        check = await s.call_tool("precheck_action", {"action": "rotate the ledger through the blue deploy lane"})
        assert check.structured_content["warnings"] == []


async def test_a_record_past_its_retention_is_marked_not_current(project, home):
    text = builders.record(
        OLD_ID,
        type="fact",
        title="The staging port is 8443",
        body="Staging listens on port 8443 behind the proxy.",
        retention={"explicit_expires_at": "2026-01-01T00:00:00Z"},
    )
    builders.write(project, builders.record_path(OLD_ID), text)
    async with connect(project, home) as s:
        got = await s.call_tool("get_memory", {"id": OLD_ID})
        assert not got.is_error and not got.structured_content.get("withheld")
        assert _text(got).startswith("NOT CURRENT (")
        assert "not a current assertion now" in _text(got)
        assert got.structured_content["provenance"]["current_assertion"]["is_current"] is False
        found = await s.call_tool("search_memory", {"query": "staging port proxy"})
        (row,) = [r for r in _text(found).splitlines() if r.startswith(f"- {OLD_ID}")]
        assert "not current" in row


async def test_a_current_legacy_record_is_withheld_from_packs_prechecks_and_exports(project, home):
    rid = "warnings/vault-keys"  # current profile and facts, but a `version` key: legacy, and a current assertion
    text = builders.record(
        rid,
        type="warning",
        title="Rotate keys through the vault",
        body="Rotate signing keys through the vault before a release.",
        applies_to=["src/keys"],
        extra="version: 1\n",
    )
    builders.write(project, builders.record_path(rid), text)
    held = {"id": rid, "reasons": ["legacy_profile"]}
    async with connect(project, home) as s:
        check = await s.call_tool("precheck_path", {"path": "src/keys/sign.py"})
        assert check.structured_content["warnings"] == [] and held in check.structured_content["withheld"]
        assert f"{rid} (legacy_profile)" in _text(check) and "memzoi upgrade PATH --write" in _text(check)
        pack = await s.call_tool("build_context_pack", {"task": "rotate signing keys through the vault"})
        assert held in pack.structured_content["withheld"] and "before a release" not in _text(pack)
    chosen, withheld = select(project)
    assert rid not in {c["id"] for c in chosen} and held in withheld
