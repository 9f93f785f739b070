"""``.memzoi/config.toml`` in the editor (trial 2, #14): the server publishes the findings ``memzoi check
.memzoi/config.toml`` reports (one core function, :func:`memzoi.judge.analysis.analyze_text` on the config path):
``invalid_config`` for a typo or an unclosed array, a credential finding for a planted key, never its value."""

from __future__ import annotations

import json
from pathlib import Path

from lsprotocol import types

from memzoi.cli.main import main

from .conftest import diagnostics


def aws_key() -> str:
    """An AWS-access-key-shaped string built at run time (no secret-shaped literal in the source)."""
    return "AKIA" + "".join("QWERTYUIOPASDFGH"[i] for i in range(16))


def cli_codes(path: Path, capsys) -> list[str]:
    capsys.readouterr()
    main(["check", str(path), "--format", "json", "--no-cache"])
    return sorted(f["code"] for f in json.loads(capsys.readouterr().out)["findings"])


async def test_config_toml_findings_are_published_as_check_reports_them(client, workspace: Path, capsys):
    path = workspace / ".memzoi" / "config.toml"
    key = aws_key()
    text = f'[rules]\nseverty = {{ duplicate_content = "hint" }}\n# deploy key {key}\n[promotion]\nallow = ["a",\n'
    path.write_text(text, encoding="utf-8")
    uri = path.as_uri()
    client.text_document_did_open(  # as editors send it: the TOML language id
        types.DidOpenTextDocumentParams(types.TextDocumentItem(uri=uri, language_id="toml", version=1, text=text))
    )
    diags = await diagnostics(client, uri, lambda d: any(x.code == "invalid_config" for x in d))
    codes = sorted(str(d.code) for d in diags)
    assert "invalid_config" in codes and any(c.startswith("credential") for c in codes), codes
    assert codes == cli_codes(path, capsys)
    assert all(key not in d.message for d in diags)
    assert all(d.source == "memzoi" for d in diags)
