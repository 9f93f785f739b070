"""Secret-bearing paths over LSP, for both client profiles: diagnostics go to the file's real URI, but no message,
hover or log repeats the path; reserved files below `.memzoi` are scanned for secrets."""

from __future__ import annotations

from pathlib import Path

import pytest
from lsprotocol import types

from memzoi.judge.pathsafety import shown_path

from .conftest import diagnostics, open_doc, record_text
from .test_features import hover, pos

TOKEN = "gh" + "p_" + "Z9y8X7w6V5u4T3s2R1q0P9o8N7m6L5k4J3h2"


@pytest.mark.config({"logToClient": True, "logLevel": "debug"})
async def test_record_named_after_a_token_is_diagnosed_at_its_real_uri_and_shown_redacted(client, workspace: Path):
    path = workspace / ".memzoi" / "records" / f"{TOKEN}.md"
    text = record_text(TOKEN, "Token named")
    path.write_text(text)
    uri = open_doc(client, path)  # the real URI: the client needs it to place the diagnostics
    diags = await diagnostics(client, uri, lambda d: any(x.code == "credential_token" for x in d))
    # One for the file name (at the start of the file), others for the id written inside it.
    [d] = [x for x in diags if x.code == "credential_token" and "file name" in x.message]
    assert d.severity == types.DiagnosticSeverity.Error and "contains a GitHub token" in d.message
    assert (d.range.start.line, d.range.start.character) == (0, 0)
    shown = await hover(client, uri, pos(text, "title: ", client.profile, 8))
    assert shown_path(TOKEN).split(":")[0] in shown  # the id is shown as <redacted-path:…>
    # A record that names it gets a cross-file finding whose message does not repeat the id.
    other = workspace / ".memzoi" / "records" / "use-pnpm.md"
    other_uri = open_doc(client, other, record_text("use-pnpm", extra=f"supersedes: {TOKEN}\n"))
    other_diags = await diagnostics(client, other_uri, lambda d: any(x.code == "lifecycle_inconsistent" for x in d))
    texts = [x.message for x in diags + other_diags] + [shown] + [m.message for m in client.log_messages]
    leaked = any(TOKEN in t for t in texts)
    assert not leaked, "the token leaked into a message, hover or log"


async def test_reserved_file_is_scanned_and_reported_as_ignored(client, workspace: Path):
    path = workspace / ".memzoi" / "records" / "index.md"
    text = record_text("index") + f"\nDeploy key {TOKEN}\n"
    path.write_text(text)
    uri = open_doc(client, path)
    diags = await diagnostics(client, uri, lambda d: {"credential_token", "reserved_file"} <= {x.code for x in d})
    grades = {x.code: x.severity for x in diags}
    assert grades["credential_token"] == types.DiagnosticSeverity.Error
    assert grades["reserved_file"] == types.DiagnosticSeverity.Warning
    leaked = any(TOKEN in x.message for x in diags)
    assert not leaked, "the token leaked into a message"
