"""The MCP server names no secret-bearing local path raw: a project folder, a memzoi home and the user's Zuno folder
each named after a token (:mod:`tests.secret_names`), driven through the SDK's stdio client. A tool's result, its
text and its errors show each such place as ``<redacted-path:…>`` (:func:`memzoi.agent.tools.shown`); a plain
project's paths are shown as they are."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, strategies as st

from memzoi.judge.pathsafety import REDACTED_PREFIX, redacted_path, shown_for_projects

from ..resident.reflection_helpers import user_config
from ..secret_names import HOME_TOKEN, ROOT_TOKEN, USER_TOKEN, assert_no_token
from .conftest import draft_args, make_project
from .test_stdio_e2e import connect

RESIDENT = {"scope": "project", "action": "add", "content": "Run make test.", "reason": "asked", "confidence": 0.5}


def said(result) -> str:
    """Everything a tool call returned: its text and its structured content."""
    return result.content[0].text + json.dumps(result.structured_content)


def _places(tmp_path: Path, secret: bool) -> tuple[Path, Path, dict]:
    """A project with ``.zuno/RULES.md``, a memzoi home and Zuno's folder (with a reflection model, whose endpoint is
    never called): under token-named folders when ``secret``. Returns the project, the home and the server's extra
    environment."""
    base, home_name, user_name = (ROOT_TOKEN, HOME_TOKEN, USER_TOKEN) if secret else ("plain", "home", "user")
    root = make_project(tmp_path / base / "repo").resolve()
    (root / ".zuno").mkdir()
    (root / ".zuno" / "RULES.md").write_text("Run make lint.\n", encoding="utf-8")
    zuno = tmp_path / user_name / "zuno"
    zuno.parent.mkdir()
    user_config(zuno.parent, "http://127.0.0.1:9/v1")  # writes <user>/zuno/memzoi.toml
    return root, tmp_path / home_name, {"ZUNO_CONFIG_DIR": str(zuno), "MEMZOI_ACTOR": "reviewer"}


async def test_resident_tools_name_their_files_and_job_redacted(tmp_path):
    root, home, env = _places(tmp_path, secret=True)
    async with connect(root, home, env=env) as s:
        proposed = await s.call_tool("propose_resident_memory", RESIDENT)
        turn = await s.call_tool("record_resident_turn", {"session_id": "s", "message_id": "m1"})
        state = await s.call_tool("get_resident_memory", {})
    for result in (proposed, turn, state):
        assert not result.is_error
        assert_no_token(said(result))
    assert proposed.structured_content["target_path"].startswith(REDACTED_PREFIX)
    assert turn.structured_content["job"]["project_root"] == redacted_path(root)
    assert REDACTED_PREFIX in state.content[0].text


async def test_a_runtime_failure_names_its_database_redacted(tmp_path):
    root, home, env = _places(tmp_path, secret=True)
    async with connect(root, home, env=env) as s:
        first = await s.call_tool("propose_memory", draft_args())
        assert not first.is_error
        [ledger] = home.rglob("memzoi-lsp-ledger.db")
        ledger.write_bytes(b"garbage" * 1000)
        failed = await s.call_tool("propose_memory", draft_args(title="Refreshes are serialised by RefreshLock"))
    assert failed.is_error and failed.structured_content["error"]["code"] == "corrupt_database"
    assert_no_token(said(failed))
    assert REDACTED_PREFIX in failed.structured_content["error"]["message"]


async def test_a_plain_project_is_named_as_it_is(tmp_path):
    root, home, env = _places(tmp_path, secret=False)
    async with connect(root, home, env=env) as s:
        proposed = await s.call_tool("propose_resident_memory", RESIDENT)
        turn = await s.call_tool("record_resident_turn", {"session_id": "s", "message_id": "m1"})
    assert proposed.structured_content["target_path"] == str(root / ".zuno" / "RULES.md")
    assert turn.structured_content["job"]["project_root"] == str(root)
    assert REDACTED_PREFIX not in said(proposed) + said(turn)


#: Folder names too short to bear a credential.
names = st.lists(st.text(alphabet="abcdefgh-_", min_size=1, max_size=6), min_size=1, max_size=4)


@given(names, names)
def test_shown_for_projects_respells_every_place_and_keeps_what_it_must(before, after):
    """A root, a memzoi home or a Zuno folder below a token-named folder is shown redacted wherever a result names
    it or a path below it; a key ``keep`` accepts (a ``uri``) is left as it is; a result naming no secret-bearing
    place is returned as the same object."""
    top = "/" + "/".join(before)
    root = f"{top}/{ROOT_TOKEN}/{'/'.join(after)}"
    value = {
        "path": f"{root}/.zuno/RULES.md",
        "items": [f"cannot read {root}/x: denied", 3, None],
        "uri": f"file://{root}/.zuno/RULES.md",
    }
    shown = shown_for_projects(value, [root], keep=lambda key: key == "uri")
    if ROOT_TOKEN in json.dumps({k: v for k, v in shown.items() if k != "uri"}):
        pytest.fail("a place below the token-named folder was named raw")
    assert shown["uri"] == value["uri"] and shown["items"][1:] == [3, None]
    assert shown["path"].startswith(REDACTED_PREFIX) and shown["path"].endswith("/.zuno/RULES.md")
    plain = {"path": f"{top}/{'/'.join(after)}/.zuno/RULES.md"}
    assert shown_for_projects(plain, [f"{top}/{'/'.join(after)}"]) is plain
