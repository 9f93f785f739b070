"""One verdict: for every file of a workspace holding every kind of finding, the language server's diagnostics
(push under the VS Code profile, pull under Neovim's) equal ``memzoi check --format json``'s findings: the same
codes, severities, ranges and messages. And for every pending packet, the hover's "can apply" statement, the
offered actions, the code lens and the outcome of ``memzoi proposals apply`` agree.

The fixture is ASCII only, so code points (check's JSON), utf-16 units and utf-8 bytes are the same numbers.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from lsprotocol import types

from memzoi.base.runtime import git_env
from tests.test_revision import attested

from ..builders import edit
from .conftest import PROFILES, diagnostics, git_init, proposal_text, record_text, start_client

PENDING = ".memzoi/proposals/pending"


def _token() -> str:
    return "gh" + "p_" + "Q7x9" * 9  # a GitHub-style token, built here so no file of the repository holds one


def _git(root: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=root, env=git_env(), check=True, capture_output=True, stdin=subprocess.DEVNULL)


def _cli(root: Path, home: Path, *args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "MEMZOI_HOME": str(home)}
    return subprocess.run(
        [sys.executable, "-m", "memzoi", *args],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
    )


def build(root: Path, home: Path) -> None:
    """A git project with every kind of finding: schema, secret, legacy, stale attestation, lineage, duplicates, a
    git-ignored pending packet, a dangling tombstone, a ledger-drifted record and a reserved file with a secret."""
    records = root / ".memzoi/records"
    pending = root / PENDING
    records.mkdir(parents=True)
    pending.mkdir(parents=True)
    (root / "src").mkdir()
    (root / "src/app.ts").write_text("export {}\n")
    (records / "use-pnpm.md").write_text(record_text("use-pnpm"))
    (records / "use-node-22.md").write_text(record_text("use-node-22", "Use Node 22", extra="supersedes: use-pnpm\n"))
    (records / "dangling.md").write_text(record_text("dangling", "Dangling", extra="supersedes: no-such-record\n"))
    (records / "copy-a.md").write_text(record_text("copy-a", "Copy"))
    (records / "copy-b.md").write_text(record_text("copy-b", "Copy"))
    (records / "bad-schema.md").write_text(record_text("bad-schema", "Bad", extra="reviewer: someone\n"))
    # A stray file with record frontmatter outside records/: scanned for secrets only, by both (it would be a
    # duplicate of use-pnpm and supersede a missing record if it took part in the cross-file graph).
    (root / ".memzoi/notes").mkdir()
    (root / ".memzoi/notes/stray.md").write_text(record_text("use-pnpm", extra="supersedes: also-missing\n"))
    (records / "leaky.md").write_text(
        edit(
            record_text("leaky", "Leaky"),
            "applies to every package task.",
            f"applies to every package task; deploy with {_token()}.",
        )
    )
    (records / "old-style.md").write_text(
        edit(record_text("old-style", "Old"), "profile: memzoi\n", "profile: memzoi/v1\n")
    )
    reviewed = attested(record_text("reviewed", "Reviewed"), "reviewed")
    (records / "reviewed.md").write_text(reviewed)
    (root / ".memzoi/index.md").write_text(f"# Index\n\nTOKEN={_token()}\n")
    (root / ".memzoi/.env").write_text(f"API_KEY={_token()}\n")  # hidden, but committed: scanned by both
    # invalid, reported by both: a code that cannot be disabled, and a misspelt key of [mcp]
    (root / ".memzoi/config.toml").write_text('[rules]\ndisabled = ["private_key"]\n[mcp]\nproposals_per_minut = 5\n')
    (pending / "mem-new.md").write_text(proposal_text("mem-new"))
    (pending / "mem-apply.md").write_text(proposal_text("mem-apply", title="Apply me", body="Applied by the test."))
    (pending / "mem-leaky.md").write_text(proposal_text("mem-leaky", title=f"Rotate {_token()}", body="Rotate it."))
    (pending / "mem-tomb.md").write_text(
        proposal_text(
            "mem-tomb",
            title="Tomb",
            action="tombstone",
            proposal_extra={"target": "no-such-record", "reason": "obsolete"},
        )
    )
    (root / ".gitignore").write_text(f"{PENDING}/mem-ignored.md\n")
    git_init(root)
    (pending / "mem-ignored.md").write_text(proposal_text("mem-ignored", title="Ignored", body="Never reviewed."))
    # A stale attestation: the reviewed body edited after its commit (the committed version explains what changed).
    (records / "reviewed.md").write_text(edit(reviewed, "applies to every package task.", "applies to some tasks."))
    # A ledger-drifted record: applied through the ledger, then edited by hand.
    applied = _cli(root, home, "proposals", "apply", "mem-apply", "--json")
    assert applied.returncode == 0, applied.stdout + applied.stderr
    [created] = [
        root / f["path"]
        for f in json.loads(applied.stdout)["files"]
        if f["path"].startswith(".memzoi/records/") and f["after"] == "present"
    ]
    created.write_text(created.read_text() + "\nEdited by hand.\n")


def check_findings(root: Path, home: Path, *extra: str) -> dict[str, list[tuple]]:
    """``memzoi check --format json`` on the project, per absolute path."""
    out = _cli(root, home, "check", "--format", "json", *extra)
    assert out.returncode in (0, 1), out.stderr
    report = json.loads(out.stdout)
    found: dict[str, list[tuple]] = {}
    for f in report["findings"]:
        r = f["range"]
        path = Path(f["path"]) if os.path.isabs(f["path"]) else root / f["path"]
        key = str(path.parent.resolve() / path.name)  # a symlinked record is keyed as itself, not its target
        found.setdefault(key, []).append(
            (
                f["code"],
                f["severity"],
                r["start"]["line"],
                r["start"]["character"],
                r["end"]["line"],
                r["end"]["character"],
                f["message"],
            )
        )
    return {k: sorted(v) for k, v in found.items()}


_SEVERITY = {1: "error", 2: "warning", 3: "information", 4: "hint"}


def as_rows(diags: list[types.Diagnostic]) -> list[tuple]:
    return sorted(
        (
            d.code,
            _SEVERITY[int(d.severity)],
            d.range.start.line,
            d.range.start.character,
            d.range.end.line,
            d.range.end.character,
            d.message,
        )
        for d in diags
    )


@pytest.fixture
def project(tmp_path: Path, memzoi_home: Path) -> Path:
    root = tmp_path / "ws"
    build(root, memzoi_home)
    return root


def test_check_findings_are_the_same_cold_warm_and_without_the_verdict_cache(project: Path, memzoi_home: Path):
    cold = check_findings(project, memzoi_home)
    stray = str((project / ".memzoi/notes/stray.md").resolve())
    cross = {"duplicate_content", "duplicate_identity", "dangling_reference", "lifecycle_inconsistent"}
    assert not [row for row in cold.get(stray, []) if row[0] in cross]  # a stray file is scanned only
    assert any(row[0] == "ledger_drift" for rows in cold.values() for row in rows)
    assert check_findings(project, memzoi_home) == cold  # warm: every cacheable file from the cache
    assert check_findings(project, memzoi_home, "--no-cache") == cold
    assert sorted(memzoi_home.rglob("memzoi-lsp-store.db"))


def _drop_verdict_cache(home: Path) -> None:
    for p in home.rglob("memzoi-lsp-store.db*"):
        p.unlink()


def _from_cache(client) -> int:
    """How many files the server's scan took from the verdict cache (its "scanned" log message says)."""
    import re

    [m] = [m.message for m in client.log_messages if m.message.startswith("memzoi-lsp: scanned")]
    return int(re.search(r"\((\d+) from the verdict cache\)", m).group(1))


