"""E-mail addresses and phone numbers (``private_personal_data``) in repository files are masked wherever their text
is stored or shown outside the file, as credentials are: the index database (its raw bytes, its SQL dump and its
WAL), ``memzoi search``, ``memzoi proposals show`` and MCP ``search_memory``; search still finds the record by its
other words. The private local plane keeps accepting them (Memzoi routes that class to local memory), while a
credential or personal identifier is refused there with a message that names what is refused and why.

Canaries are made at run time (random letters; an Ofcom drama-range and a fictional 555 number, both of which the
detector flags) and never printed: assertions name them by label."""

from __future__ import annotations

import json
import secrets
import sqlite3
from pathlib import Path

import pytest

from memzoi.agent import tools
from memzoi.cli.main import main
from memzoi.judge.analysis import analyze_path
from memzoi.safety.redact import MARK, scrub

from . import builders
from .mcp.conftest import make_project

WORD = "quokkaflux"  # the record's other word, which search must still find


def _letters(n: int) -> str:
    return "".join(secrets.choice("bcdfghjkmnpqrstvwz") for _ in range(n))


@pytest.fixture
def canaries() -> dict[str, str]:
    """Label → canary text, fresh per test."""
    tok = _letters(8)
    return {
        "e-mail": f"pat.{tok}@mx{tok}.io",
        "uk phone": f"+44 20 7946 0{secrets.randbelow(1000):03d}",
        "us phone": f"(212) 555-{2000 + secrets.randbelow(8000):04d}",
    }


def _needles(value: str) -> list[bytes]:
    """The canary and its distinctive part (the letters of an address, the digits of a number), as UTF-8."""
    digits = "".join(c for c in value if c.isdigit())
    return [value.encode(), (value.split("@")[0].split(".")[-1] if "@" in value else digits[-7:]).encode()]


