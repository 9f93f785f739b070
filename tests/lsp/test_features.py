"""Hover, quick fixes, symbols, definition, links and completion, end to end for both client profiles."""

from __future__ import annotations

from pathlib import Path

from lsprotocol import types

from ..builders import edit
from .conftest import diagnostics, git_init, open_doc, proposal_text, record_text, units


def pos(text: str, needle: str, profile: str, delta: int = 0) -> types.Position:
    """Client position of the first ``needle`` in ``text`` (plus ``delta`` code points)."""
    off = text.index(needle) + delta
    line = text.count("\n", 0, off)
    col_text = text[text.rfind("\n", 0, off) + 1 : off]
    return types.Position(line=line, character=units(col_text, profile))


async def hover(client, uri: str, position: types.Position) -> str:
    res = await client.text_document_hover_async(
        types.HoverParams(text_document=types.TextDocumentIdentifier(uri=uri), position=position)
    )
    assert res is not None
    return res.contents.value


async def test_hover_on_key_shows_schema_description(client, workspace: Path):
    path = workspace / ".memzoi" / "records" / "use-pnpm.md"
    text = path.read_text()
    uri = open_doc(client, path)
    value = await hover(client, uri, pos(text, "content_class:", client.profile, 3))
    assert "content_class" in value and "general_repo_knowledge" in value
    assert "only `general_repo_knowledge` may be committed" in value.replace("\\", "")
    nested = await hover(client, uri, pos(text, "  route:", client.profile, 3))
    assert "origin.route" in nested and "repository_materialization" in nested


async def test_hover_key_after_astral_character_line(client, workspace: Path):
    # B20: an emoji on an earlier line must not shift offsets of later lines.
    path = workspace / ".memzoi" / "records" / "use-pnpm.md"
    text = edit(record_text("use-pnpm"), 'description: "Use pnpm', 'description: "😀😀 Use pnpm')
    uri = open_doc(client, path, text)
    value = await hover(client, uri, pos(text, "timestamp:", client.profile, 2))
    assert "`timestamp`" in value and "RFC 3339" in value


async def test_hover_provenance_on_record(client, workspace: Path):
    git_init(workspace)
    path = workspace / ".memzoi" / "records" / "use-pnpm.md"
    text = path.read_text()
    uri = open_doc(client, path)
    value = await hover(client, uri, pos(text, "repository-record:use-pnpm", client.profile, 2))
    assert "**Record**" in value and "`use-pnpm`" in value
    assert "current assertion: yes" in value
    assert "[https" in value and "(https://example.com/decisions/42)" in value  # source_ref link
    assert "route `repository_materialization`" in value
    assert "unattested" in value
    assert "superseded by: `use-node-22`" in value and "use-node-22.md" in value
    assert "no age limit" in value
    assert "Ada Reviewer" in value and "2026-07-07" in value
    assert "\\<b>memory\\</b>" in value  # commit subject escaped: no HTML
    assert "ledger history" in value


async def test_hover_escapes_record_text(client, workspace: Path):
    path = workspace / ".memzoi" / "records" / "use-pnpm.md"
    evil = "[click](command:workbench.action.terminal.new) <img src=x>"
    text = edit(
        record_text("use-pnpm", title=evil),
        'source_ref: "https://example.com/decisions/42"',
        "source_ref: 'command:evil.run'",
    )
    uri = open_doc(client, path, text)
    value = await hover(client, uri, pos(text, "kind: memory", client.profile, 8))
    import re

    assert not re.search(r"(?<!\\)\]\(command:", value) and not re.search(r"(?<!\\)<img", value)
    assert "[click\\](command:" in value  # the link is broken where it would form, and only there


async def test_hover_provenance_on_proposal(client, workspace: Path):
    path = workspace / ".memzoi" / "proposals" / "pending" / "mem-sup.md"
    text = proposal_text(
        "mem-sup", action="supersede", supersedes=["use-pnpm"], proposal_extra={"reason": "Node 22 ships corepack."}
    )
    path.write_text(text)
    uri = open_doc(client, path)
    value = await hover(client, uri, pos(text, "proposed_by: agent", client.profile, 15))
    assert "**Proposal**" in value and "`mem-sup`" in value
    assert "action `supersede`" in value and "status `proposed`" in value
    assert "supersedes: `use-pnpm`" in value and "use-pnpm.md" in value
    assert "can be applied: yes" in value
    assert "Node 22 ships corepack" in value.replace("\\", "")