@pytest.mark.parametrize("cache", ["warm", "cold"])
@pytest.mark.parametrize("profile", list(PROFILES))
async def test_server_diagnostics_equal_check_findings_for_every_file(
    project: Path, memzoi_home: Path, profile: str, cache: str
):
    """Warm: the server starts on the verdict cache `check` just wrote, and takes every cacheable file from it.
    Cold: no cache; the server analyses every file and fills the cache, from which a later check gives the same
    findings. Both equal check's findings, so warm and cold are the same."""
    expected = check_findings(project, memzoi_home)
    if cache == "cold":
        _drop_verdict_cache(memzoi_home)
    codes = {row[0] for rows in expected.values() for row in rows}
    # The fixture really holds every kind of finding the parity is about.
    for code in (
        "stale_attestation",
        "ignored_untracked",
        "ledger_drift",
        "dangling_reference",
        "duplicate_content",
        "credential_token",
        "legacy_profile",
        "unknown_key",
        "lifecycle_inconsistent",
        "environment_secret",
        "invalid_config",
    ):
        assert code in codes, (code, sorted(codes))
    assert str((project / ".memzoi/.env").resolve()) in expected
    config = [r[-1] for r in expected[str((project / ".memzoi/config.toml").resolve())] if r[0] == "invalid_config"]
    assert len(config) == 2 and any("proposals_per_minut`" in m for m in config), config
    stale = [r for rows in expected.values() for r in rows if r[0] == "stale_attestation"]
    assert "changed since decision time: `body`" in stale[0][-1]
    files = sorted(str(p.resolve()) for p in (project / ".memzoi").rglob("*") if p.is_file())
    client = await start_client(profile, project, memzoi_home)
    try:
        if cache == "warm":  # every file but the secret-bearing, stale and refused ones, which are never cached
            assert len(files) - 8 <= _from_cache(client) < len(files)
        else:
            assert _from_cache(client) == 0
        for path in files:
            uri = Path(path).as_uri()
            want = expected.get(path, [])
            got = (
                await diagnostics(client, uri, until=lambda d, w=want: as_rows(d) == w, timeout=20)
                if want
                else await _settled_empty(client, uri)
            )
            assert as_rows(got) == want, path
        # An open document is judged the same way from the editor's text.
        stale_path = project / ".memzoi/records/reviewed.md"
        client.text_document_did_open(
            types.DidOpenTextDocumentParams(
                text_document=types.TextDocumentItem(
                    uri=stale_path.as_uri(), language_id="markdown", version=1, text=stale_path.read_text()
                )
            )
        )
        want = expected[str(stale_path.resolve())]
        got = await diagnostics(client, stale_path.as_uri(), until=lambda d: as_rows(d) == want, timeout=20)
        assert as_rows(got) == want
    finally:
        await asyncio.wait_for(client.shutdown_session(), 10)
        await client.stop()
    if cache == "cold":  # the entries the server wrote are the ones check reads
        assert sorted(memzoi_home.rglob("memzoi-lsp-store.db"))
        assert check_findings(project, memzoi_home) == expected


