"""MCP tool arguments and records holding every escape YAML allows (issue 30): each tool answers (a result or a
named error, never ``internal_error``) with a result the protocol can send, over a project holding records whose
references and titles decode to lone surrogates; ``search_memory`` and ``precheck_path`` over such a project
work end to end through the SDK client."""

from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from memzoi.agent import tools

from .. import builders, escapes
from .conftest import FACT_ID, draft_args
from .test_stdio_e2e import connect

pieces = st.lists(st.tuples(st.integers(0, 4), st.integers(0, 200)), min_size=1, max_size=5)

#: tool → a function of one decoded string giving its arguments (the string in each string argument in turn).
CALLS = {
    "search_memory": lambda v: [{"query": v}],
    "get_memory": lambda v: [{"id": v}],
    "precheck_path": lambda v: [{"path": v}],
    "build_context_pack": lambda v: [{"task": v, "paths": ["src/auth"]}, {"task": "t", "paths": [v]}],
    "list_pending": lambda v: [{}],
    "propose_memory": lambda v: [
        draft_args(title=v),
        draft_args(body=v),
        draft_args(reason=v),
        draft_args(applies_to=[v]),
    ],
    "propose_resident_memory": lambda v: [
        {"scope": "project", "action": "add", "content": v, "reason": "r", "confidence": 0.5},
        {"scope": "project", "action": "remove", "old_text": v, "reason": "r", "confidence": 0.5},
    ],
}


def _escaped_records(root) -> None:
    for i, field in enumerate([("supersedes",), ("title",), ("tags", 0), ("applies_to", 0), ("proposal_id",)]):
        rel, text = escapes.escaped_file("record", field, [(3, 0), (0, 1)], rid=f"escaped-{i}")
        builders.write(root, rel, text)
    rel, text = escapes.escaped_file("supersede", ("proposal", "target"), [(3, 3)], rid="escaped-packet")
    builders.write(root, rel, text)


def _sendable(result: tools.ToolResult) -> None:
    json.dumps(result.data, ensure_ascii=False).encode("utf-8")
    result.text.encode("utf-8")


@pytest.fixture
def escaped_project(project):
    _escaped_records(project)
    return project


@settings(
    max_examples=60,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(st.sampled_from(sorted(CALLS)), pieces)
def test_every_tool_answers_escaped_arguments(escaped_project, name, pieces_):
    value = escapes.decoded(pieces_)
    session = tools.Session(escaped_project, "escape-agent", tools.RateLimit(10_000))
    for arguments in CALLS[name](value):
        result = tools.call(session, name, arguments)
        _sendable(result)
        if result.is_error:
            assert result.data["error"]["code"] != "internal_error", (name, result.text)


async def test_search_and_precheck_over_escaped_records_end_to_end(escaped_project, home):
    async with connect(escaped_project, home) as s:
        found = await s.call_tool("search_memory", {"query": "Body"})
        assert not found.is_error, found.content[0].text
        assert len(found.structured_content["results"]) >= 2
        pre = await s.call_tool("precheck_path", {"path": "src/auth/session.ts"})
        assert not pre.is_error, pre.content[0].text
        got = await s.call_tool("get_memory", {"id": FACT_ID})
        assert not got.is_error, got.content[0].text
        for arguments in (
            {"query": escapes.decoded([(1, 10), (3, 12), (3, 16), (0, 0)])},
            {"query": escapes.decoded([(2, 5), (4, 20), (1, 14)])},
        ):
            res = await s.call_tool("search_memory", arguments)
            assert not res.is_error or res.structured_content["error"]["code"] != "internal_error"


@pytest.mark.parametrize("where", ["inside", "outside", "relative"])
def test_a_path_with_a_nul_byte_is_answered_not_a_crash(project, where):
    """A path a client sends with a NUL byte names no file: it is refused or matches nothing, never an
    ``internal_error`` (``os.path.realpath`` raises ``ValueError`` on it)."""
    value = {"inside": f"{project}/src/a\0b", "outside": "/elsewhere/a\0b", "relative": "src/a\0b"}[where]
    session = tools.Session(project, "nul-agent", tools.RateLimit(10_000))
    for name in ("build_context_pack", "precheck_path", "search_memory"):
        for arguments in CALLS[name](value):
            result = tools.call(session, name, arguments)
            _sendable(result)
            assert not result.is_error or result.data["error"]["code"] != "internal_error", (name, result.text)