async def test_quick_fix_removes_bom_via_resolve(client, workspace: Path):
    path = workspace / ".memzoi" / "records" / "use-pnpm.md"
    text = "\ufeff" + record_text("use-pnpm")
    uri = open_doc(client, path, text)
    diags = await diagnostics(client, uri, lambda d: any(x.code == "bom" for x in d))
    [bom] = [d for d in diags if d.code == "bom"]
    assert (bom.range.start.character, bom.range.end.character) == (0, units("\ufeff", client.profile))
    actions = await client.text_document_code_action_async(
        types.CodeActionParams(
            text_document=types.TextDocumentIdentifier(uri=uri),
            range=bom.range,
            context=types.CodeActionContext(diagnostics=[bom]),
        )
    )
    [fix] = [a for a in actions if a.kind == types.CodeActionKind.QuickFix]
    assert fix.title == "Remove the byte order mark" and fix.diagnostics[0].code == "bom"
    if fix.edit is None:  # both profiles resolve edits lazily
        fix = await client.code_action_resolve_async(fix)
    edit = fix.edit
    edits = edit.document_changes[0].edits if edit.document_changes else edit.changes[uri]
    assert [(e.range.start.character, e.range.end.character, e.new_text) for e in edits] == [
        (0, units("\ufeff", client.profile), "")
    ]


async def test_quick_fix_quotes_value_with_colon(client, workspace: Path):
    path = workspace / ".memzoi" / "records" / "use-pnpm.md"
    # Written by hand, unquoted: the colon makes it invalid YAML (the builder would quote it).
    text = edit(
        record_text("use-pnpm", title="Step 2: run tests"), 'title: "Step 2: run tests"', "title: Step 2: run tests"
    )
    uri = open_doc(client, path, text)
    diags = await diagnostics(client, uri, lambda d: any(x.code == "yaml_syntax" for x in d))
    [d] = [x for x in diags if x.code == "yaml_syntax"]
    assert d.range.start.line == text.split("\n").index("title: Step 2: run tests")
    only = await client.text_document_code_action_async(
        types.CodeActionParams(
            text_document=types.TextDocumentIdentifier(uri=uri),
            range=d.range,
            context=types.CodeActionContext(diagnostics=[d], only=["source"]),
        )
    )
    assert not only  # context.only=source excludes quick fixes
    actions = await client.text_document_code_action_async(
        types.CodeActionParams(
            text_document=types.TextDocumentIdentifier(uri=uri),
            range=d.range,
            context=types.CodeActionContext(diagnostics=[d], only=["quickfix"]),
        )
    )
    fix = actions[0] if actions[0].edit else await client.code_action_resolve_async(actions[0])
    edits = fix.edit.document_changes[0].edits if fix.edit.document_changes else fix.edit.changes[uri]
    assert any('"Step 2: run tests"' in e.new_text for e in edits)


async def test_document_symbols_skip_yaml_comments(client, workspace: Path):
    # B15: a YAML comment inside the frontmatter is not a heading.
    path = workspace / ".memzoi" / "records" / "use-pnpm.md"
    text = edit(record_text("use-pnpm"), "kind: memory\n", "kind: memory\n# reviewer: pending\n")
    text += "\n## Details\n\n```md\n# not a heading\n```\n"
    uri = open_doc(client, path, text)
    syms = await client.text_document_document_symbol_async(
        types.DocumentSymbolParams(text_document=types.TextDocumentIdentifier(uri=uri))
    )
    names = [s.name for s in syms]
    assert names == ["frontmatter", "Use pnpm", "Details"]
    keys = [c.name for c in syms[0].children]
    assert keys[:3] == ["id", "kind", "profile"] and "origin" in keys


async def test_definition_on_supersedes_and_document_links(client, workspace: Path):
    path = workspace / ".memzoi" / "records" / "use-node-22.md"
    text = path.read_text()
    uri = open_doc(client, path)
    res = await client.text_document_definition_async(
        types.DefinitionParams(
            text_document=types.TextDocumentIdentifier(uri=uri),
            position=pos(text, "supersedes: use-pnpm", client.profile, 14),
        )
    )
    assert res and res[0].uri.endswith("/.memzoi/records/use-pnpm.md")
    links = await client.text_document_document_link_async(
        types.DocumentLinkParams(text_document=types.TextDocumentIdentifier(uri=uri))
    )
    assert [l.target for l in links] == ["https://example.com/decisions/42"]
    ppath = workspace / ".memzoi" / "proposals" / "pending" / "mem-new.md"
    puri = open_doc(client, ppath)
    plinks = await client.text_document_document_link_async(
        types.DocumentLinkParams(text_document=types.TextDocumentIdentifier(uri=puri))
    )
    targets = sorted(l.target for l in plinks)
    assert targets[1] == "https://example.com/issue/7" and targets[0].endswith("/src/app.ts")


