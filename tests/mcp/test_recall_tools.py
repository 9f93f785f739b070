"""Memzoi's read-only recall tools over the real stdio server, through the SDK client: ``precheck_action``,
``precheck_command`` and ``inspect_memory_expiry`` (and their refusals), each answering with structured content in
the core's shape and citing its plane."""

from __future__ import annotations

import jsonschema

from .conftest import FACT_ID, WARNING_ID
from .test_stdio_e2e import connect


async def _valid(s, name: str, result):
    """``result`` succeeded and its structured content validates against the listed tool's outputSchema."""
    assert not result.is_error, result.content[0].text
    listed = {t.name: t for t in (await s.list_tools()).tools}
    jsonschema.validate(result.structured_content, listed[name].output_schema)
    return result


async def test_precheck_action_and_command(project, home):
    async with connect(project, home) as s:
        act = await s.call_tool(
            "precheck_action", {"action": "serialise session refreshes", "path": "src/auth/session.ts"}
        )
        await _valid(s, "precheck_action", act)
        (w,) = act.structured_content["warnings"]
        assert w["record_id"] == WARNING_ID and w["path_score"] == 3 and w["lexical"] is True
        assert w["citations"][0]["provenance"] == "git" and "provenance git" in act.content[0].text
        other = await s.call_tool("precheck_action", {"action": "serialise session refreshes", "path": "docs/x.md"})
        assert other.structured_content["warnings"] == []  # the action text does not bypass the path
        cmd = await _valid(
            s, "precheck_command", await s.call_tool("precheck_command", {"command": "refresh two tabs at once"})
        )
        assert [x["record_id"] for x in cmd.structured_content["warnings"]] == [WARNING_ID]
        bad = await s.call_tool("precheck_command", {"command": "ls", "path": "../../etc"})
        assert bad.is_error and bad.structured_content["error"]["code"] == "invalid_value"


async def test_inspect_memory_expiry(project, home):
    async with connect(project, home) as s:
        res = await _valid(
            s, "inspect_memory_expiry", await s.call_tool("inspect_memory_expiry", {"record_id": FACT_ID})
        )
        data = res.structured_content
        assert data["record"]["id"] == FACT_ID and data["excluded_from_normal_reads"] is False
        assert data["retention"]["reason"] == "no_age_limit" and "included in" in res.content[0].text
        missing = await s.call_tool("inspect_memory_expiry", {"record_id": "no-such-record"})
        assert missing.is_error and missing.structured_content["error"]["code"] == "not_found"
        extra = await s.call_tool("build_context_pack", {"task": "x", "include_local": True})
        assert extra.is_error  # Memzoi's build_context_pack rejects include_local and include_session


async def test_plan_maintenance_is_returned_never_written(project, home):
    before = sorted(p for p in project.rglob("*") if ".git" not in p.parts)
    async with connect(project, home) as s:
        res = await s.call_tool(
            "plan_maintenance", {"schema": "memzoi/maintenance-request", "evaluated_at": "2026-08-01T00:00:00Z"}
        )
        await _valid(s, "plan_maintenance", res)
        plan = res.structured_content
        assert plan["schema"] == "memzoi/maintenance-plan" and plan["summary"]["records"] == 2
        assert plan["request"]["evaluated_at"] == "2026-08-01T00:00:00Z" and "nothing written" in res.content[0].text
        again = await s.call_tool("plan_maintenance", {"evaluated_at": "2026-08-01T00:00:00Z"})
        assert again.structured_content["plan_id"] == plan["plan_id"]
        bad = await s.call_tool("plan_maintenance", {"schema": "memzoi/other"})
        assert bad.is_error and bad.structured_content["error"]["code"] == "invalid_value"
        unknown = await s.call_tool("plan_maintenance", {"record_ids": ["no-such"]})
        assert unknown.structured_content["error"]["code"] == "not_found"
    assert sorted(p for p in project.rglob("*") if ".git" not in p.parts) == before


def _capture_request(path: str) -> dict:
    return {
        "schema": "memzoi/capture-request",
        "extractor": {"profile": "markdown-deterministic"},
        "sources": [
            {"source_id": "notes", "locator": {"kind": "project_path", "path": path}, "media_type": "text/markdown"}
        ],
    }


async def test_plan_capture_returns_repository_plans_and_denies_private_ones(project, home):
    (project / "notes.md").write_text(
        "# Notes\n\n## Decision: Verify release archives\n\nCheck the SHA-256 of every "
        "downloaded archive before unpacking it.\n",
        encoding="utf-8",
    )
    (project / "private.md").write_text(
        "# Me\n\n## Preference: Dark theme\n\nI like the dark theme.\n", encoding="utf-8"
    )
    before = sorted(p for p in project.rglob("*") if ".git" not in p.parts)
    async with connect(project, home) as s:
        res = await _valid(s, "plan_capture", await s.call_tool("plan_capture", _capture_request("notes.md")))
        assert res.structured_content["data_class"] == "repo_safe" and "nothing written" in res.content[0].text
        denied = await s.call_tool("plan_capture", _capture_request("private.md"))
        assert denied.is_error and denied.structured_content["error"]["code"] == "private_plan_denied"
        other = await s.call_tool("plan_capture", {**_capture_request("notes.md"), "extractor": {"profile": "adr"}})
        assert other.is_error and other.structured_content["error"]["code"] == "unsupported_capture_profile"
    assert sorted(p for p in project.rglob("*") if ".git" not in p.parts) == before
