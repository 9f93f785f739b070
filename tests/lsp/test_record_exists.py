"""A hand-written pending packet whose apply would create a record that already exists gets the ``record_exists``
diagnostic in the editor (the cross-file finding ``memzoi check`` reports, :mod:`memzoi.judge.recordslot`), on its
title."""

from __future__ import annotations

from pathlib import Path

from .. import builders
from .conftest import diagnostics, open_doc


async def test_a_packet_creating_an_existing_record_gets_record_exists(client, workspace: Path):
    path = workspace / ".memzoi" / "proposals" / "pending" / "hand-create.md"
    text = builders.packet("hand-create", title="Use pnpm", body="Install with pnpm everywhere.")
    path.write_text(text, encoding="utf-8")
    uri = open_doc(client, path, text)
    diags = await diagnostics(client, uri, lambda d: any(x.code == "record_exists" for x in d))
    [d] = [x for x in diags if x.code == "record_exists"]
    line = text.split("\n")[d.range.start.line]
    assert line.startswith("title:") and "use-pnpm" in d.message and "retitle it or reject it" in d.message
