"""End to end: the ``memzoi-mcp`` console script driven by the official SDK's stdio client, and the review side
(``memzoi check``, ``history``, ``proposals apply``) on what it wrote."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from contextlib import asynccontextmanager
from pathlib import Path

import anyio
import mcp_types as types
import pytest
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.shared.exceptions import MCPError

from memzoi.cli.main import main as memzoi

from .conftest import FACT_ID, WARNING_ID, all_bytes, draft_args

SERVER = Path(sys.executable).with_name("memzoi-mcp")
PENDING = ".memzoi/proposals/pending"
TOOLS = {
    "search_memory",
    "get_memory",
    "get_resident_memory",
    "build_context_pack",
    "precheck_path",
    "list_pending",
    "propose_memory",
    "propose_resident_memory",
    "precheck_action",
    "precheck_command",
    "inspect_memory_expiry",
    "plan_maintenance",
    "plan_capture",
    "record_resident_turn",
}


@asynccontextmanager
async def connect(
    project: Path,
    home: Path,
    client: str = "e2e-agent",
    args: tuple[str, ...] = (),
    cwd: Path | None = None,
    argv: list[str] | None = None,
    env: dict | None = None,
):
    """A session with ``memzoi-mcp`` for ``project`` (``--root`` unless ``cwd`` is given; ``argv`` replaces all
    arguments; ``env`` adds to the server's environment)."""
    params = StdioServerParameters(
        command=str(SERVER),
        args=argv if argv is not None else [*(() if cwd else ("--root", str(project))), *args],
        env={"MEMZOI_HOME": str(home), "PATH": os.environ.get("PATH", ""), **(env or {})},
        cwd=str(cwd) if cwd else None,
    )
    with open(os.devnull, "w") as errlog:
        async with stdio_client(params, errlog=errlog) as (read, write):
            async with ClientSession(read, write, client_info=types.Implementation(name=client, version="1")) as s:
                await s.initialize()
                yield s


def cli(capsys, *argv: str) -> tuple[int, dict]:
    """``memzoi …`` in-process (``--json`` added unless ``--format`` is given); returns the exit code and the
    parsed output."""
    capsys.readouterr()
    code = memzoi([*argv] if "--format" in argv else [*argv, "--json"])
    return code, json.loads(capsys.readouterr().out or "{}")


async def test_session_propose_review_apply_recall(project, home, capsys):
    async with connect(project, home, client="claude-code") as s:
        listed = await s.list_tools()
        assert {t.name for t in listed.tools} == TOOLS
        assert all(t.input_schema["type"] == "object" for t in listed.tools)
        res = await s.call_tool("propose_memory", draft_args())
        assert not res.is_error, res.content[0].text
        pid = res.structured_content["proposal_id"]
        assert "pending human review" in res.content[0].text
    packet = project / PENDING / f"{pid}.md"
    assert packet.is_file()
    code, out = cli(capsys, "check", str(project / ".memzoi"), "--format", "json")
    assert code == 0 and out["findings"] == []
    code, out = cli(capsys, "history", "--root", str(project))
    (change,) = out["changes"]
    assert change["source"] == "mcp" and change["actor"] == "claude-code" and change["operation"] == "propose"
    code, out = cli(capsys, "proposals", "list", "--root", str(project))
    assert [p["id"] for p in out["proposals"]] == [pid]
    code, applied = cli(capsys, "proposals", "apply", pid, "--root", str(project), "--actor", "reviewer")
    assert code == 0 and applied["status"] == "applied"
    record_id = applied["details"]["record_id"]
    async with connect(project, home) as s:
        found = await s.call_tool("search_memory", {"query": "RefreshLock"})
        assert [h["id"] for h in found.structured_content["results"]] == [record_id]
        pack = await s.call_tool(
            "build_context_pack", {"task": "touch the token refresh", "paths": ["src/auth/session.ts"]}
        )
        ids = [r["id"] for r in pack.structured_content["records"]]
        assert record_id in ids and WARNING_ID in ids
        assert "Every token refresh takes RefreshLock" in pack.content[0].text
        got = await s.call_tool("get_memory", {"id": record_id})
        assert got.structured_content["provenance"]["proposal_id"] == pid
        pre = await s.call_tool("precheck_path", {"path": "src/auth/session.ts"})
        assert [w["record_id"] for w in pre.structured_content["warnings"]] == [WARNING_ID]


async def test_planted_token_is_refused_and_never_stored(project, home):
    token = "ghp_" + "aB3dE5fG7hJ9kL1mN2pQ4" + "rS6tU8vW0xY2zA4"  # assembled at run time
    async with connect(project, home) as s:
        res = await s.call_tool("propose_memory", draft_args(body=f"CI uses {token} to push tags."))
        assert res.is_error
        err = res.structured_content["error"]
        assert err["code"] == "blocked" and "credential_token" in err["reasons"]
        echoed = token in res.content[0].text or token in json.dumps(res.structured_content)
        assert not echoed
        local = await s.call_tool("propose_memory", draft_args(body=f"CI uses {token}.", destination="local"))
        assert local.is_error and local.structured_content["error"]["code"] == "blocked"
    assert list((project / PENDING).iterdir()) == []
    stored = token.encode() in all_bytes(home)
    assert not stored


async def test_client_name_with_a_token_is_refused_and_never_stored(project, home, capsys):
    token = "ghp_" + "aB3dE5fG7hJ9kL1mN2pQ4" + "rS6tU8vW0xY2zA4"  # assembled at run time
    async with connect(project, home, client=f"agent {token}") as s:
        local = await s.call_tool("propose_memory", draft_args(destination="local"))
        assert local.is_error and "credential_token" in local.structured_content["error"]["reasons"]
        assert token not in local.content[0].text
    capsys.readouterr()
    assert memzoi(["local", "pending", "--root", str(project)]) == 0
    assert token not in capsys.readouterr().out
    assert token.encode() not in all_bytes(home)


async def test_two_clients_at_once(project, home, capsys):
    results: dict[str, types.CallToolResult] = {}

    async def one(name: str, args: dict) -> None:
        async with connect(project, home, client=name) as s:
            results[name] = await s.call_tool("propose_memory", args)

    same = draft_args(title="Same fact", body="Both agents learned that migrations run in alembic.")
    async with anyio.create_task_group() as tg:
        tg.start_soon(one, "agent-a", draft_args())
        tg.start_soon(one, "agent-b", draft_args(title="Use uv", body="Install dependencies with uv sync."))
        tg.start_soon(one, "agent-c", same)
        tg.start_soon(one, "agent-d", {**same, "title": "Same fact again"})
    assert not results["agent-a"].is_error and not results["agent-b"].is_error
    dup = [r for n, r in results.items() if n in ("agent-c", "agent-d") and r.is_error]
    assert len(dup) == 1 and dup[0].structured_content["error"]["code"] == "duplicate_content"
    assert len(list((project / PENDING).iterdir())) == 3
    code, out = cli(capsys, "history", "--root", str(project))
    assert sorted(c["actor"] for c in out["changes"]) == sorted(
        ["agent-a", "agent-b", *(n for n in ("agent-c", "agent-d") if not results[n].is_error)]
    )


async def test_malformed_arguments_and_unknown_tool(project, home):
    async with connect(project, home) as s:
        bad = await s.call_tool("propose_memory", {"title": "x", "body": 5, "confidence": 2})
        assert bad.is_error and bad.structured_content["error"]["code"] == "invalid_arguments"
        fields = {p["field"] for p in bad.structured_content["error"]["problems"]}
        assert {"body", "confidence", "reason"} <= fields
        # type and lane are required by the action (a tombstone takes neither), so checked once the fields pass
        short = await s.call_tool("propose_memory", {"title": "x", "body": "y", "confidence": 0.5, "reason": "r"})
        assert short.is_error and "needs type, lane" in short.content[0].text
        also = await s.call_tool("get_memory", {"id": FACT_ID, "path": "/etc/passwd"})
        assert also.is_error and also.structured_content["error"]["code"] == "invalid_arguments"
        with pytest.raises(MCPError) as info:
            await s.call_tool("apply_proposal", {"id": "x"})
        assert info.value.code == types.INVALID_PARAMS and "unknown tool" in info.value.message
        fine = await s.call_tool("list_pending", {})  # the session survives both
        assert not fine.is_error
    assert list((project / PENDING).iterdir()) == []


async def test_local_candidate_promotion_over_mcp_and_undo(project, home, capsys):
    (project / ".memzoi" / "config.toml").write_text('[promotion]\nmode = "high_confidence"\n', encoding="utf-8")
    async with connect(project, home, client="codex", cwd=project) as s:  # root found from the working directory
        high = await s.call_tool("propose_memory", draft_args(destination="local", confidence=0.95))
        low = await s.call_tool(
            "propose_memory",
            draft_args(destination="local", confidence=0.5, body="Prefer small PRs in this repository."),
        )
        assert high.structured_content["candidate"]["state"] == "applied"
        assert low.structured_content["candidate"]["state"] == "pending"
        pending = await s.call_tool("list_pending", {})
        assert [c["id"] for c in pending.structured_content["local_candidates"]] == [
            low.structured_content["candidate"]["id"]
        ]
    assert list((project / PENDING).iterdir()) == []  # local never touches the git plane
    code, out = cli(capsys, "local", "list", "--root", str(project))
    assert [r["title"] for r in out["records"]] == ["Token refreshes go through RefreshLock"]
    change_id = high.structured_content["change"]["change_id"]
    code, _ = cli(capsys, "undo", change_id, "--root", str(project))
    assert code == 0
    code, out = cli(capsys, "local", "list", "--root", str(project))
    assert out["records"] == []


async def test_rate_limit_option(project, home):
    async with connect(project, home, args=("--proposals-per-minute", "1")) as s:
        first = await s.call_tool("propose_memory", draft_args())
        second = await s.call_tool("propose_memory", draft_args(body="A second durable fact about hatch."))
    assert not first.is_error
    assert second.is_error and second.structured_content["error"]["code"] == "rate_limited"


def test_usage_errors_and_help(tmp_path, home):
    bad = subprocess.run(
        [str(SERVER), "--proposals-per-minute", "-1"],
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        env={**os.environ, "MEMZOI_HOME": str(home)},
        timeout=60,
    )
    assert bad.returncode == 2 and bad.stdout == "" and "must be 0 or more" in bad.stderr
    typo = subprocess.run(
        [str(SERVER), "--root", str(tmp_path / "no-such-folder")],
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        env={**os.environ, "MEMZOI_HOME": str(home)},
        timeout=60,
    )
    assert typo.returncode == 2 and typo.stdout == "" and "no such directory" in typo.stderr
    helped = subprocess.run([str(SERVER), "--help"], capture_output=True, text=True, timeout=60)
    assert helped.returncode == 0 and "examples:" in helped.stdout and "exit status" in helped.stdout


@asynccontextmanager
async def connect_plain(
    home: Path, *, args: tuple[str, ...] = (), cwd: Path, env: dict | None = None, roots: list[str] | None = None
):
    """A session with ``memzoi-mcp`` started in ``cwd`` with ``args``; the client offers ``roots`` when given."""
    params = StdioServerParameters(
        command=str(SERVER),
        args=list(args),
        cwd=str(cwd),
        env={"MEMZOI_HOME": str(home), "PATH": os.environ.get("PATH", ""), **(env or {})},
    )
    current = list(roots or [])

    async def list_roots(ctx):
        return types.ListRootsResult(roots=[types.Root(uri=u) for u in current])

    with open(os.devnull, "w") as errlog:
        async with stdio_client(params, errlog=errlog) as (read, write):
            async with ClientSession(
                read,
                write,
                list_roots_callback=list_roots if roots is not None else None,
                client_info=types.Implementation(name="e2e", version="1"),
            ) as s:
                await s.initialize()
                s.roots = current  # the test changes them, then notifies
                yield s


async def test_without_a_memzoi_folder_the_server_answers_and_every_tool_says_how_to_create_one(tmp_path, home):
    empty = tmp_path / "empty"
    empty.mkdir()
    async with connect_plain(home, args=("--root", str(empty)), cwd=tmp_path) as s:
        assert {t.name for t in (await s.list_tools()).tools} == TOOLS
        res = await s.call_tool("search_memory", {"query": "anything"})
    assert res.is_error and res.structured_content["error"]["code"] == "no_project"
    assert "memzoi init" in res.content[0].text and str(empty) in res.content[0].text


@pytest.mark.filterwarnings("ignore::mcp.MCPDeprecationWarning")  # roots: deprecated in the newest protocol, still sent
async def test_the_project_comes_from_the_clients_roots_then_claude_project_dir(project, home, tmp_path):
    elsewhere = tmp_path / "home-dir"  # Cursor starts servers in $HOME, outside any project
    elsewhere.mkdir()
    uri = project.as_uri()
    async with connect_plain(home, cwd=elsewhere, roots=[(tmp_path / "nothing-here").as_uri(), uri]) as s:
        found = await s.call_tool("precheck_path", {"path": "src/auth/session.ts"})
        assert not found.is_error and found.structured_content["warnings"], found.content[0].text
        s.roots[:] = [elsewhere.as_uri()]  # the user closed the project's folder: asked again, nothing found
        await s.send_roots_list_changed()
        gone = await s.call_tool("precheck_path", {"path": "src/auth/session.ts"})
        assert gone.is_error and gone.structured_content["error"]["code"] == "no_project"
    async with connect_plain(home, cwd=elsewhere, env={"CLAUDE_PROJECT_DIR": str(project)}) as s:
        found = await s.call_tool("precheck_path", {"path": "src/auth/session.ts"})
        assert not found.is_error and found.structured_content["warnings"], found.content[0].text


async def test_resident_memory_proposal_then_human_approval(project, home, capsys):
    async with connect(project, home, client="claude-code") as s:
        res = await s.call_tool(
            "propose_resident_memory",
            {
                "scope": "project",
                "action": "add",
                "content": "Run hatch build before tagging.",
                "reason": "the release broke twice",
                "confidence": 0.7,
            },
        )
        assert not res.is_error, res.content[0].text
        cid = res.structured_content["id"]
        assert res.structured_content["status"] == "pending" and res.structured_content["actor"] == "claude-code"
        assert "memzoi resident approve" in res.content[0].text
        bad = await s.call_tool(
            "propose_resident_memory",
            {"scope": "project", "action": "remove", "old_text": "nothing like this", "reason": "r", "confidence": 1},
        )
        assert bad.is_error and bad.structured_content["error"]["code"] == "no_match"
    assert not (project / ".zuno" / "RULES.md").exists()  # nothing written before a human decides
    code, out = cli(capsys, "resident", "approve", cid, "--root", str(project))
    assert code == 0 and out["status"] == "applied" and out["source"] == "foreground_tool"
    assert (project / ".zuno" / "RULES.md").read_text(encoding="utf-8") == "Run hatch build before tagging."


def test_stdout_carries_only_protocol_messages(project, home):
    """Raw JSON-RPC over the pipes: every line the server writes is one JSON-RPC message, also for a proposal (the
    core logs and writes files meanwhile) and a refusal."""
    lines = [
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": {"name": "raw-client", "version": "0"},
            },
        },
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
        {
            "jsonrpc": "2.0",
            "id": 3,
            "method": "tools/call",
            "params": {"name": "propose_memory", "arguments": draft_args()},
        },
        {
            "jsonrpc": "2.0",
            "id": 4,
            "method": "tools/call",
            "params": {"name": "propose_memory", "arguments": draft_args()},
        },
    ]
    proc = subprocess.Popen(
        [str(SERVER), "--root", str(project)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        env={**os.environ, "MEMZOI_HOME": str(home)},
    )
    replies: dict[int, dict] = {}
    assert proc.stdin and proc.stdout
    for msg in lines:
        proc.stdin.write((json.dumps(msg) + "\n").encode())
        proc.stdin.flush()
        if "id" in msg:
            while msg["id"] not in replies:
                line = proc.stdout.readline()
                assert line, "the server closed its output"
                parsed = json.loads(line)
                assert parsed["jsonrpc"] == "2.0"
                if "id" in parsed:
                    replies[parsed["id"]] = parsed
    proc.stdin.close()
    rest = proc.stdout.read()
    assert proc.wait(timeout=30) == 0
    for line in rest.splitlines():
        assert json.loads(line)["jsonrpc"] == "2.0"
    assert replies[1]["result"]["serverInfo"]["name"] == "memzoi-mcp"
    assert replies[3]["result"]["isError"] is False
    assert replies[4]["result"]["isError"] is True
    assert replies[4]["result"]["structuredContent"]["error"]["code"] == "duplicate_content"
