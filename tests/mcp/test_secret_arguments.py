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


def _pem() -> str:
    """A private-key block built at run time (random body)."""
    import base64
    import secrets

    body = base64.b64encode(secrets.token_bytes(240)).decode()
    lines = [body[i : i + 64] for i in range(0, len(body), 64)]
    kind = "RSA PRIVATE" + " KEY"
    return f"-----BEGIN {kind}-----\n" + "\n".join(lines) + f"\n-----END {kind}-----"


async def test_read_tools_echo_no_secret_argument(project, home):
    secret, pem = canary(), _pem()
    calls = [
        ("get_memory", {"id": f"facts/{secret}"}),
        ("inspect_memory_expiry", {"record_id": secret}),
        ("plan_maintenance", {"record_ids": [pem]}),
        ("search_memory", {"query": f"refresh {secret}"}),
        ("precheck_path", {"path": f"src/{secret}.py"}),
        ("build_context_pack", {"task": f"fix the token {secret}", "paths": [f"src/{secret}"]}),
    ]
    async with connect(project, home) as s:
        results = [await s.call_tool(name, args) for name, args in calls]
    for (name, _), result in zip(calls, results, strict=True):
        text = said(result)
        assert_not_in(text, secret, pem, what=name)
        assert "[redacted]" in text, name  # the argument was echoed, redacted