async def test_completion_of_enum_values_and_record_ids(client, workspace: Path):
    path = workspace / ".memzoi" / "records" / "use-node-22.md"
    text = edit(edit(path.read_text(), "lane: semantic", "lane: "), "supersedes: use-pnpm", "supersedes: ")
    uri = open_doc(client, path, text)
    res = await client.text_document_completion_async(
        types.CompletionParams(
            text_document=types.TextDocumentIdentifier(uri=uri), position=pos(text, "lane: ", client.profile, 6)
        )
    )
    assert [i.label for i in res.items] == ["session", "semantic", "episodic", "procedural"]

    async def ids():
        r = await client.text_document_completion_async(
            types.CompletionParams(
                text_document=types.TextDocumentIdentifier(uri=uri),
                position=pos(text, "supersedes: ", client.profile, 12),
            )
        )
        return [i.label for i in r.items] if r else []

    labels = []
    for _ in range(50):
        labels = await ids()
        if labels:
            break
    assert labels == ["use-pnpm"]  # known records, not the record itself


async def test_workspace_symbols_search_titles_and_bodies(client, workspace: Path):
    import asyncio

    for _ in range(100):
        res = await client.workspace_symbol_async(types.WorkspaceSymbolParams(query="every package"))
        if res:
            break
        await asyncio.sleep(0.05)
    assert sorted(s.name for s in res) == ["Use Node 22", "Use pnpm"]  # matched by body text
    res = await client.workspace_symbol_async(types.WorkspaceSymbolParams(query="pnpm"))
    assert [s.name for s in res] == ["Use pnpm"]


def test_hover_markdown_needs_no_escape_for_ordinary_values():
    from memzoi_lsp.hover import esc, to_plaintext

    # clients that show Markdown raw (Neovim, Emacs without markdown-mode) would show these escapes as noise
    for value in ("2026-07-01T00:00:00Z", "(scope_project_mismatch)", "see docs/a.md: done!"):
        assert esc(value) == value
    # what could start markup, HTML, a link or a block is still escaped
    assert esc("[x](command:y) <b>") == "[x\\](command:y) \\<b>"
    assert esc("# h") == "\\# h" and esc("1. x") == "1\\. x"
    # issue 28: no escape where nothing could start (Neovim and Emacs show every backslash)
    for value in ("https://example.com/a?b=1", "500 -> 300", "[chg_0123abc]", "a | b", "x > y", "R&D"):
        assert esc(value) == value
    md = "**Record** `a_b` — " + esc("[x] <y> 00:00") + " [label](https://e.com) _Schema: X_"
    assert to_plaintext(md) == "Record a_b — [x] <y> 00:00 label <https://e.com> Schema: X"


async def test_hover_plaintext_for_a_client_that_asks(workspace: Path, memzoi_home: Path):
    from pytest_lsp import client_capabilities

    from .conftest import PROFILES, start_client

    profile = list(PROFILES)[0]
    caps = client_capabilities(PROFILES[profile])
    caps.text_document.hover.content_format = [types.MarkupKind.PlainText]
    client = await start_client(profile, workspace, memzoi_home, capabilities=caps)
    try:
        path = workspace / ".memzoi" / "records" / "use-pnpm.md"
        text = path.read_text()
        uri = open_doc(client, path)
        res = await client.text_document_hover_async(
            types.HoverParams(
                text_document=types.TextDocumentIdentifier(uri=uri), position=pos(text, "kind: memory", profile, 8)
            )
        )
        assert res.contents.kind == types.MarkupKind.PlainText
        value = res.contents.value
        assert "Record use-pnpm" in value and "**" not in value and "`" not in value and "\\" not in value
    finally:
        await client.shutdown_session()
        await client.stop()


def test_hover_spells_an_absent_or_blank_value_as_words():
    """A value the record leaves out or blank is shown as ``(none)`` / ``(empty)``, never as an empty span or an
    invisible character (Neovim showed a zero-width space after 'lane' on a legacy record)."""
    from memzoi_lsp.hover import to_plaintext
    from memzoi_lsp.markup import code

    for value, shown in ((None, "(none)"), ("", "(empty)"), ("   ", "(empty)"), ("\n", "(empty)")):
        md = f"- lane {code(value)} · status {code('active')}"
        assert "\u200b" not in md and "``" not in md
        assert to_plaintext(md) == f"- lane {shown} · status active"
    assert code("a`b") == "`a'b`"
