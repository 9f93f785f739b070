"""Issue 34 in the editor: one WorkStateProjection for the CLI, the language server and MCP (compared here), a
reflection job opened from it with its request and outcome, edit-and-approve and one-step removal through the
preview flow."""

from __future__ import annotations

import json

from lsprotocol import types

from memzoi.agent import tools
from memzoi.cli.main import main as memzoi
from memzoi.resident import reflection

from ..resident.reflection_helpers import ADD, transcript, user_config
from ..resident.stub_endpoint import Reply, Stub, call
from .test_resident import resident_client  # noqa: F401 - the fixture


async def _cmd(client, name, arg):
    return await client.workspace_execute_command_async(types.ExecuteCommandParams(command=name, arguments=[arg]))


async def test_one_projection_for_cli_lsp_and_mcp_and_a_job_opens_its_records(resident_client, tmp_path, capsys):
    client = resident_client
    (client.root / ".zuno" / "RULES.md").write_text("Use tabs in Makefiles.", encoding="utf-8")
    with Stub() as stub:
        user_config(tmp_path, stub.url, nudge=1)
        stub.replies.append(Reply("stream", [call("propose_resident_memory", {**ADD, "confidence": 0.5})]))
        res = reflection.reflect(client.root, "ses_1", transcript(tmp_path))
    assert res.state == "completed", res.message
    lsp = await _cmd(client, "memzoi.resident.state", {})
    capsys.readouterr()
    assert memzoi(["resident", "state", "--json", "--root", str(client.root)]) == 0
    cli = json.loads(capsys.readouterr().out)
    mcp = tools.call(tools.Session(client.root, "test", tools.RateLimit(10)), "get_resident_memory", {}).data
    mcp.pop("pending")
    assert mcp.pop("warnings") == []  # MCP-only: what a read could not use (a broken config.toml)
    assert lsp == cli == mcp
    (cand,) = lsp["memory_candidates"]
    (job,) = lsp["reflection_jobs"]
    assert cand["job"] == job["id"] == res.job.id and job["outcome"]["candidates"] == [cand["id"]]
    assert lsp["memory_entries"] == [{"scope": "project", "content": "Use tabs in Makefiles."}]
    opened = await _cmd(client, "memzoi.resident.job", {"job_id": job["id"]})
    assert opened["request"]["promptDigest"] and opened["outcome"]["status"] == "completed"
    assert "## request" in opened["text"] and "## outcome" in opened["text"]


async def test_edit_and_approve_and_remove_with_their_previews(resident_client):
    from memzoi.resident import service

    client = resident_client
    path = client.root / ".zuno" / "RULES.md"
    path.write_text("Use tabs in Makefiles.", encoding="utf-8")
    cand = service.propose(
        client.root,
        scope="project",
        action="add",
        content="Run make lint.",
        reason="asked",
        confidence=0.5,
        actor="ada",
    ).candidate
    uri = path.as_uri()
    diff = await _cmd(
        client,
        "memzoi.preview",
        {"uri": uri, "operation": "approve", "candidateId": cand.id, "content": "Run make lint and make test."},
    )
    assert diff["files"][0]["after"] == "Use tabs in Makefiles.\n§\nRun make lint and make test."
    assert path.read_text(encoding="utf-8") == "Use tabs in Makefiles."  # a preview writes nothing
    done = await _cmd(
        client, "memzoi.resident.edit", {"uri": uri, "candidate_id": cand.id, "content": "Run make lint and make test."}
    )
    assert (done["status"], done["original_content"]) == ("applied", "Run make lint.")
    diff = await _cmd(client, "memzoi.preview", {"uri": uri, "operation": "remove_entry", "locator": "tabs"})
    assert diff["files"][0]["after"] == "Run make lint and make test."
    gone = await _cmd(client, "memzoi.resident.remove", {"uri": uri, "locator": "tabs"})
    assert (gone["status"], gone["action"], gone["source"]) == ("applied", "remove", "user")
    assert path.read_text(encoding="utf-8") == "Run make lint and make test."
