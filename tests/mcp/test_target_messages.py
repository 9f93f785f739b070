"""``propose_memory`` names what is wrong with a target or a confidence, through the official SDK's stdio client.

A supersede of another project's record by absolute path said ``target_missing`` with a doubled path and
``.md.md`` where the tombstone of the same path said ``outside_project``; a target spelt ``./id`` was written into a
packet as it is (a supersede: a packet that can never apply) or refused in ~500 characters about a packet file
name (a tombstone); a confidence of ``1e309`` (Infinity, which the client sends as ``null``) or the text ``"NaN"``
was refused as a missing confidence or by the bound it failed. Nothing is written in any of these cases.
"""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings, strategies as st

from .conftest import FACT_ID, draft_args, make_project
from .test_stdio_e2e import PENDING, connect


def _text(res) -> str:
    return "\n".join(getattr(c, "text", "") for c in res.content)


def _supersede(target: str) -> dict:
    return draft_args(action="supersede", target=target, title="The build uses uv", body="Run uv build.")


async def test_a_target_in_another_project_is_outside_it_for_supersede_as_for_tombstone(project, home, tmp_path):
    other = make_project(tmp_path / "other").resolve()
    path = str(other / ".memzoi" / "records" / f"{FACT_ID}.md")
    async with connect(project, home) as s:
        for args in (_supersede(path), {"action": "tombstone", "target": path, "reason": "other project"}):
            res = await s.call_tool("propose_memory", args)
            text = _text(res)
            assert res.is_error and text.startswith("outside_project:"), text
            assert ".md.md" not in text and "records//" not in text
        # the record's own path in this project names it: the packet carries its id
        mine = str(project / ".memzoi" / "records" / f"{FACT_ID}.md")
        made = await s.call_tool("propose_memory", _supersede(mine))
        assert not made.is_error, _text(made)
        packet = (project / made.structured_content["path"]).read_text(encoding="utf-8")
        assert f"supersedes:\n  - {FACT_ID}\n" in packet and str(project) not in packet
    assert not list((other / PENDING).iterdir())


async def test_a_target_spelt_as_a_path_is_named_briefly_and_nothing_is_written(project, home):
    async with connect(project, home) as s:
        for target in (f"./{FACT_ID}", f"../{FACT_ID}", f"facts/./{FACT_ID.split('/')[1]}", f"/{FACT_ID}"):
            for args in (_supersede(target), {"action": "tombstone", "target": target, "reason": "dot slash"}):
                res = await s.call_tool("propose_memory", args)
                text = _text(res)
                assert res.is_error and text.startswith("not_a_record: `target` is not a record id"), text
                assert len(text) < 250 and "packet" not in text and "rename the file" not in text, text
    assert not list((project / PENDING).iterdir())


async def test_a_confidence_that_is_not_a_finite_number_from_0_to_1_is_named_as_such(project, home):
    async with connect(project, home) as s:
        for value in (1e309, float("-inf"), "NaN", "Infinity", 1.5):
            res = await s.call_tool("propose_memory", draft_args(confidence=value))
            text = _text(res)
            assert res.is_error and "confidence must be a finite number between 0 and 1" in text, (value, text)
            assert "needs confidence" not in text and "less than or equal" not in text
        assert not (await s.call_tool("propose_memory", draft_args(confidence="0.8"))).is_error  # JSON text of one


@settings(max_examples=200, deadline=None)
@given(st.one_of(st.floats(), st.integers(-3, 3), st.text(max_size=8)))
def test_a_confidence_is_taken_only_as_a_finite_number_from_0_to_1(value):
    from pydantic import ValidationError

    from memzoi.agent.arguments import CONFIDENCE_RULE, ProposeArgs

    args = {"title": "t", "body": "b", "type": "fact", "lane": "semantic", "reason": "r", "confidence": value}
    fits = not isinstance(value, str) and math.isfinite(value) and 0 <= value <= 1
    try:
        ProposeArgs.model_validate(args)
    except ValidationError as err:
        assert not fits and CONFIDENCE_RULE in str(err), (value, str(err))
    else:
        assert fits, value


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.sampled_from(["facts", "build-tool", ".", "..", ""]), min_size=1, max_size=4).filter(
        lambda parts: {"", ".", ".."} & set(parts)
    )
)
def test_an_id_with_an_empty_dot_or_dot_dot_segment_is_not_a_record(tmp_path_factory, parts):
    from memzoi.ledger import Refusal
    from memzoi.lifecycle.common import record_ref

    ref = "/".join(parts)
    if ref.endswith(".md"):
        return
    messages = []
    for each in (ref, "./x"):
        with pytest.raises(Refusal) as info:
            record_ref(tmp_path_factory.getbasetemp(), each, what="`target`")
        assert info.value.code == "not_a_record"
        messages.append(info.value.message)
    assert messages[0] == messages[1]  # the value is never repeated: a path may be anything
