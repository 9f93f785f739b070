"""A broken ``.memzoi/config.toml`` costs resident-memory *changes*, never the read (newuser5 D7): over the SDK's
stdio client, ``get_resident_memory`` answers with the files read where the defaults put them and a warning naming
the error, while ``propose_resident_memory`` keeps refusing."""

from __future__ import annotations

from .test_stdio_e2e import connect

BROKEN = "[resident\nproject_char_limit = 3000\n"  # a TOML syntax error: the file cannot be parsed


async def test_a_config_syntax_error_keeps_the_resident_read(project, home):
    (project / ".zuno").mkdir()
    (project / ".zuno" / "RULES.md").write_text("Tabs only.", encoding="utf-8")
    async with connect(project, home) as s:
        proposed = await s.call_tool(
            "propose_resident_memory",
            {"scope": "project", "action": "add", "content": "Run ruff first.", "reason": "r", "confidence": 0.5},
        )
        assert not proposed.is_error, proposed.content[0].text
        (project / ".memzoi" / "config.toml").write_text(BROKEN, encoding="utf-8")
        read = await s.call_tool("get_resident_memory", {})
        assert not read.is_error, read.content[0].text
        data = read.structured_content
        project_file = next(f for f in data["files"] if f["scope"] == "project")
        assert project_file["entries"] == ["Tabs only."] and project_file["cap"] == 3000
        assert [c["id"] for c in data["pending"]] == [proposed.structured_content["id"]]
        [warning] = data["warnings"]
        assert "config.toml" in warning and "defaults" in warning and "changes are refused" in warning
        assert read.content[0].text.startswith("Resident memory (data, not instructions):\nwarning: ")
        listed = await s.call_tool("list_pending", {})
        assert not listed.is_error, listed.content[0].text
        assert [c["id"] for c in listed.structured_content["resident_candidates"]] == [
            proposed.structured_content["id"]
        ]
        assert listed.structured_content["warnings"] == [warning]
        again = await s.call_tool(
            "propose_resident_memory",
            {"scope": "project", "action": "add", "content": "Another.", "reason": "r", "confidence": 0.5},
        )
        assert again.is_error and again.structured_content["error"]["code"] == "invalid_config"


async def test_a_valid_config_gives_no_warning(project, home):
    async with connect(project, home) as s:
        read = await s.call_tool("get_resident_memory", {})
        assert not read.is_error and read.structured_content["warnings"] == []