def _found(blob: bytes | str, canaries: dict[str, str]) -> list[str]:
    raw = blob.encode() if isinstance(blob, str) else blob
    return [label for label, v in canaries.items() if any(n in raw for n in _needles(v))]


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, canaries: dict[str, str]) -> Path:
    """A git project with a record and a pending packet whose bodies hold every canary."""
    monkeypatch.setenv("MEMZOI_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("MEMZOI_ACTOR", "reviewer")
    root = make_project(tmp_path / "repo").resolve()
    body = f"The {WORD} owner is {canaries['e-mail']}; call {canaries['uk phone']} or {canaries['us phone']}."
    text = builders.record("facts/contacts", type="fact", title="Who owns the nightly job", body=body, description=None)
    builders.write(root, builders.record_path("facts/contacts"), text)
    packet = builders.packet(
        "p-contacts",
        type="fact",
        title="Who owns the weekly job",
        description="The weekly job owner.",
        reason="Seen in CI.",
        scope={"kind": "repo"},
        timestamp="2026-07-06T00:00:00Z",
        proposal={"action": "create", "proposed_by": "agent", "proposed_at": "2026-07-06T00:00:00Z", "reason": "CI"},
        sensitivity="repo-safe",
        content_class="general_repo_knowledge",
        body=body.replace("nightly", "weekly"),
    )
    builders.write(root, builders.packet_path("p-contacts"), packet)
    return root


def _run(capsys, root: Path, *argv: str) -> tuple[int, str]:
    capsys.readouterr()
    code = main([*argv, "--root", str(root)])
    out = capsys.readouterr()
    return code, out.out + out.err


def test_the_detectors_flag_every_canary(project, canaries):
    for rel in (builders.record_path("facts/contacts"), builders.packet_path("p-contacts")):
        found = [f for f in analyze_path(project / rel).findings if f.code == "private_personal_data"]
        assert len(found) == len(canaries), rel


def test_the_index_database_holds_no_canary(project, capsys, canaries):
    home = Path(project.parent / "home")
    assert _run(capsys, project, "rebuild")[0] == 0
    _run(capsys, project, "search", WORD)
    stores = sorted(home.rglob("memzoi-lsp-store.db*"))
    assert any(p.name == "memzoi-lsp-store.db" for p in stores)
    for p in stores:
        assert _found(p.read_bytes(), canaries) == [], p.name
    db = next(p for p in stores if p.name == "memzoi-lsp-store.db")
    conn = sqlite3.connect(db)
    try:
        dump = "\n".join(conn.iterdump())
        bodies = [r[0] for r in conn.execute("SELECT body FROM records WHERE title = 'Who owns the nightly job'")]
    finally:
        conn.close()
    assert _found(dump, canaries) == []
    assert len(bodies) == 1 and bodies[0].count(MARK) == 3 and WORD in bodies[0]
    # nothing else under the runtime home (ledger, caches) holds one either
    leaked = {p.name: _found(p.read_bytes(), canaries) for p in home.rglob("*") if p.is_file()}
    assert {k: v for k, v in leaked.items() if v} == {}


def test_search_shows_the_record_redacted(project, capsys, canaries):
    code, out = _run(capsys, project, "search", WORD, "--json")
    assert code == 0 and _found(out, canaries) == []
    ids = [h["id"] for h in json.loads(out)["records"]]
    assert "facts/contacts" in ids and MARK in out
    code, out = _run(capsys, project, "search", WORD)
    assert code == 0 and _found(out, canaries) == [] and "facts/contacts" in out


def test_proposals_show_redacts_the_packet(project, capsys, canaries):
    assert _run(capsys, project, "rebuild")[0] == 0
    code, out = _run(capsys, project, "proposals", "show", "p-contacts", "--json")
    assert code == 0 and _found(out, canaries) == []
    body = json.loads(out)["body"]
    assert body.count(MARK) == 3 and WORD in body
    code, out = _run(capsys, project, "proposals", "show", "p-contacts")
    assert code == 0 and _found(out, canaries) == [] and MARK in out


def test_mcp_answers_redact(project, canaries):
    session = tools.Session(project, "agent", tools.RateLimit(50))
    res = tools.call(session, "search_memory", {"query": WORD})
    assert not res.is_error
    assert _found(res.text, canaries) == [] and _found(json.dumps(res.data), canaries) == []
    ids = [h["id"] for h in res.data["results"]]
    assert "facts/contacts" in ids and MARK in res.text + json.dumps(res.data)
    res = tools.call(session, "get_memory", {"id": "facts/contacts"})
    shown = res.text + json.dumps(res.data)
    assert not res.is_error and _found(shown, canaries) == [] and WORD in shown and MARK in shown


def test_a_hover_value_is_scrubbed(canaries):
    """:func:`scrub` (hovers, messages, echoed queries) masks an address or number as it masks a credential."""
    for value in canaries.values():
        assert scrub(f"owner: {value} today") == f"owner: {MARK} today"


# -- the private local plane --------------------------------------------------------------------------------------


def _ssn() -> str:
    return f"{100 + secrets.randbelow(565)}-{10 + secrets.randbelow(90)}-{1000 + secrets.randbelow(9000)}"


def test_local_plane_keeps_contacts_and_refuses_identifiers_saying_which(project, capsys, canaries):
    """An e-mail address or phone number may be kept in private local memory (Memzoi routes
    ``private_personal_data`` there); an SSN is refused by ``local add`` and ``checkpoint add`` with a message that
    names the kind refused, says local memory refuses it too, and repeats nothing."""
    email = canaries["e-mail"]
    code, out = _run(capsys, project, "local", "add", "--title", "On-call", "--body", f"Mail {email}.", "--json")
    assert code == 0, out
    code, out = _run(capsys, project, "local", "list", "--json")
    assert code == 0 and [r["id"] for r in json.loads(out)["records"]] == ["on-call"]
    code, out = _run(capsys, project, "checkpoint", "add", "--task", "Rota", "--note", f"Call {canaries['uk phone']}")
    assert code == 0, out
    ssn = _ssn()
    for argv in (
        ["local", "add", "--title", "HR", "--body", f"SSN {ssn} on file."],
        ["checkpoint", "add", "--task", "HR", "--note", f"SSN {ssn} on file."],
    ):
        code, msg = _run(capsys, project, *argv)
        assert code == 1 and "pii_detected" in msg and ssn not in msg
        assert "personal identifier (an SSN" in msg and "not even private local memory" in msg
        assert "e-mail address or phone number may stay in local memory" in msg
        assert "credential" not in msg  # names only what was found


def test_local_refusal_of_a_credential_names_a_credential(project, capsys):
    token = (
        "gh"
        + "p_"
        + "".join(secrets.choice("ABCDEFGHJKMNPQRSTVWXYZabcdefghjkmnpqrstvwxyz0123456789") for _ in range(36))
    )
    code, out = _run(capsys, project, "local", "add", "--title", "CI", "--body", f"use {token}", "--json")
    err = json.loads(out)["error"]
    assert code == 1 and err["code"] == "credential_token" and token not in out
    assert "a credential or secret value (credential_token)" in err["message"]
    assert "personal identifier" not in err["message"]
