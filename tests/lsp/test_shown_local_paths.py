"""The language server names no secret-bearing local path raw: a workspace folder, a memzoi home and the user's Zuno
folder each named after a token (:mod:`tests.secret_names`). Command results and refusals
(:func:`memzoi_lsp.commanding.shown_answers`) and log messages (:class:`memzoi_lsp.logbridge.ShownPaths`) show each
such place as ``<redacted-path:…>``; a ``uri`` the client opens stays the file's real URI."""

from __future__ import annotations

import asyncio
import json
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from lsprotocol import types

from memzoi.judge.config import clear_cache
from memzoi.judge.pathsafety import REDACTED_PREFIX, redacted_path
from memzoi.resident import service

from ..secret_names import HOME_TOKEN, ROOT_TOKEN, USER_TOKEN, assert_no_token
from .conftest import record_text, refusal, start_client, wait_until


def without_uris(value: Any) -> Any:
    """``value`` (JSON data) without its ``uri`` values, which must stay the real file's."""
    if isinstance(value, dict):
        return {k: without_uris(v) for k, v in value.items() if not k.lower().endswith("uri")}
    if isinstance(value, list):
        return [without_uris(v) for v in value]
    return value


@asynccontextmanager
async def secret_client(tmp_path: Path, monkeypatch, damaged: bool = False):
    """A server for a workspace with one record and ``.zuno/RULES.md`` in a token-named folder, the memzoi home and
    Zuno's folder named after tokens too, for the server and for this process (which proposes candidates through
    the core). ``damaged``: the resident candidate database is garbage before the server starts."""
    home, zuno = tmp_path / HOME_TOKEN, tmp_path / USER_TOKEN / "zuno"
    home.mkdir()
    if damaged:
        (home / "memzoi-lsp-resident.db").write_bytes(b"garbage" * 1000)
    monkeypatch.setenv("MEMZOI_HOME", str(home))
    monkeypatch.setenv("ZUNO_CONFIG_DIR", str(zuno))
    root = tmp_path / ROOT_TOKEN / "ws"
    (root / ".memzoi" / "records").mkdir(parents=True)
    (root / ".memzoi" / "records" / "use-pnpm.md").write_text(record_text("use-pnpm"), encoding="utf-8")
    (root / ".zuno").mkdir()
    (root / ".zuno" / "RULES.md").write_text("Use tabs in Makefiles.", encoding="utf-8")
    clear_cache()
    lsp = await start_client("vscode", root, home, config={"logToClient": True, "logLevel": "debug"})
    try:
        yield lsp
    finally:
        try:
            await asyncio.wait_for(lsp.shutdown_session(), 10)
        finally:
            await lsp.stop()
            clear_cache()


async def execute(client, name: str, arg: Any = None) -> Any:
    args = [arg] if arg is not None else []
    return await client.workspace_execute_command_async(types.ExecuteCommandParams(command=name, arguments=args))


async def test_commands_and_logs_name_local_paths_redacted(tmp_path, monkeypatch):
    async with secret_client(tmp_path, monkeypatch) as client:
        rules = client.root / ".zuno" / "RULES.md"
        proposed = service.propose(
            client.root,
            scope="project",
            action="add",
            content="Run make lint.",
            reason="asked",
            confidence=0.9,
            actor="ada",
        ).candidate
        listed = await execute(client, "memzoi.resident.list", {"uri": rules.as_uri()})
        rebuilt = await execute(client, "memzoi.rebuild")
        approved = await execute(
            client, "memzoi.resident.approve", {"uri": rules.as_uri(), "candidate_id": proposed.id}
        )
        await wait_until(lambda: any("scanned" in m.message for m in client.log_messages))
        logs = "\n".join(m.message for m in client.log_messages)
    assert approved["status"] == "applied"
    for result in (listed, rebuilt, approved):
        assert_no_token(json.dumps(without_uris(result)))
    [project] = [s for s in listed["scopes"] if s["scope"] == "project"]
    assert project["uri"] == rules.as_uri()  # the client opens it: the real file
    assert project["path"].startswith(REDACTED_PREFIX)
    assert [c["target_path"] for c in listed["candidates"]] == [approved["target_path"]]
    assert approved["target_path"].startswith(REDACTED_PREFIX)
    assert rebuilt["project_root"] == redacted_path(client.root)
    assert_no_token(logs)


async def test_a_refusal_names_the_runtime_database_redacted(tmp_path, monkeypatch):
    async with secret_client(tmp_path, monkeypatch, damaged=True) as client:
        rules = client.root / ".zuno" / "RULES.md"
        data = await refusal(execute(client, "memzoi.resident.list", {"uri": rules.as_uri()}))
        # the start's reconciliation says it skipped the damaged database in one line (no "task failed" traceback)
        skipped = await wait_until(
            lambda: [m.message for m in client.log_messages if "resident reconciliation skipped" in m.message]
        )
        logs = "\n".join(m.message for m in client.log_messages)
    assert f"skipped for {REDACTED_PREFIX}" in skipped[0] and "background task failed" not in logs
    assert data["code"] == "corrupt_database"
    assert_no_token(json.dumps(data))
    assert REDACTED_PREFIX in data["message"]
    assert_no_token(logs)
