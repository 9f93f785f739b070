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
#: label). It has no lane, so no current rule reads its retention: every reader lists it as withheld anyway.
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


#: A legacy record as Memzoi's own repository held them: a lane, and a retention block of the old policy that no
#: current rule reads (so it is not a current assertion either).
LEGACY_DECISION = """---
id: trust-baselines
kind: memory
version: okf/v0.2
profile: memzoi/v1
retention:
  policy_version: memzoi/lane-retention-v1
type: decision
lane: semantic
title: "Trust baselines exclude runtime observations"
timestamp: "2026-07-17T23:25:52.992237Z"
status: active
scope: repo
visibility: repo
confidence: 1
---

# Trust baselines exclude runtime observations

Keep wall-clock latency out of the exact baseline comparison.
"""


def test_export_lists_a_legacy_record_it_leaves_out_and_expiry_says_to_upgrade_it(project, home):
    """`memzoi export` says what it withholds (docs/mcp.md, `export --help`): a legacy record whose retention no
    current rule reads was left out unlisted. `memzoi expiry` on it sent the user to `memzoi check`, which names
    only `legacy_profile`: it says to upgrade the file."""
    import os
    import subprocess
    import sys

    path = project / ".memzoi" / "records" / "trust-baselines.md"
    path.write_text(LEGACY_DECISION, encoding="utf-8")
    env = {**os.environ, "MEMZOI_HOME": str(home)}

    def memzoi(*args: str) -> subprocess.CompletedProcess[str]:
        cmd = [sys.executable, "-m", "memzoi", *args]
        return subprocess.run(cmd, cwd=project, env=env, capture_output=True, text=True, timeout=120)

    done = memzoi("export", "--json")
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    assert {"id": "trust-baselines", "reasons": ["legacy_profile"]} in out["withheld"]
    assert "trust-baselines" not in out["records"]
    text = memzoi("export").stderr
    assert "withheld trust-baselines: legacy_profile (upgrade it: `memzoi upgrade PATH --write`)" in text, text
    assert "wall-clock" not in text
    expiry = memzoi("expiry", "trust-baselines")
    assert expiry.returncode == 1
    assert "memzoi upgrade .memzoi/records/trust-baselines.md --write" in expiry.stderr, expiry.stderr
    assert "memzoi check" not in expiry.stderr
    _plant_legacy(project)  # no lane: not current either, listed the same way
    assert {"id": LEGACY_ID, "reasons": ["legacy_profile"]} in select(project)[1]
