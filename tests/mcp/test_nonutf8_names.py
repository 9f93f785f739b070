"""A record or packet whose file name is not UTF-8 (byte 0xe9) is refused by ``memzoi check`` (``canonical_path``,
never read), and every other surface agrees: ``memzoi rebuild`` and ``memzoi search`` run without a traceback and
never index or hand it out, nor do the MCP tools (``get_memory``, ``search_memory``, ``list_pending``,
``precheck_path``), also when the file appears while the MCP server watches the project (its watcher cannot name
such a file). Skipped where the file system refuses such a name."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from memzoi.cli.main import main

from .. import builders
from .test_stdio_e2e import connect

WORD = "quokkamarmalade"  # in the refused files' text only
RID = "warnings/cafe-risk"


def _text(res) -> str:
    return "\n".join(getattr(c, "text", "") for c in res.content)


def plant(folder: Path, text: str, name: bytes = b"caf\xe9.md") -> Path:
    """``text`` written to ``folder`` under the raw ``name``; the test is skipped where that name is refused."""
    folder.mkdir(parents=True, exist_ok=True)
    path = Path(os.fsdecode(os.path.join(os.fsencode(folder), name)))
    try:
        path.write_text(text, encoding="utf-8")
    except OSError as err:
        pytest.skip(f"the file system refuses a name that is not UTF-8: {err}")
    return path


def refused_record() -> str:
    """A governance record bound to ``src/auth`` that precheck and search would hand out if they read it."""
    body = f"Never refresh tokens without the lock; {WORD}."
    return builders.record(RID, type="warning", title="Cafe risk", body=body, applies_to=["src/auth"], confidence=0.9)


def refused_packet() -> str:
    return builders.packet("mem-cafe", title="Cafe packet", body=f"Pending {WORD}.")


def run(capsys, *argv: str) -> tuple[int, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    assert "Traceback" not in out + err
    return code, out + err


def test_check_rebuild_and_search_agree_that_it_is_refused(capsys, project, monkeypatch):
    plant(project / ".memzoi" / "records", refused_record())
    plant(project / ".memzoi" / "proposals" / "pending", refused_packet())
    monkeypatch.chdir(project)
    code, out = run(capsys, "check", "--format", "json")
    found = {
        (f["path"].rsplit("/", 2)[-2], f["path"].rsplit("/", 1)[-1], f["code"]) for f in json.loads(out)["findings"]
    }
    assert code == 1 and found == {
        ("records", "caf\\xe9.md", "canonical_path"),
        ("pending", "caf\\xe9.md", "canonical_path"),
    }
    # given by name (as pre-commit passes staged files), check says the same: the walk's finding, nothing read
    code, out = run(capsys, "check", "--format", "json", os.fsdecode(b".memzoi/records/caf\xe9.md"))
    assert code == 1 and [f["code"] for f in json.loads(out)["findings"]] == ["canonical_path"]
    assert run(capsys, "rebuild")[0] == 0
    code, out = run(capsys, "search", WORD, "--json")
    assert code == 0 and json.loads(out)["records"] == []
    code, out = run(capsys, "proposals", "list", "--json")
    assert code == 0 and "mem-cafe" not in out and WORD not in out


async def test_the_mcp_tools_never_hand_it_out(project, home):
    plant(project / ".memzoi" / "records", refused_record())
    plant(project / ".memzoi" / "proposals" / "pending", refused_packet())
    async with connect(project, home) as s:
        await _tools_agree(s)


async def test_the_mcp_tools_never_hand_it_out_when_it_appears_while_watched(project, home):
    async with connect(project, home) as s:
        first = await s.call_tool("search_memory", {"query": "hatch build"})
        assert not first.is_error  # the server is up, its watcher set
        plant(project / ".memzoi" / "records", refused_record())
        plant(project / ".memzoi" / "proposals" / "pending", refused_packet())
        await _tools_agree(s)
        # and a record written after it is still seen (the index is kept fresh although the watcher met the name)
        builders.write(
            project,
            builders.record_path("facts/late-fact"),
            builders.record("facts/late-fact", type="fact", title="Late fact", body="The wombatlantern is lit."),
        )
        late = await s.call_tool("search_memory", {"query": "wombatlantern"})
        assert not late.is_error and "facts/late-fact" in _text(late)


async def _tools_agree(s) -> None:
    """What each tool answers about the refused files: never their text, never as usable memory."""
    got = await s.call_tool("get_memory", {"id": RID})
    assert WORD not in _text(got) + json.dumps(got.structured_content or {})
    assert "Traceback" not in _text(got)
    found = await s.call_tool("search_memory", {"query": f"{WORD} refresh tokens lock"})
    hits = found.structured_content["results"]
    assert not found.is_error and not [h for h in hits if h["id"] == RID or "caf" in json.dumps(h)]
    pending = await s.call_tool("list_pending", {})
    assert not pending.is_error and "mem-cafe" not in _text(pending) + json.dumps(pending.structured_content)
    checked = await s.call_tool("precheck_path", {"path": "src/auth/session.py"})
    assert not checked.is_error
    assert WORD not in _text(checked) + json.dumps(checked.structured_content)
    assert "warnings/auth-refresh" in _text(checked)  # the readable warning still is
    by_name = await s.call_tool("precheck_path", {"path": ".memzoi/records/caf\ufffd.md"})
    assert not by_name.is_error and "Traceback" not in _text(by_name)
