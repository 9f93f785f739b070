"""A record ``memzoi check`` refuses now is not handed to an agent as usable memory, and no answer carries an
unbounded text: ``get_memory`` withholds it (reasons, no title or text), ``search_memory`` lists it apart as
withheld, and what any answer returns of a text stops at :data:`memzoi.agent.bounds.BODY_CAP`. Driven through the
official SDK's stdio client, as an agent reads them."""

from __future__ import annotations

import json

from hypothesis import given, strategies as st

from memzoi.agent import tools
from memzoi.agent.bounds import BODY_CAP, cut

from .conftest import FACT_ID, write_record
from .test_stdio_e2e import connect

TOKEN_ID = "decisions/deploy-token"
HUGE_ID = "facts/huge-rec"
LONG_ID = "facts/long-rec"


def _token() -> str:
    return "ghp_" + "Zq7Xw2Vb9Nm4Lk6Jh8Gf1" + "Dd3Ss5Aa7Pp9Oo1"  # assembled at run time, never printed


def _size(res) -> int:
    """The characters one tool result carries: its text and its structured copy."""
    return sum(len(getattr(c, "text", "")) for c in res.content) + len(json.dumps(res.structured_content))


def _text(res) -> str:
    return "\n".join(getattr(c, "text", "") for c in res.content)


def _plant_token(project) -> None:
    write_record(
        project,
        TOKEN_ID,
        type="decision",
        title="Deploy token attestation",
        body=f"Use token {_token()} for deploys from the release pipeline.",
        applies="deploy",
    )


async def test_a_record_with_a_token_is_withheld_from_get_and_search(project, home):
    _plant_token(project)
    async with connect(project, home) as s:
        got = await s.call_tool("get_memory", {"id": TOKEN_ID})
        text, data = _text(got), got.structured_content
        assert not got.is_error
        assert text.startswith("WITHHELD: record decisions/deploy-token is not usable memory (credential_token)")
        assert "memzoi check .memzoi/records/decisions/deploy-token.md" in text
        assert data["withheld"] is True and "credential_token" in data["reasons"] and data["unsafe"]
        assert "release pipeline" not in text + json.dumps(data) and "attestation" not in data["title"]
        asked = await s.call_tool("get_memory", {"id": TOKEN_ID, "include_unsafe": True})
        assert _text(asked).startswith("REFUSED (credential_token;") and "release pipeline" in _text(asked)
        found = await s.call_tool("search_memory", {"query": "deploy token release pipeline"})
        rows = _text(found).splitlines()
        assert not any(r.startswith(f"- {TOKEN_ID}") for r in rows)
        assert rows[-1].startswith("Withheld, not usable memory") and f"{TOKEN_ID} (credential_token)" in rows[-1]
        (hit,) = [h for h in found.structured_content["results"] if h["id"] == TOKEN_ID]
        assert hit["reasons"] == ["credential_token"] and hit["excerpt"] is None
        plain = await s.call_tool("get_memory", {"id": FACT_ID})  # an ordinary record: as before
        assert not plain.is_error and not plain.structured_content.get("withheld")
        assert plain.structured_content["reasons"] == [] and "hatch build" in _text(plain)
        assert _text(plain).startswith(f"record {FACT_ID}: The build uses hatch")
    assert _token() not in text + _text(asked) + _text(found)


async def test_a_record_over_the_size_limit_is_withheld_and_the_answer_is_bounded(project, home):
    write_record(project, HUGE_ID, type="fact", title="Huge", body="filler words here\n" * 60_000, applies="x")
    async with connect(project, home) as s:
        got = await s.call_tool("get_memory", {"id": HUGE_ID})
        assert not got.is_error and got.structured_content["withheld"] is True
        assert got.structured_content["reasons"] and _text(got).startswith("WITHHELD: record facts/huge-rec")
        assert _size(got) < BODY_CAP  # the 1 MB text is not in it at all
        assert "filler" not in _text(got) + json.dumps(got.structured_content)


async def test_a_usable_text_over_the_cap_is_cut(project, home):
    write_record(project, LONG_ID, type="fact", title="Long", body="a long line\n" * 30_000, applies="x")  # 360 KB
    async with connect(project, home) as s:
        got = await s.call_tool("get_memory", {"id": LONG_ID})
        data = got.structured_content
        assert not got.is_error and not data.get("withheld") and data["reasons"] == []
        assert data["truncated"] is True and data["body_bytes"] > BODY_CAP >= len(data["body"].encode())
        assert ".memzoi/records/facts/long-rec.md" in data["rest"] and _text(got).endswith("]")
        assert len(_text(got).encode()) < BODY_CAP + 4096  # the structured copy holds the same cut text


@given(st.text(alphabet=st.characters(codec="utf-8"), max_size=64), st.integers(min_value=1, max_value=40))
def test_cut_keeps_whole_characters_under_the_cap(text, cap):
    got, size = cut(text, cap)
    raw = text.encode("utf-8")
    assert text.startswith(got) and len(got.encode("utf-8")) <= cap
    assert (size, got) == ((None, text) if len(raw) <= cap else (len(raw), got))
    assert size is None or len(got.encode("utf-8")) > cap - 4  # no more than one character is dropped


def test_packs_and_prechecks_name_what_they_withheld_and_why(project, home):
    write_record(
        project,
        "warnings/deploy-key",
        type="warning",
        title="Deploy key for the auth service",
        body=f"Sign auth releases with {_token()} only.",
        applies="src/auth",
    )
    session = tools.Session(project, "test-agent", tools.RateLimit(5))
    texts = [
        tools.call(session, "precheck_path", {"path": "src/auth/a.ts"}).text,
        tools.call(session, "build_context_pack", {"task": "sign auth releases", "paths": ["src/auth/a.ts"]}).text,
    ]
    for text in texts:
        last = text.splitlines()[-1]
        assert last.startswith("Withheld, not usable memory") and "warnings/deploy-key (credential_token)" in last
        assert _token() not in text and "Sign auth releases" not in text


def test_a_symlinked_record_is_withheld_not_unknown(project, tmp_path):
    """A record file that is a symlink (or lies in a symlinked folder) is refused by ``memzoi check``
    (``canonical_path``) and never indexed: ``get_memory`` of its id says it is withheld (``canonical-path``), as
    for any refused record, never ``not_found``, and reads nothing through the link, ``include_unsafe`` or not."""
    outside = tmp_path / "outside"
    outside.mkdir()
    target = write_record(outside, "facts/linked", type="fact", title="Linked", body="Secretive text.", applies="x")
    (project / ".memzoi/records/facts/linked.md").symlink_to(target)
    (project / ".memzoi/records/via").symlink_to(target.parent)
    session = tools.Session(project, "agent", tools.RateLimit(50))
    for rid in ("facts/linked", "via/linked"):
        for unsafe in (False, True):
            res = tools.call(session, "get_memory", {"id": rid, "include_unsafe": unsafe})
            assert not res.is_error, res.text
            assert res.data.get("withheld", False) is (not unsafe) and res.data["reasons"] == ["canonical-path"]
            assert "Secretive" not in res.text and "Secretive" not in json.dumps(res.data)
            assert res.text.startswith(("WITHHELD", "REFUSED")), res.text
    assert tools.call(session, "get_memory", {"id": "facts/no-such"}).is_error
