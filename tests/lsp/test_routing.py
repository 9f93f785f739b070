"""Runtime-plane input files end to end, for both client profiles: an agent's session-end file and an import
manifest get diagnostics (the gate on every repo candidate, destination rules, schema) on the candidate's line;
*Plan memory routing…* previews the outcome per candidate (packet path, runtime route, or the reason codes that
block it) without writing; apply writes one ledgered change that then shows up as a pending packet in the inbox
and in the checkpoint list; a moved state after the preview is refused."""

from __future__ import annotations

import json
import os
from pathlib import Path

from lsprotocol import types

from memzoi.lifecycle import checkpoints as C

from .conftest import diagnostics, open_doc, refusal
from .test_lifecycle import actions_for, find, run

SESSION = """task: "Implement auth middleware"
candidates:
  - destination: repo
    type: decision
    lane: semantic
    title: Protected routes validate sessions server-side
    body: Protected routes must validate sessions server-side.
    sensitivity: repo-safe
  - destination: session
    type: episode
    lane: session
    title: Where I stopped
    body: Refresh flow half done.
  - destination: discard
    title: noise
"""


def manifest(*cands: dict) -> str:
    return json.dumps(
        {
            "version": "memzoi/import",
            "origin_key": "lsp-test-event",
            "sources": [{"ref": "issue://7"}],
            "candidates": list(cands),
        },
        indent=1,
    )


def _lines(diags: list[types.Diagnostic]) -> list[tuple[int, str]]:
    return sorted((d.range.start.line, str(d.code)) for d in diags)


async def test_session_end_file_diagnostics_preview_apply_inbox_and_checkpoints(
    client, workspace: Path, memzoi_home: Path
):
    path = workspace / "session.yml"
    path.write_text(SESSION, encoding="utf-8")
    uri = open_doc(client, path)
    assert await diagnostics(client, uri) == []  # a clean file shows nothing
    preview = await run(client, find(await actions_for(client, uri), "Plan memory routing"))
    assert preview["kind"] == "session_end" and not preview["blocked"]
    outcomes = [(c["destination"], c["outcome"]) for c in preview["candidates"]]
    assert outcomes == [("repo", "create_proposal"), ("session", "create_runtime"), ("discard", "skipped")]
    packet = preview["candidates"][0]["path"]
    assert not (workspace / packet).exists()  # the preview wrote nothing
    out = await client.workspace_execute_command_async(
        types.ExecuteCommandParams(
            command="memzoi.routing.apply", arguments=[{"uri": uri, "expected_version": preview["expected_version"]}]
        )
    )
    assert out["status"] == "routed" and out["change_id"]
    assert (workspace / packet).is_file()
    inbox = await client.workspace_execute_command_async(
        types.ExecuteCommandParams(command="memzoi.proposals.list", arguments=[{}])
    )
    assert packet in [p["path"] for p in inbox["proposals"]]  # the new packet is in the inbox
    os.environ["MEMZOI_HOME"] = str(memzoi_home)
    try:
        [cp] = C.list_checkpoints(workspace)[1]
    finally:
        os.environ.pop("MEMZOI_HOME")
    assert cp.title == "Where I stopped"
    again = await refusal(
        client.workspace_execute_command_async(
            types.ExecuteCommandParams(
                command="memzoi.routing.apply",
                arguments=[{"uri": uri, "expected_version": preview["expected_version"]}],
            )
        )
    )
    assert again["code"] in ("version_conflict", "duplicate_content")  # the state moved: nothing written twice


async def test_unsafe_candidates_are_diagnosed_on_their_line_and_block_the_preview(client, workspace: Path):
    secret = "ghp_" + "m4N5b6V7c8" * 3  # built at run time, never printed
    text = manifest(
        {
            "destination": "repo",
            "reason": "r",
            "type": "fact",
            "title": "Safe",
            "body": "Deploys go through CI.",
            "sensitivity": "repo-safe",
        },
        {
            "destination": "repo",
            "reason": "r",
            "type": "fact",
            "title": "Token",
            "body": f"Use {secret}.",
            "sensitivity": "repo-safe",
        },
        {"destination": "local", "reason": "r", "type": "fact", "title": "Mine", "body": "Tabs."},
    )
    path = workspace / "manifest.yml"
    path.write_text(text, encoding="utf-8")
    uri = open_doc(client, path)
    diags = await diagnostics(client, uri, until=lambda d: len(d) >= 2)
    codes = {str(d.code) for d in diags}
    assert "repo_subset_blocked" in codes and "credential_token" in codes
    assert all(secret not in d.message for d in diags)
    lines = dict((str(d.code), d.range.start.line) for d in diags)
    assert lines["repo_subset_blocked"] < lines["credential_token"]  # each on its own candidate
    preview = await run(client, find(await actions_for(client, uri), "Plan memory routing"))
    assert preview["blocked"] and secret not in json.dumps(preview)
    got = [(c["destination"], c["outcome"], c.get("reasons")) for c in preview["candidates"]]
    assert got[0] == ("repo", "blocked", ["repo_subset_blocked"])
    assert got[1][:2] == ("repo", "blocked") and "credential_token" in got[1][2]
    assert got[2] == ("local", "create_runtime", None)
    stale = await refusal(
        client.workspace_execute_command_async(
            types.ExecuteCommandParams(command="memzoi.routing.apply", arguments=[{"uri": uri, "plan_id": "import_0"}])
        )
    )
    assert stale["code"] == "import_plan_stale"
    out = await client.workspace_execute_command_async(
        types.ExecuteCommandParams(
            command="memzoi.routing.apply",
            arguments=[{"uri": uri, "plan_id": preview["plan_id"], "actor": preview["actor"]}],
        )
    )
    assert [w["kind"] for w in out["writes"]] == ["runtime_record"]
    assert not (workspace / ".memzoi" / "proposals" / "pending" / "mem_import_safe.md").exists()


async def test_invalid_input_is_a_schema_diagnostic(client, workspace: Path):
    path = workspace / "broken.yml"
    path.write_text(
        SESSION.replace("    sensitivity: repo-safe\n", "    sensitivity: repo-safe\n    colour: blue\n"),
        encoding="utf-8",
    )
    uri = open_doc(client, path)
    diags = await diagnostics(client, uri, until=lambda d: bool(d))
    assert _lines(diags) == [(2, "invalid_session_end")]  # on candidates[0]'s first line


async def test_routing_preview_on_a_fresh_project_creates_no_ledger(client, workspace: Path, memzoi_home: Path):
    # A preview writes nothing: on a project without a ledger, its planning makes none (before, it took the lock
    # and created the ledger). The server's start-up may have made the lock file (the resident reconciliation).
    from memzoi.base.runtime import LEDGER_DB

    path = workspace / "session.yml"
    path.write_text(SESSION, encoding="utf-8")
    uri = open_doc(client, path)
    preview = await run(client, find(await actions_for(client, uri), "Plan memory routing"))
    assert preview["kind"] == "session_end" and preview["previewed"] and not preview["blocked"]
    made = {p.name for p in memzoi_home.rglob("*")}
    assert not {n for n in made if n.startswith(LEDGER_DB)}, made