async def _settled_empty(client, uri: str) -> list[types.Diagnostic]:
    """Diagnostics of a file check finds clean: pulled, or (push) whatever was last published, which must be none."""
    from .conftest import is_pull

    if is_pull(client):
        return await diagnostics(client, uri, timeout=20)
    return list(client.diagnostics.get(uri) or [])


def _can_apply_from_hover(text: str) -> bool:
    line = next(l for l in text.splitlines() if "can be applied" in l.lower())
    return "can be applied: yes" in line.lower()


@pytest.mark.parametrize("profile", list(PROFILES))
async def test_can_apply_agrees_across_hover_actions_lens_and_cli(project: Path, memzoi_home: Path, profile: str):
    client = await start_client(profile, project, memzoi_home)
    verdicts: dict[str, tuple] = {}
    try:
        for packet in sorted((project / PENDING).glob("*.md")):
            uri = packet.as_uri()
            client.text_document_did_open(
                types.DidOpenTextDocumentParams(
                    text_document=types.TextDocumentItem(
                        uri=uri, language_id="markdown", version=1, text=packet.read_text()
                    )
                )
            )
            hover = await client.text_document_hover_async(
                types.HoverParams(
                    text_document=types.TextDocumentIdentifier(uri=uri), position=types.Position(line=1, character=4)
                )
            )
            hover_says = _can_apply_from_hover(hover.contents.value)
            actions = await client.text_document_code_action_async(
                types.CodeActionParams(
                    text_document=types.TextDocumentIdentifier(uri=uri),
                    range=types.Range(
                        start=types.Position(line=1, character=0), end=types.Position(line=1, character=0)
                    ),
                    context=types.CodeActionContext(diagnostics=[]),
                )
            )
            apply = [
                a for a in actions or [] if isinstance(a, types.CodeAction) and a.title.lower().startswith("apply")
            ]
            action_says = bool(apply) and apply[0].disabled is None
            lenses = await client.text_document_code_lens_async(
                types.CodeLensParams(text_document=types.TextDocumentIdentifier(uri=uri))
            )
            titles = [l.command.title for l in lenses or [] if l.command is not None]
            lens_says = any(t.lower().startswith("apply") for t in titles)
            verdicts[packet.name] = (hover_says, action_says, lens_says)
            assert hover_says == action_says == lens_says, (packet.name, hover.contents.value, apply, titles)
        rows = (
            await client.workspace_execute_command_async(
                types.ExecuteCommandParams(command="memzoi.proposals.list", arguments=[{}])
            )
        )["proposals"]
        inbox = [{k: v for k, v in r.items() if k != "uri"} for r in rows]
        listing = _cli(project, memzoi_home, "proposals", "list", "--json")
        listed = json.loads(listing.stdout)["proposals"]
        text = _cli(project, memzoi_home, "proposals", "list")
        assert _token() not in text.stdout and "(title withheld" in text.stdout
    finally:
        await asyncio.wait_for(client.shutdown_session(), 10)
        await client.stop()
    assert inbox == listed, "the editor's inbox rows and `memzoi proposals list --json` differ"
    assert _token() not in json.dumps(inbox) and _token() not in listing.stdout
    assert [r["title_withheld"] for r in listed if r["id"] == "mem-leaky"] == [True]
    assert verdicts["mem-new.md"][0] is True
    assert verdicts["mem-ignored.md"][0] is False and verdicts["mem-tomb.md"][0] is False
    for name, (says, _, _) in verdicts.items():
        before = {p: p.read_bytes() for p in (project / ".memzoi").rglob("*.md")}
        outcome = _cli(project, memzoi_home, "proposals", "apply", name[:-3], "--json")
        assert (outcome.returncode == 0) == says, (name, outcome.stdout, outcome.stderr)
        if outcome.returncode == 0:  # put it back, so the next packet is judged in the same workspace
            change = json.loads(outcome.stdout)["change_id"]
            assert _cli(project, memzoi_home, "undo", change, "--json").returncode == 0
        assert {p: p.read_bytes() for p in (project / ".memzoi").rglob("*.md")} == before
