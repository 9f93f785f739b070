"""A record Memzoi cannot type (``lane: sideways``) whose ``invalid_value`` the project's ``[rules]`` try to grade as a
warning: ``memzoi check`` still refuses it (the setting is ignored, promise 1), so an agent's reads withhold it with
``typed-record`` and say ``memzoi check`` refuses it, which is true. Through the official SDK's stdio client."""

from __future__ import annotations

import json
import os
import subprocess
import sys

from .. import builders
from .test_stdio_e2e import connect

BAD_ID = "warnings/deploy-window"


def _text(res) -> str:
    return "\n".join(getattr(c, "text", "") for c in res.content)


async def test_a_record_check_refuses_despite_the_rules_is_withheld_saying_so(project, home):
    text = builders.record(
        BAD_ID,
        type="warning",
        lane="sideways",
        title="Deploys wait for the release window",
        body="Never deploy the auth service outside the Tuesday release window.",
        description=None,
    )
    builders.write(project, builders.record_path(BAD_ID), text)
    (project / ".memzoi/config.toml").write_text(
        '[rules]\nseverity = { invalid_value = "warning" }\n', encoding="utf-8"
    )
    checked = subprocess.run(
        [sys.executable, "-m", "memzoi", "check", "--format", "json"],
        cwd=project,
        env={**os.environ, "MEMZOI_HOME": str(home)},
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
    )
    found = {(f["path"].rsplit("/", 1)[-1], f["code"], f["severity"]) for f in json.loads(checked.stdout)["findings"]}
    assert checked.returncode == 1 and ("deploy-window.md", "invalid_value", "error") in found
    assert ("config.toml", "invalid_config", "error") in found
    async with connect(project, home) as s:
        got = await s.call_tool("get_memory", {"id": BAD_ID})
        assert not got.is_error and got.structured_content["withheld"] is True
        assert got.structured_content["reasons"] == ["typed-record"]
        assert _text(got).startswith(f"WITHHELD: record {BAD_ID} is not usable memory (typed-record)")
        assert "release window" not in _text(got)
        found_hits = await s.call_tool("search_memory", {"query": "deploy auth release window"})
        last = _text(found_hits).splitlines()[-1]
        assert last.startswith("Withheld, not usable memory (`memzoi check` refuses it now")
        assert f"{BAD_ID} (typed-record)" in last
