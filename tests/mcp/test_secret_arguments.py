"""A caller's secret given to ``memzoi-mcp`` is neither stored nor echoed: driven through the SDK's stdio client, with
canaries built at run time (:mod:`tests.canaries`)."""

from __future__ import annotations

import json

from ..canaries import assert_not_in, assert_not_stored, canary
from .test_stdio_e2e import connect


def said(result) -> str:
    """Everything a tool call returned: its text and its structured content."""
    return "".join(getattr(c, "text", "") for c in result.content) + json.dumps(result.structured_content)


async def test_record_resident_turn_refuses_secret_ids_and_stores_nothing(project, home):
    secret = canary()
    async with connect(project, home) as s:
        ok = await s.call_tool("record_resident_turn", {"session_id": "sess-1", "message_id": "msg_1"})
        bad_session = await s.call_tool("record_resident_turn", {"session_id": secret, "message_id": "msg_2"})
        bad_message = await s.call_tool("record_resident_turn", {"session_id": "sess-1", "message_id": "m" + secret})
    assert not ok.is_error
    for result in (bad_session, bad_message):
        assert result.is_error and result.structured_content["error"]["code"] == "threat_blocked"
        assert_not_in(said(result), secret)
    assert assert_not_stored(home, secret) >= 1
